#!/usr/bin/python3
# 53-profiles: a user's own model profiles. PUT stores one (its API key
# sealed like a secret), GET lists them with has_api_key but never the key,
# an absent api_key keeps the stored one and null removes it, DELETE
# removes (404 when absent or another user's); bad bodies get a clear 400;
# the key is never in the database files or the log.
import os
import sqlite3
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

KEY = 'sk-' + 'Mn4Bv7Cx' * 5

# Users may only name endpoints the operator allows (llm.user_base_urls).
ALLOWED = 'https://llm.example.test/, http://127.0.0.1:9/, http://x'

with cdm.Stack(config={'llm.user_base_urls': ALLOWED}) as s:
    alice, bob = s.new_user('alice'), s.new_user('bob')
    body = {'base_url': 'https://llm.example.test/v1', 'model': 'big-model', 'api_key': KEY,
            'context_window': 65536, 'max_output_tokens': 2048, 'temperature': 0.5}
    r = s.request('PUT', '/api/profiles/work', body=body, token=alice.token)
    tap.is_(r.status, 204, 'PUT a profile: 204')
    r = s.request('GET', '/api/profiles', token=alice.token)
    tap.is_(r.status, 200, 'GET /api/profiles: 200')
    p = r.json['profiles'][0]
    tap.is_({k: p[k] for k in ('name', 'base_url', 'model', 'context_window', 'max_output_tokens',
                               'temperature', 'has_api_key')},
            {'name': 'work', 'base_url': body['base_url'], 'model': 'big-model',
             'context_window': 65536, 'max_output_tokens': 2048, 'temperature': 0.5,
             'has_api_key': True}, 'listed with has_api_key, as stored')
    tap.ok(KEY.encode() not in r.body and 'api_key' not in p, 'never the key')

    r = s.request('PUT', '/api/profiles/work', body={'base_url': 'http://127.0.0.1:9/v1', 'model': 'm2'},
                  token=alice.token)
    tap.is_(r.status, 204, 'PUT without api_key')
    p = s.request('GET', '/api/profiles', token=alice.token).json['profiles'][0]
    tap.is_((p['model'], p['has_api_key'], p['context_window']), ('m2', True, 32768),
            '... keeps the key, defaults the rest')
    db = sqlite3.connect(s.db_path(), timeout=30)
    row = db.execute("SELECT scheme, key_id FROM sealed_values WHERE kind = 'profile'").fetchone()
    db.close()
    tap.ok(row and row[0] == 'xchacha20poly1305' and len(row[1]) == 16, 'the key is sealed in the store')
    data = b''.join(open(s.db_path() + x, 'rb').read() for x in ('', '-wal') if os.path.exists(s.db_path() + x))
    tap.ok(KEY.encode() not in data, 'no key in the database files')

    r = s.request('PUT', '/api/profiles/work', body={'base_url': 'http://127.0.0.1:9/v1', 'model': 'm2',
                                                     'api_key': None}, token=alice.token)
    p = s.request('GET', '/api/profiles', token=alice.token).json['profiles'][0]
    tap.is_(p['has_api_key'], False, 'api_key: null removes the key')

    tap.is_(s.request('GET', '/api/profiles', token=bob.token).json, {'profiles': []},
            "another user's list is empty")
    cdm.is_error(s.request('DELETE', '/api/profiles/work', token=bob.token), 404, 'not_found',
                 "DELETE of another user's profile")

    for b, why in [({'model': 'm'}, 'no base_url'), ({'base_url': 'ftp://x', 'model': 'm'}, 'not http'),
                   ({'base_url': 'http://x', 'model': 5}, 'model not a string'),
                   ({'base_url': 'http://x', 'model': 'm', 'temperature': 3}, 'temperature over 2'),
                   ({'base_url': 'http://x', 'model': 'm', 'context_window': 1.5}, 'fractional window'),
                   ({'base_url': 'http://x', 'model': 'm', 'api_key': 'a b'}, 'key with a space'),
                   ({'base_url': 'http://x', 'model': 'm', 'api_key': 'k\r\nX-Evil: 1'}, 'key with CRLF'),
                   ({'base_url': 'http://x', 'model': 'm', 'api_key': 7}, 'key not a string')]:
        cdm.is_error(s.request('PUT', '/api/profiles/p2', body=b, token=alice.token), 400,
                     'bad_request', 'PUT profile: %s' % why)
    cdm.is_error(s.request('PUT', '/api/profiles/bad!name', body=body, token=alice.token), 400,
                 'bad_request', 'PUT profile: bad name')
    for url in ('http://169.254.169.254/latest/', 'https://llm.example.test.evil.example/v1',
                'http://127.0.0.1:8/v1'):
        cdm.is_error(s.request('PUT', '/api/profiles/p3', body=dict(body, base_url=url),
                               token=alice.token), 403, 'forbidden',
                     'PUT profile with an endpoint the operator did not allow: %s' % url)
    tap.is_(len(s.request('GET', '/api/profiles', token=alice.token).json['profiles']), 1,
            'failed PUTs stored nothing')

    tap.is_(s.request('DELETE', '/api/profiles/work', token=alice.token).status, 204, 'DELETE: 204')
    cdm.is_error(s.request('DELETE', '/api/profiles/work', token=alice.token), 404, 'not_found',
                 'DELETE again')
    cdm.is_401(s.request('GET', '/api/profiles'), 'GET without a token')
    tap.ok(KEY not in s.server_log() + s.server_output(), 'no key in the log')

tap.done()
