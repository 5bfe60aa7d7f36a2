#!/usr/bin/python3
# 60-apache-proxy-fcgi: the API and its event streams through a real Apache
# 2.4 with mod_proxy_fcgi, configured by conf-examples/apache-proxy-fcgi.conf
# itself (t/lib/apache.py): login, a message's event arriving on the open
# stream, Last-Event-ID resume, no compression of streams, 20 concurrent
# streams receiving one event, and disconnected clients freeing their
# server threads.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import apache   # noqa: E402
import tap   # noqa: E402

with apache.ApacheStack('proxy_fcgi') as s:
    r = s.request('GET', '/api/health')
    tap.is_(r.status, 200, 'GET /api/health through Apache + mod_proxy_fcgi')
    r = s.request('GET', '/api/auth/me')
    tap.is_((r.status, (r.json or {}).get('error', {}).get('code')), (401, 'unauthorized'),
            'the application\'s own JSON errors pass through unchanged')
    tap.ok(s.request('GET', '/api/auth/me', token=s.admin_token()).status == 200,
           'the Authorization header reaches the application (CGIPassAuth)')
    r = s.request('GET', '/index.html')
    tap.is_(r.status, 404, 'outside /api/: 404, as behind nginx')
    before = s.request('GET', '/api/conversations', token=s.admin_token())
    big = s.request('POST', '/api/conversations', raw=b'{"title":"%s"}' % (b'x' * 1048576),
                    token=s.admin_token())
    tap.is_(big.status, 413, 'a body above LimitRequestBody: 413')
    after = s.request('GET', '/api/conversations', token=s.admin_token())
    tap.is_(after.body, before.body, 'and nothing was created')
    apache.check_streaming(s, 'proxy_fcgi')
tap.done()
