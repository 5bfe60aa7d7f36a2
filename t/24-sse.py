#!/usr/bin/python3
# 24-sse: GET /api/conversations/{id}/events through nginx: headers, live
# events while the stream is open, gap-free ids, heartbeats, resuming with
# Last-Event-ID and ?after=N, 200 concurrent streams, and a client that goes
# away frees its stream (GET /api/admin/status).
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import is_error   # noqa: E402

N_STREAMS = 200


def created(mid):
    """Matches the message.created event of message MID."""
    return lambda e: (e.type == 'message.created' and isinstance(e.data, dict)
                      and (e.data.get('message') or {}).get('id') == mid)


# Each open stream holds a server thread: size the pool for the crowd.
with cdm.Stack(config={'server.workers': N_STREAMS + 40,
                       'server.max_streams': N_STREAMS + 20}) as s:
    hb = s.heartbeat
    u = s.new_user('streamer')
    cid = s.create_conversation(u.token, 'events')

    # -- headers
    st = s.open_stream(cid, u.token)
    tap.is_(st.status, 200, 'events: 200')
    tap.like(st.headers.get('content-type', ''), r'^text/event-stream\b', 'Content-Type: text/event-stream')
    tap.like(st.headers.get('cache-control', ''), r'\bno-cache\b', 'Cache-Control: no-cache')
    tap.is_(st.headers.get('x-accel-buffering'), 'no', 'X-Accel-Buffering: no')
    tap.ok(st.head_seconds < 1, 'the head arrives at once, before any event or ping (%.2f s)'
           % st.head_seconds)

    # -- heartbeats while idle (a new conversation has no events)
    try:
        t1, _ = st.wait_comment('ping', timeout=hb + 2, since=st.opened_at)
        tap.ok(True, '": ping" within heartbeat+2 s of opening (%.1f s)' % (t1 - st.opened_at))
        t2, _ = st.wait_comment('ping', timeout=hb + 2, since=t1 + 0.001)
        tap.ok(True, 'and again within heartbeat+2 s (%.1f s)' % (t2 - t1))
    except TimeoutError as e:
        tap.ok(False, '": ping" every heartbeat_seconds while idle')
        tap.diag('%s; comments so far: %r' % (e, st.comments))
    tap.is_(st.pending(), [], 'no events on an idle new conversation')

    # -- a posted message arrives while the stream is open
    seen = []
    r = s.post_message(u.token, cid, 'first')
    tap.is_(r.status, 202, 'POST message: 202')
    mid = (r.json or {}).get('message_id')
    try:
        ev, before = st.wait_event(created(mid), timeout=5)
        seen += before + [ev]
        tap.ok(not st.ended, 'message.created arrived on the open stream')
        msg = ev.data['message']
        tap.is_((msg.get('role'), msg.get('content')), ('user', 'first'), 'it carries the user message')
    except (TimeoutError, cdm.StreamEnded) as e:
        tap.ok(False, 'message.created arrived on the open stream')
        tap.diag(str(e))

    # -- several posts: ids go up by one, no gaps
    for text in ('second', 'third', 'fourth'):
        r = s.post_message(u.token, cid, text)
        try:
            ev, before = st.wait_event(created((r.json or {}).get('message_id')), timeout=10)
            seen += before + [ev]
        except (TimeoutError, cdm.StreamEnded) as e:
            tap.diag('message %r: %s' % (text, e))
    seen += st.drain(quiet=1.5)
    ids = [e.id for e in seen]
    tap.ok(len(ids) >= 4 and ids[0] is not None and ids[0] >= 1, 'events have integer ids') \
        or tap.diag('ids: %r' % ids)
    tap.is_(ids, list(range(ids[0], ids[0] + len(ids))) if ids and ids[0] else None,
            'ids increase by 1 with no gaps')
    tap.ok(seen and all(isinstance(e.data, dict) for e in seen), 'every event\'s data is one JSON object') \
        or tap.diag(repr(seen))
    last = ids[-1] if ids else 0
    st.close()

    # -- from the start, resumed, ?after
    full = s.open_stream(cid, u.token)
    tap.is_(full.drain(quiet=1.5), seen, 'a new stream replays every event, from the first')
    full.close()
    mid_id = seen[len(seen) // 2].id if seen else 1
    want = [e for e in seen if e.id > mid_id]
    res = s.open_stream(cid, u.token, last_event_id=mid_id)
    tap.is_(res.drain(quiet=1.5), want, 'Last-Event-ID: N gives the events after N, once, in order')
    aft = s.open_stream(cid, u.token, after=mid_id)
    tap.is_(aft.drain(quiet=1.5), want, '?after=N likewise')
    aft.close()
    end = s.open_stream(cid, u.token, last_event_id=last)
    tap.is_(end.drain(quiet=1.5), [], 'Last-Event-ID: <last> replays nothing')
    r = s.post_message(u.token, cid, 'fifth')
    try:
        ev, before = res.wait_event(created((r.json or {}).get('message_id')), timeout=5)
        tap.ok(True, 'the resumed stream then gets live events')
        tap.is_((before + [ev])[0].id, last + 1, 'the first live event has id last+1')
    except (TimeoutError, cdm.StreamEnded) as e:
        tap.ok(False, 'resumed stream gets live events')
        tap.diag(str(e))
    more = res.drain(quiet=1.5)
    last = (more or [ev])[-1].id
    res.close()
    end.close()

    # -- /api/admin/status is for admins
    is_error(s.request('GET', '/api/admin/status', token=u.token), 403, 'forbidden',
             'GET /api/admin/status as a non-admin')
    st = s.admin_status()
    tap.ok(isinstance(st, dict) and isinstance(st.get('streams'), int),
           'GET /api/admin/status as admin: {"streams": <int>}') or tap.diag(repr(st))
    tap.ok(cdm.wait_for(lambda: s.open_stream_count() == 0, hb + 2),
           'closed streams are all gone within heartbeat+2 s') \
        or tap.diag('streams: %r' % s.open_stream_count())

    # -- 200 streams at once all get one new event
    def open_and_replay(i):
        sx = s.open_stream(cid, u.token, timeout=30)
        if sx.status != 200:
            raise RuntimeError('stream %d: status %d %r' % (i, sx.status, sx.body[:200]))
        sx.events_until(last, timeout=30)      # connected and caught up
        return sx

    t0 = time.monotonic()
    crowd = cdm.parallel(N_STREAMS, open_and_replay, timeout=90)
    errors = [x for x in crowd if isinstance(x, BaseException)]
    crowd = [x for x in crowd if isinstance(x, cdm.EventStream)]
    if not tap.is_(len(crowd), N_STREAMS, '%d streams open and replayed (%.1f s)'
                   % (N_STREAMS, time.monotonic() - t0)):
        tap.diag('first errors: %r' % errors[:3])
    tap.ok(cdm.wait_for(lambda: s.open_stream_count() == len(crowd), 5),
           'admin status counts them') or tap.diag('streams: %r' % s.open_stream_count())
    r = s.post_message(u.token, cid, 'to everyone')
    mid = (r.json or {}).get('message_id')
    t0 = time.monotonic()
    got = cdm.parallel(len(crowd), lambda i: crowd[i].wait_event(created(mid), timeout=10), timeout=30)
    n = sum(1 for x in got if isinstance(x, tuple))
    tap.is_(n, N_STREAMS, 'every stream received the new message (%.1f s)' % (time.monotonic() - t0))
    if n != N_STREAMS:
        tap.diag('first errors: %r' % [x for x in got if not isinstance(x, tuple)][:3])
    for sx in crowd:
        sx.close()
    t0 = time.monotonic()
    ok = cdm.wait_for(lambda: s.open_stream_count() == 0, hb + 5)
    tap.ok(ok, 'all %d abruptly closed streams freed (%.1f s)' % (N_STREAMS, time.monotonic() - t0)) \
        or tap.diag('streams: %r' % s.open_stream_count())

    # -- a client that vanishes frees its thread within a heartbeat
    five = s.open_streams(5, cid, u.token, after=last + 1)
    tap.ok(cdm.wait_for(lambda: s.open_stream_count() == 5, 5), 'five streams counted')
    for sx in five:
        sx.close()
    t0 = time.monotonic()
    ok = cdm.wait_for(lambda: s.open_stream_count() == 0, hb + 2)
    tap.ok(ok, 'abrupt disconnects freed within heartbeat+2 s (%.1f s)' % (time.monotonic() - t0)) \
        or tap.diag('streams: %r' % s.open_stream_count())
tap.done()
