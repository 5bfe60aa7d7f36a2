#!/usr/bin/python3
# 23-errors: the error statuses of the contract, each with its JSON body:
# 405 (+ Allow), 404, 400, 415, 413 (the application's cap and nginx's),
# 503 (stream limit) and 500 (a broken database), and the server keeps
# answering afterwards. 401/429 are in 20, 403/409 in 21.
import os
import sqlite3
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import is_error   # noqa: E402

CAP = 4096

# The application's body cap is far below nginx's, so the application is the
# one that has to enforce it.
with cdm.Stack(config={'server.max_body_bytes': CAP, 'server.max_streams': 2},
               nginx_max_body='1m') as s:
    tok = s.admin_token()

    def health_ok(name):
        tap.is_(s.request('GET', '/api/health').status, 200, name)

    # -- 405 with Allow
    for method, path, allowed in [('PUT', '/api/health', 'GET'),
                                  ('DELETE', '/api/auth/login', 'POST'),
                                  ('PUT', '/api/conversations', 'POST')]:
        r = s.request(method, path, token=tok, body={} if method == 'PUT' else None)
        is_error(r, 405, 'method_not_allowed', '%s %s' % (method, path))
        allow = [m.strip() for m in r.headers.get('allow', '').split(',')]
        tap.ok(allowed in allow, '%s %s: Allow names %s' % (method, path, allowed)) \
            or tap.diag('Allow: %r' % r.headers.get('allow'))
        tap.ok(method not in allow, '%s %s: Allow does not name %s' % (method, path, method))

    # -- 404 for an unknown route
    is_error(s.request('GET', '/api/no/such/route', token=tok), 404, 'not_found', 'unknown route')
    is_error(s.request('GET', '/api/conversationsX', token=tok), 404, 'not_found', 'route prefix is not a route')

    # -- 400: bodies that are not a JSON object
    for name, raw in [('malformed JSON', b'{"title": oops}'),
                      ('truncated JSON', b'{"title": "abc'),
                      ('trailing garbage', b'{"title": "a"} x'),
                      ('an array', b'["title"]'),
                      ('a string', b'"title"'),
                      ('invalid UTF-8', b'{"title": "\xff\xfe"}')]:
        r = s.request('POST', '/api/conversations', raw=raw, token=tok)
        is_error(r, 400, 'bad_request', 'POST /api/conversations, ' + name)
    r = s.request('POST', '/api/auth/login', raw=b'{"username": "admin", "pass')
    is_error(r, 400, 'bad_request', 'POST /api/auth/login, truncated JSON')

    # -- 415
    r = s.request('POST', '/api/conversations', raw=b'{"title": "t"}', token=tok,
                  headers={'Content-Type': 'text/plain'})
    is_error(r, 415, 'unsupported_media_type', 'POST with Content-Type text/plain')
    r = s.request('POST', '/api/conversations', raw=b'{"title": "t"}', token=tok,
                  headers={'Content-Type': 'application/json; charset=utf-8'})
    tap.is_(r.status, 201, 'application/json; charset=utf-8 is accepted')

    # -- 413: the application's cap, then nginx's
    def padded(size):
        """A valid JSON object of exactly SIZE bytes (whitespace padding, so
        no field limit is involved)."""
        obj = b'{"title": "t"}'
        return obj[:-1] + b' ' * (size - len(obj)) + b'}'
    r = s.request('POST', '/api/conversations', raw=padded(CAP + 1), token=tok)
    is_error(r, 413, 'payload_too_large', 'body of server.max_body_bytes + 1 bytes')
    r = s.request('POST', '/api/conversations', raw=padded(CAP), token=tok)
    tap.is_(r.status, 201, 'a body of exactly server.max_body_bytes is accepted')
    r = s.request('POST', '/api/conversations', raw=padded(CAP * 10), token=tok)
    is_error(r, 413, 'payload_too_large', 'body far over server.max_body_bytes')
    r = s.request('POST', '/api/conversations', raw=b'{"title":"' + b'y' * (1536 * 1024) + b'"}', token=tok)
    tap.is_(r.status, 413, 'body over nginx\'s client_max_body_size: 413 from nginx')
    health_ok('the server still answers after both 413s')

    # -- 503 once server.max_streams streams are open
    cid = s.create_conversation(tok, 'streams')
    st1, st2 = s.open_stream(cid, tok), s.open_stream(cid, tok)
    tap.is_((st1.status, st2.status), (200, 200), 'two streams open (server.max_streams=2)')
    st3 = s.open_stream(cid, tok)
    is_error(st3, 503, 'unavailable', 'a third stream')
    health_ok('ordinary requests still work at the stream limit')
    st1.close()
    st2.close()
    st3.close()
    n = cdm.wait_for(lambda: s.open_stream_count() == 0, s.heartbeat + 5)
    tap.ok(n, 'the closed streams are freed')
    st4 = s.open_stream(cid, tok)
    tap.is_(st4.status, 200, 'a stream can be opened again after they are freed')
    st4.close()

    # -- 500: the events table vanishes under the server
    db = sqlite3.connect(s.db_path(), timeout=10)
    db.execute('DROP TABLE events')
    db.commit()
    db.close()
    r = s.request('POST', '/api/conversations/%s/messages' % cid, body={'content': 'hi'}, token=tok)
    is_error(r, 500, 'internal', 'POST message without an events table')
    tap.ok(b'events' not in r.body and b'SQL' not in r.body.upper(),
           '500 body does not leak database details') or tap.diag(repr(r.body))
    health_ok('GET /api/health still 200 after a 500')
tap.done()
