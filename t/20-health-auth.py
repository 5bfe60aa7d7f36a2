#!/usr/bin/python3
# 20-health-auth: GET /api/health needs no token; login, /api/auth/me; every
# other route refuses a missing or forged token with 401 and
# WWW-Authenticate: Bearer; repeated failed logins lock a name out (429).
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import jwt_encode, jwt_decode, random_id, is_error, is_401   # noqa: E402

with cdm.Stack(config={'auth.login_max_failures': 3,
                       'auth.login_lockout_seconds': 60}) as s:
    # -- health, no token
    r = s.request('GET', '/api/health')
    tap.is_(r.status, 200, 'GET /api/health without a token: 200')
    h = r.json or {}
    tap.is_(h.get('status'), 'ok', 'health: status ok')
    tap.is_(h.get('version'), cdm.package_version(), 'health: version is the package version')
    sb = h.get('sandbox')
    tap.ok(isinstance(sb, dict) and isinstance(sb.get('available'), bool),
           'health: sandbox {available: bool}') or tap.diag(repr(h))
    tap.ok(isinstance(sb, dict) and (sb.get('available') or isinstance(sb.get('reason'), str)),
           'health: sandbox says why when unavailable')

    # -- login
    admin = s.admin()
    s.add_user('alice', 'alice-pw-1')
    r = s.request('POST', '/api/auth/login', body={'username': 'alice', 'password': 'alice-pw-1'})
    tap.is_(r.status, 200, 'login: 200')
    j = r.json or {}
    tap.ok(isinstance(j.get('token'), str) and j['token'].count('.') == 2, 'login: a JWT token')
    tap.like(j.get('expires_at'), r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$',
             'login: expires_at is RFC 3339 UTC')
    u = j.get('user') or {}
    tap.ok({'id', 'username', 'is_admin'} <= set(u), 'login: user {id, username, is_admin}') \
        or tap.diag(repr(j))
    tap.is_((u.get('username'), u.get('is_admin')), ('alice', False), 'login: user is alice, not admin')
    alice_tok, alice_id = j.get('token'), u.get('id')

    r = s.request('GET', '/api/auth/me', token=alice_tok)
    tap.is_(r.status, 200, '/api/auth/me: 200')
    me = r.json or {}
    tap.is_((me.get('id'), me.get('username'), me.get('is_admin')), (alice_id, 'alice', False),
            '/api/auth/me: {id, username, is_admin} of the caller')
    r = s.request('GET', '/api/auth/me', token=admin.token)
    tap.is_((r.json or {}).get('is_admin'), True, '/api/auth/me: admin is_admin true')

    # -- wrong password and unknown user look the same
    wrong = s.request('POST', '/api/auth/login', body={'username': 'alice', 'password': 'nope'})
    unknown = s.request('POST', '/api/auth/login', body={'username': 'nobody-' + random_id(), 'password': 'nope'})
    is_error(wrong, 401, 'unauthorized', 'login, wrong password')
    is_error(unknown, 401, 'unauthorized', 'login, unknown user')
    tap.is_(wrong.body, unknown.body, 'wrong password and unknown user: identical bodies')

    # -- every route wants a token
    cid, other = random_id(), random_id()
    routes = [
        ('GET', '/api/auth/me', None),
        ('POST', '/api/users', {'username': 'x', 'password': 'y'}),
        ('GET', '/api/conversations', None),
        ('POST', '/api/conversations', {'title': 't'}),
        ('GET', '/api/conversations/' + cid, None),
        ('PATCH', '/api/conversations/' + cid, {'title': 't'}),
        ('DELETE', '/api/conversations/' + cid, None),
        ('GET', '/api/conversations/%s/messages' % cid, None),
        ('POST', '/api/conversations/%s/messages' % cid, {'content': 'hi'}),
        ('POST', '/api/conversations/%s/turns/%s/cancel' % (cid, other), None),
        ('POST', '/api/conversations/%s/approvals/%s' % (cid, other), {'decision': 'approve'}),
        ('GET', '/api/conversations/%s/events' % cid, None),
        ('GET', '/api/conversations/%s/workspace/diff' % cid, None),
        ('GET', '/api/secrets', None),
        ('PUT', '/api/secrets/foo', {'value': 'v'}),
        ('DELETE', '/api/secrets/foo', None),
        ('GET', '/api/admin/status', None),
    ]
    for method, path, body in routes:
        is_401(s.request(method, path, body=body), '%s %s without a token' % (method, path))

    # -- forged tokens. First make sure a token built here with the
    # configured secret is what the server would issue, so that each forged
    # token below is refused for its one defect.
    header, payload = jwt_decode(alice_tok)
    tap.is_(header.get('alg'), 'HS256', 'issued token: alg HS256')
    tap.is_(jwt_encode(header, payload, s.jwt_secret), alice_tok,
            'issued token: HMAC-SHA256 with auth.jwt_secret')
    now = int(time.time())
    good = dict(payload, iat=now - 10, exp=now + 600)
    r = s.request('GET', '/api/auth/me', token=jwt_encode(header, good, s.jwt_secret))
    tap.is_(r.status, 200, 'control: a well-formed token signed here is accepted')

    forged = {
        'wrong key': jwt_encode(header, good, 'not-the-secret'),
        'alg none, empty signature': jwt_encode({'alg': 'none', 'typ': 'JWT'}, good, None, alg='none'),
        'alg none header, HS256 signature': jwt_encode(dict(header, alg='none'), good, s.jwt_secret),
        'alg HS512': jwt_encode(dict(header, alg='HS512'), good, s.jwt_secret, alg='HS512'),
        'expired': jwt_encode(header, dict(good, iat=now - 7200, exp=now - 3600), s.jwt_secret),
        'tampered payload (sub changed)': '.'.join([
            alice_tok.split('.')[0],
            jwt_encode(header, dict(payload, sub=admin.id), 'x').split('.')[1],
            alice_tok.split('.')[2]]),
        'garbage': 'garbage',
        'two parts': '.'.join(alice_tok.split('.')[:2]),
        'empty signature': '.'.join(alice_tok.split('.')[:2]) + '.',
    }
    for name, tok in forged.items():
        is_401(s.request('GET', '/api/auth/me', token=tok), 'forged token, %s' % name)
    for name, value in [('"Bearer" with no token', 'Bearer'),
                        ('"Bearer " with no token', 'Bearer '),
                        ('Basic credentials', 'Basic YWxpY2U6YWxpY2UtcHctMQ=='),
                        ('token without "Bearer"', alice_tok)]:
        r = s.request('GET', '/api/auth/me', headers={'Authorization': value})
        is_401(r, 'Authorization: %s' % name)

    # -- lockout after auth.login_max_failures failures for one name
    s.add_user('victim', 'victim-pw')
    s.add_user('bystander', 'bystander-pw')
    for i in range(3):
        r = s.request('POST', '/api/auth/login', body={'username': 'victim', 'password': 'bad%d' % i})
        tap.is_(r.status, 401, 'failed login %d of 3: 401' % (i + 1))
    r = s.request('POST', '/api/auth/login', body={'username': 'victim', 'password': 'bad'})
    is_error(r, 429, 'too_many_requests', 'fourth attempt while locked')
    tap.like(r.headers.get('retry-after', ''), r'^\d+$', 'locked: Retry-After in seconds')
    r = s.request('POST', '/api/auth/login', body={'username': 'victim', 'password': 'victim-pw'})
    tap.is_(r.status, 429, 'locked: the right password is refused too')
    r = s.request('POST', '/api/auth/login', body={'username': 'bystander', 'password': 'bystander-pw'})
    tap.is_(r.status, 200, 'another name is not locked')
tap.done()
