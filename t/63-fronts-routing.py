#!/usr/bin/python3
# 63-fronts-routing: one routing rule for every front. nginx, Apache
# mod_proxy_fcgi and Apache mod_fcgid (through the relay) fill SCRIPT_NAME,
# PATH_INFO and SCRIPT_FILENAME differently; the server routes on REQUEST_URI
# with the query split off, so the same URL — with a query string, encoded
# characters, a trailing or doubled slash — gets the same answer behind each
# of the three, all in front of one server.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import apache   # noqa: E402
import cdm   # noqa: E402
import tap   # noqa: E402


def answer(front, method, path, token, body=None):
    r = front.request(method, path, token=token, body=body)
    code = (r.json or {}).get('error', {}).get('code') if isinstance(r.json, dict) else None
    return r.status, code


def check(fronts, tok, u, cid):
    urls = [
        ('GET', '/api/health', None),
        ('GET', '/api/health?verbose=1&x=%20y', None),
        ('GET', '/api/health/', None),
        ('GET', '/api/auth/me', tok),
        ('GET', '/api/auth/me?', tok),
        ('GET', '/api/auth/me/', tok),
        ('GET', '/api//auth/me', tok),
        ('GET', '/api/auth/me%3Fx=1', tok),
        ('GET', '/api/auth/me', None),
        ('GET', '/api/conversations', u.token),
        ('GET', '/api/conversations?limit=1', u.token),
        ('GET', '/api/conversations/', u.token),
        ('GET', '/api/conversations/%s' % cid, u.token),
        ('GET', '/api/conversations/%s?x=y&z&a=%%2F' % cid, u.token),
        ('GET', '/api/conversations/%s/' % cid, u.token),
        ('GET', '/api/conversations/%s%%2Fmessages' % cid, u.token),
        ('GET', '/api/conversations/%s/messages' % cid, u.token),
        ('GET', '/api/conversations/%s/messages?after=0' % cid, u.token),
        ('GET', '/api/conversations/%%41%s' % cid[1:], u.token),
        ('GET', '/api/conversations/%s' % cdm.random_id(), u.token),
        ('GET', '/api/conversations/%C3%A9t%C3%A9', u.token),
        ('GET', '/api/../api/health', None),
        ('GET', '/api/nope', u.token),
        ('GET', '/api/nope', None),
        ('DELETE', '/api/health', None),
        ('PUT', '/api/conversations', u.token),
        ('POST', '/api/auth/login?next=/x', None),
    ]
    for method, path, token in urls:
        body = {'username': 'router', 'password': 'wrong'} if path.startswith('/api/auth/login') else None
        got = {name: answer(f, method, path, token, body) for name, f in fronts.items()}
        same = len(set(got.values())) == 1
        tap.ok(same, '%s %s%s: %s behind every front' % (
            method, path, '' if token else ' (no token)', got['nginx'])) or tap.diag(repr(got))


with cdm.Stack() as s:
    tok = s.admin_token()
    u = s.new_user('router')
    cid = s.create_conversation(u.token, 'routed')
    fronts = {'nginx': s}
    started = []
    try:
        for module in ('proxy_fcgi', 'fcgid'):
            started.append(apache.Front(s, module))
            started[-1].start()
            fronts[module] = apache.Via(s, started[-1].port)
        check(fronts, tok, u, cid)
    finally:
        for f in started:
            f.stop()
tap.done()
