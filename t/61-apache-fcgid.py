#!/usr/bin/python3
# 61-apache-fcgid: the API and its event streams through a real Apache 2.4
# with mod_fcgid and `codumentor relay`, configured by
# conf-examples/apache-fcgid.conf itself (t/lib/apache.py). The test never
# starts the server: the first request makes a relay start it, detached, as
# Apache's user; racing relays start one server between them. Then the
# streaming checks every front passes, and relays freed by clients that go
# away are used again rather than piling up.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import apache   # noqa: E402
import cdm   # noqa: E402
import tap   # noqa: E402


def owner(pid):
    with open('/proc/%d/status' % pid) as f:
        st = dict(line.split(':', 1) for line in f)
    return int(st['Uid'].split()[0]), int(st['PPid'].split()[0]), int(st['VmRSS'].split()[0])


with apache.ApacheStack('fcgid') as s:
    tap.is_(s.resident_pids(), [], 'no server is running before the first request')
    r = s.request('GET', '/api/health', timeout=30)
    tap.is_(r.status, 200, 'the first request (GET /api/health) is answered')
    pids = s.resident_pids()
    tap.is_(len(pids), 1, 'a relay started the server') or tap.diag(repr(pids))
    if pids:
        uid, ppid, _ = owner(pids[0])
        relays = s.front.relay_pids()
        tap.ok(ppid not in relays and ppid != s.front.proc.pid,
               'it is detached: neither a relay nor Apache is its parent (ppid %d)' % ppid)
        if s.root:
            tap.is_(uid, apache.pwd.getpwnam(apache.RUN_USER).pw_uid,
                    'it runs as the user Apache runs the relay as (%s)' % apache.RUN_USER)
        tap.like(s.front.error_log(), r'relay: starting the server',
                 'the relay said so in Apache\'s error log')

    # -- several relays find the server down at once: one starts it
    s.kill_resident()
    tap.is_(s.resident_pids(), [], 'server killed')
    res = cdm.parallel(8, lambda i: s.request('GET', '/api/health', timeout=40).status, timeout=60)
    tap.is_(res, [200] * 8, '8 concurrent requests while it is down: all answered')
    tap.is_(len(s.resident_pids()), 1, 'and exactly one server was started (the lock)')

    r = s.request('GET', '/api/auth/me', token=s.admin_token())
    tap.is_(r.status, 200, 'the Authorization header reaches the application (CGIPassAuth)')
    r = s.request('GET', '/api/nope?x=1')
    tap.is_((r.status, (r.json or {}).get('error', {}).get('code')), (401, 'unauthorized'),
            'the application\'s own JSON errors pass through unchanged')
    # mod_fcgid refuses it itself (500, its own HTML page) before the relay
    # sees anything; what matters is that no empty-bodied request gets
    # through (see LimitRequestBody in the example).
    before = s.request('GET', '/api/conversations', token=s.admin_token())
    big = s.request('POST', '/api/conversations', raw=b'{"title":"%s"}' % (b'x' * 1048576),
                    token=s.admin_token())
    tap.is_(big.status, 500, 'a body above FcgidMaxRequestLen: refused by mod_fcgid (500)')
    after = s.request('GET', '/api/conversations', token=s.admin_token())
    tap.is_(after.body, before.body, 'and nothing was created')

    def relays_reused(s):
        n = len(s.front.relay_pids())
        tap.ok(n >= 20, 'each stream had a relay of its own (%d relay processes)' % n)
        rss = [owner(p)[2] for p in s.front.relay_pids()]
        tap.diag('relay RSS, KiB: min %d, max %d' % (min(rss), max(rss)) if rss else 'no relays')
        u = s.new_user()
        cid = s.create_conversation(u.token)
        again = s.open_streams(20, cid, u.token, timeout=60)
        tap.is_([x.status for x in again], [200] * 20, '20 new streams open')
        m = len(s.front.relay_pids())
        tap.ok(m <= n + 3, 'the freed relays served them: %d relays before, %d now' % (n, m))
        for x in again:
            x.close()
        s.streams = []
        tap.ok(cdm.wait_for(lambda: s.open_stream_count() == 0, 3 * s.heartbeat + 20, 0.5),
               'and once those clients are gone, no stream is left')

    apache.check_streaming(s, 'fcgid', on_freed=relays_reused)
tap.done()
