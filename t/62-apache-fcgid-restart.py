#!/usr/bin/python3
# 62-apache-fcgid-restart: the resident server behind mod_fcgid and the relay
# goes away. Killed (SIGKILL) while streams are open, the clients see their
# chunked responses end properly, not hang; the next request makes a relay
# start it again, and Last-Event-ID resumes with exactly the missed events.
# A server that cannot start (its data directory is readable by others) gets
# the client a 503 with the JSON error body, quickly, and the reason in
# Apache's error log.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import apache   # noqa: E402
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import is_error   # noqa: E402

with apache.ApacheStack('fcgid') as s:
    u = s.new_user('survivor')
    cid = s.create_conversation(u.token, 'outlives its server')
    streams = s.open_streams(3, cid, u.token, timeout=60)
    tap.is_(s.post_message(u.token, cid, 'before').status, 202, 'message posted')
    before = [st.drain(quiet=1.5) for st in streams]
    tap.ok(all(b and b == before[0] for b in before), 'three streams read the same events') \
        or tap.diag(repr(before))
    n = before[0][-1].id if before[0] else 0
    old = s.resident_pids()

    # -- SIGKILL mid-stream
    s.kill_resident(signal.SIGKILL)
    ends = []
    for st in streams:
        try:
            ends.append(st.read_to_end(timeout=15))
        except TimeoutError:
            ends.append('hang')
    tap.is_(ends, [True] * 3, 'server killed: each open stream ended with the end of its chunked body')
    tap.is_([st.pending() for st in streams], [[]] * 3, 'nothing half-made arrived on them')
    for st in streams:
        st.close()

    # -- the next request starts it again
    r = s.request('GET', '/api/health', timeout=30)
    tap.is_(r.status, 200, 'the next request is answered')
    new = s.resident_pids()
    tap.ok(len(new) == 1 and new != old, 'by a new server the relay started (%r -> %r)' % (old, new))
    tap.is_(s.post_message(u.token, cid, 'after').status, 202, 'a message after the restart')
    res = s.open_stream(cid, u.token, last_event_id=n, timeout=30)
    got = res.drain(quiet=1.5)
    res.close()
    tap.ok(got and got[0].id == n + 1 and [e.id for e in got] == list(range(n + 1, n + 1 + len(got))),
           'Last-Event-ID after the restart: the missed events, from N+1, no gaps') \
        or tap.diag(repr(got))

    # -- a stream whose server is stopped the ordinary way ends cleanly too
    st = s.open_stream(cid, u.token, after=n + len(got), timeout=30)
    s.kill_resident(signal.SIGTERM)
    try:
        tap.ok(st.read_to_end(timeout=15), 'SIGTERM: the open stream ends cleanly as well')
    except TimeoutError:
        tap.ok(False, 'SIGTERM: the open stream ends cleanly as well')
    st.close()

# -- a server that cannot start
with apache.ApacheStack('fcgid') as s:
    os.chmod(s.path('instance'), 0o700)
    os.makedirs(s.path('instance', 'data'), exist_ok=True)
    os.chmod(s.path('instance', 'data'), 0o755)      # the server refuses this
    if s.service_user:
        os.chown(s.path('instance', 'data'), apache.pwd.getpwnam(s.service_user).pw_uid, -1)
    t0 = time.monotonic()
    r = s.request('GET', '/api/health', timeout=40)
    took = time.monotonic() - t0
    is_error(r, 503, 'unavailable', 'the server cannot start: the relay answers')
    tap.like(r.headers.get('content-type', ''), r'^application/json', 'as JSON')
    tap.ok(took < 8, 'without waiting for the start timeout: it saw the server exit (%.1f s)' % took)
    log = s.front.error_log()
    tap.like(log, r'readable by group or others', 'the server\'s reason is in Apache\'s error log')
    tap.like(log, r'relay: the server \(pid \d+\) exited while starting', 'and the relay\'s')
    tap.is_(s.resident_pids(), [], 'no server is left running')
    r = s.request('POST', '/api/auth/login', body={'username': 'a', 'password': 'b'}, timeout=40)
    is_error(r, 503, 'unavailable', 'a request with a body gets the same answer')
tap.done()
