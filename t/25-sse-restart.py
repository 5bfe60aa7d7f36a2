#!/usr/bin/python3
# 25-sse-restart: the event log outlives the process. A stream open during
# SIGTERM ends cleanly (the chunked body is terminated, no hang), the server
# exits 0, and after a restart Last-Event-ID resumes with exactly the events
# the client missed, once each, in order.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

GRACE = 3

with cdm.Stack(config={'server.shutdown_grace_seconds': GRACE}) as s:
    u = s.new_user('resumer')
    cid = s.create_conversation(u.token, 'survives restarts')

    st = s.open_stream(cid, u.token)
    tap.is_(st.status, 200, 'stream open')
    for i in range(3):
        tap.is_(s.post_message(u.token, cid, 'before %d' % i).status, 202, 'message %d posted' % i)
    before = st.drain(quiet=1.5)
    ids = [e.id for e in before]
    tap.ok(len(before) >= 3 and None not in ids, 'read the events of three messages') \
        or tap.diag(repr(before))
    n = ids[-1] if ids else 0

    # -- SIGTERM while the stream is open
    t0 = time.monotonic()
    rc = s.stop_server(signal.SIGTERM, timeout=GRACE + 5)
    took = time.monotonic() - t0
    tap.is_(rc, 0, 'SIGTERM: exit status 0 (%.1f s)' % took)
    try:
        clean = st.read_to_end(timeout=5)
        tap.ok(clean, 'the open stream ended with the end of its chunked body')
    except TimeoutError:
        tap.ok(False, 'the open stream ended with the end of its chunked body')
        tap.diag('still open 5 s after the server exited')
    tap.is_(st.pending(), [], 'nothing new arrived on it while stopping')
    st.close()

    # -- restart, two more messages, resume
    s.start_server()
    for i in range(2):
        tap.is_(s.post_message(u.token, cid, 'after %d' % i).status, 202, 'message after restart %d posted' % i)
    full = s.open_stream(cid, u.token)
    everything = full.drain(quiet=1.5)
    full.close()
    tap.is_(everything[:len(before)], before, 'the log kept the events from before the restart')
    want = [e for e in everything if e.id > n]
    tap.ok(len(want) >= 2, 'the two new messages made events') or tap.diag(repr(everything))
    tap.is_(want[:1] and want[0].id, n + 1, 'ids continue after the restart with N+1')

    res = s.open_stream(cid, u.token, last_event_id=n)
    got = res.drain(quiet=2)
    tap.is_(got, want, 'Last-Event-ID: N after a restart: exactly the missed events, in order')
    tap.is_(len(set(e.id for e in got)), len(got), 'no event twice')
    res.close()
tap.done()
