#!/usr/bin/python3
# 50-secrets-api: the secrets routes. PUT stores a value, GET lists names,
# times and the env flag but never a value, DELETE removes it (404 when
# absent or another user's); names, values and the env flag are validated
# with a clear 400; nothing is reachable without a token.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

with cdm.Stack() as s:
    alice, bob = s.new_user('alice'), s.new_user('bob')
    value = 'ghp_' + 'Q7xv9Lm2' * 5
    other = 'sk-live-' + 'Zt4Wq8Rk' * 4

    r = s.request('PUT', '/api/secrets/GITHUB_TOKEN', body={'value': value}, token=alice.token)
    tap.is_(r.status, 204, 'PUT a secret: 204')
    tap.is_(r.body, b'', 'PUT: empty body')
    r = s.request('PUT', '/api/secrets/api.key-2', body={'value': other, 'env': False},
                  token=alice.token)
    tap.is_(r.status, 204, 'PUT with dots and dashes in the name: 204')

    r = s.request('GET', '/api/secrets', token=alice.token)
    tap.is_(r.status, 200, 'GET /api/secrets: 200')
    names = [x['name'] for x in r.json['secrets']]
    tap.is_(names, ['GITHUB_TOKEN', 'api.key-2'], 'listed by name')
    tap.ok(all(set(x) <= {'name', 'updated_at', 'env', 'error'} for x in r.json['secrets']),
           'entries carry name, updated_at, env only') or tap.diag(r.json)
    tap.like(r.json['secrets'][0]['updated_at'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$',
             'updated_at is RFC 3339 UTC')
    tap.ok(value.encode() not in r.body and other.encode() not in r.body,
           'no value in the listing')

    r = s.request('PUT', '/api/secrets/GITHUB_TOKEN', body={'value': value + 'X', 'env': True},
                  token=alice.token)
    tap.is_(r.status, 204, 'PUT again replaces: 204')
    r = s.request('GET', '/api/secrets', token=alice.token)
    tap.is_([x['env'] for x in r.json['secrets']], [True, False], 'env flag listed')

    # -- other users
    r = s.request('GET', '/api/secrets', token=bob.token)
    tap.is_(r.json, {'secrets': []}, "another user's list is empty")
    r = s.request('DELETE', '/api/secrets/GITHUB_TOKEN', token=bob.token)
    cdm.is_error(r, 404, 'not_found', "DELETE of another user's secret")
    r = s.request('GET', '/api/secrets', token=alice.token)
    tap.is_(len(r.json['secrets']), 2, "owner's secrets untouched")

    # -- validation
    for name, why in [('bad!name', 'punctuation'), ('x' * 65, '65 characters'),
                      ('sp%20ace', 'a space'), ('%C3%A9t%C3%A9', 'non-ASCII')]:
        r = s.request('PUT', '/api/secrets/' + name, body={'value': value}, token=alice.token)
        cdm.is_error(r, 400, 'bad_request', 'name with %s' % why)
    r = s.request('PUT', '/api/secrets/' + 'x' * 64, body={'value': value}, token=alice.token)
    tap.is_(r.status, 204, '64-character name accepted')
    s.request('DELETE', '/api/secrets/' + 'x' * 64, token=alice.token)
    for body, why in [({}, 'no value'), ({'value': 5}, 'a number'), ({'value': ''}, 'empty'),
                      ({'value': 'a\u0000b' * 4}, 'a NUL'),
                      ({'value': 'v' * 65537}, 'over 64 KiB'),
                      ({'value': value, 'env': 'yes'}, 'env not a bool'),
                      ({'value': value, 'env': True}, None)]:
        if why is None:
            r = s.request('PUT', '/api/secrets/api.key-2', body=body, token=alice.token)
            cdm.is_error(r, 400, 'bad_request', 'env: true needs a variable name')
            continue
        r = s.request('PUT', '/api/secrets/NEWONE', body=body, token=alice.token)
        cdm.is_error(r, 400, 'bad_request', 'value: %s' % why)
    r = s.request('PUT', '/api/secrets/LD_PRELOAD', body={'value': value, 'env': True},
                  token=alice.token)
    cdm.is_error(r, 400, 'bad_request', 'env: true refuses LD_* names')
    r = s.request('PUT', '/api/secrets/PIN', body={'value': '1234567', 'env': True},
                  token=alice.token)
    cdm.is_error(r, 400, 'bad_request', 'env: true refuses a value under 8 bytes')
    r = s.request('PUT', '/api/secrets/PIN', body={'value': '1234567'}, token=alice.token)
    tap.is_(r.status, 204, 'a short value without env is stored')
    r = s.request('PUT', '/api/secrets/NEWONE', raw='{"value":', token=alice.token)
    cdm.is_error(r, 400, 'bad_request', 'malformed JSON')
    r = s.request('GET', '/api/secrets', token=alice.token)
    tap.is_([x['name'] for x in r.json['secrets']], ['GITHUB_TOKEN', 'PIN', 'api.key-2'],
            'failed PUTs stored nothing')

    # -- delete
    r = s.request('DELETE', '/api/secrets/PIN', token=alice.token)
    tap.is_(r.status, 204, 'DELETE: 204')
    r = s.request('DELETE', '/api/secrets/PIN', token=alice.token)
    cdm.is_error(r, 404, 'not_found', 'DELETE again')
    r = s.request('DELETE', '/api/secrets/bad!name', token=alice.token)
    cdm.is_error(r, 404, 'not_found', 'DELETE of an invalid name')

    # -- authentication and methods
    cdm.is_401(s.request('GET', '/api/secrets'), 'GET without a token')
    cdm.is_401(s.request('PUT', '/api/secrets/X', body={'value': value}), 'PUT without a token')
    cdm.is_401(s.request('DELETE', '/api/secrets/GITHUB_TOKEN'), 'DELETE without a token')
    r = s.request('GET', '/api/secrets/GITHUB_TOKEN', token=alice.token)
    cdm.is_error(r, 405, 'method_not_allowed', 'GET of one secret: there is no such read')
    tap.ok(value.encode() not in r.body, '... and no value in it')

    log = s.server_log() + s.server_output()
    tap.ok(value not in log and other not in log, 'no value in the server log')

tap.done()
