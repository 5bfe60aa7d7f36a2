#!/usr/bin/python3
"""relay.py -- engine relay overhead: the time from the scripted LLM
sending a chunk to an SSE client (through nginx, TLS) receiving the
message.delta that carries it, with N turns streaming at once.

The scripted LLM (t/lib/llm.py, in a process of its own) writes the
wall-clock time it sent each chunk into the chunk's text
("<t=1764740000.123456>"). N event streams are read by one selector loop
in one thread (bench/sseclient.py, as bench/sse.py reads them): the arrival
of a chunk is the kernel's receive timestamp (SO_TIMESTAMPNS) of the TLS
record that completed the message.delta frame carrying its stamp, so the
client's own Python work (decrypting, de-chunking, parsing, waiting for its
turn in the loop) is not in the figure. What is measured: libcurl, the
parser, delta coalescing (engine.delta_flush_ms), the SQLite append, the
bus, the FastCGI stream, nginx, TLS encryption and loopback -- everything
between the model and the user's socket.

The baseline is the same client reading the scripted LLM directly, N
streams at once: plain HTTP (the scripted LLM speaks no TLS), arrival =
kernel receive time of the recvmsg() completing the chunk. It is what the
LLM process and loopback cost; "added" is the difference.

The deltas' created_at in the event log (1 ms resolution, server clock =
this clock) splits each chunk's path into model -> stored (engine) and
stored -> arrival (bus, stream thread, FastCGI, nginx, TLS).

    bench/relay.py [--turns 50] [--chunks 60] [--interval 0.05]
                   [--flush-ms 20] [--runs 1]

CDM_BUILDDIR as for the other benchmarks.
"""

import argparse
import calendar
import json
import multiprocessing
import os
import re
import shlex
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib   # noqa: E402
from benchlib import cdm, percentile   # noqa: E402
import sseclient   # noqa: E402

import llm   # noqa: E402  (t/lib, on the path through benchlib)

STAMP = re.compile(r'<t=([0-9.]+)>')


def serve_llm(q, chunks, interval):
    m = llm.ScriptedLLM(scenarios={'stamp': {'steps': [
        {'stamp': True, 'count': chunks, 'delay': interval}]}})
    m.start()
    q.put(m.port)
    while True:
        time.sleep(3600)


class Turn:
    __slots__ = ('conv', 'got', 'end')

    def __init__(self, conv=None):
        self.conv = conv
        self.got = []        # (stamp, kernel arrival, decoded at, (conv, event id))
        self.end = None      # the turn's end event type / '[DONE]'


class RelayStreams(sseclient.Streams):
    """The N conversations' event streams through nginx."""

    def on_body(self, c, ts, now):
        for ev in sseclient.sse_events(c):
            if ev.get('event') == 'message.delta':
                text = json.loads(ev['data']).get('text', '')
                key = (c.app.conv, int(ev['id']))
                c.app.got += [(float(t), ts, now, key) for t in STAMP.findall(text)]
            elif ev.get('event') in llm.END_TYPES:
                c.app.end = ev['event']
                self.finish(c)


class LLMStreams(sseclient.Streams):
    """The same client reading the scripted LLM's completions directly."""

    def on_body(self, c, ts, now):
        for ev in sseclient.sse_events(c):
            d = ev.get('data', '')
            if d == '[DONE]':
                c.app.end = '[DONE]'
                continue
            for ch in json.loads(d).get('choices') or []:
                c.app.got += [(float(t), ts, now, None)
                              for t in STAMP.findall((ch.get('delta') or {}).get('content') or '')]

    def on_end(self, c):
        self.finish(c)


def llm_request(c):
    body = json.dumps({'model': 'scripted', 'stream': True, 'messages': [
        {'role': 'user', 'content': '[[scenario:stamp]] base %d' % c.i}]}).encode()
    return (b'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n'
            b'Content-Type: application/json\r\nContent-Length: %d\r\n'
            b'Connection: close\r\n\r\n%s' % (len(body), body))


def run_all(st, deadline):
    st.run_until(lambda: all(c.state in ('done', 'failed', 'closed') for c in st.conns), deadline)


def baseline(port, turns, chunks, interval):
    st = LLMStreams(port, None, 64, llm_request)
    st.open(turns)
    for c in st.conns:
        c.app = Turn()
    run_all(st, time.monotonic() + chunks * interval + 60)
    st.close_all()
    return st


def created_at(s):
    """(conversation, event id) -> created_at of the message.delta events (time.time() clock)."""
    con = sqlite3.connect('file:%s?mode=ro' % s.db_path(), uri=True, timeout=10)
    out = {}
    for conv, eid, created in con.execute(
            "SELECT conversation_id, id, created_at FROM events WHERE type = 'message.delta'"):
        out[conv, eid] = (calendar.timegm(time.strptime(created[:19], '%Y-%m-%dT%H:%M:%S'))
                    + int(created[20:23]) / 1000.0)
    con.close()
    return out


def one_run(a, port):
    cfg = {'llm.profiles.default.base_url': 'http://127.0.0.1:%d/v1' % port,
           'llm.profiles.default.model': 'scripted',
           'engine.workers': a.turns + 8,
           'engine.delta_flush_ms': a.flush_ms,
           'server.workers': a.turns * 2 + 16,
           'server.max_streams': a.turns * 2 + 16,
           'log.level': 'warn'}
    base = baseline(port, a.turns, a.chunks, a.interval)
    with cdm.Stack(config=cfg) as s:
        u = s.new_user('bench')
        convs = [s.create_conversation(u.token, 'relay %d' % i) for i in range(a.turns)]
        st = RelayStreams(s.port, s.ssl_context(), 64,
                          lambda c: sseclient.get_request('/api/conversations/%s/events' % convs[c.i],
                                                          u.token))
        st.open(a.turns)
        for c in st.conns:
            c.app = Turn(convs[c.i])
        st.run_until(lambda: st.connected + st.failed >= a.turns, time.monotonic() + 60)
        t0 = time.monotonic()
        # The POSTs block the loop for a moment; arrivals are kernel
        # timestamps, so what waits in the socket meanwhile is timed right.
        for i, conv in enumerate(convs):
            llm.post(s, u, conv, '[[scenario:stamp]] go')
            st.poll(0)
        run_all(st, time.monotonic() + a.chunks * a.interval + 120)
        wall = time.monotonic() - t0
        st.close_all()
        stored = created_at(s)
    return base, st, stored, wall


def ms_line(v):
    v = sorted(v)
    if not v:
        return 'none'
    return 'p50 %.2f  p90 %.2f  p99 %.2f  max %.2f' % (
        percentile(v, 50), percentile(v, 90), percentile(v, 99), v[-1])


def report(a, base, st, stored, wall):
    want = a.turns * a.chunks
    bad = [c for c in st.conns if c.app.end != 'turn.completed']
    lat, seen, m2s, s2a = [], [], [], []
    for c in st.conns:
        for stamp, ts, now, eid in c.app.got:
            lat.append((ts - stamp) * 1000)
            seen.append((now - stamp) * 1000)
            if eid in stored:
                m2s.append(((stored[eid] - stamp) * 1000, (ts - stamp) * 1000))
                s2a.append((ts - stored[eid]) * 1000)
    blat = [(ts - stamp) * 1000 for c in base.conns for stamp, ts, _, _ in c.app.got]
    bseen = [(now - stamp) * 1000 for c in base.conns for stamp, _, now, _ in c.app.got]
    bbad = [c for c in base.conns if c.app.end != '[DONE]']
    print('relay: %d turns x %d chunks every %.0f ms, delta_flush_ms %d' % (
        a.turns, a.chunks, a.interval * 1000, a.flush_ms))
    if bad or st.failed:
        print('  %d turns did not complete; stream errors: %s' % (
            len(bad), dict(st.errors) or 'none'))
    print('  chunks measured: %d of %d; wall %.1f s; reads without a kernel timestamp: %d'
          ' (baseline %d)' % (len(lat), want, wall, st.no_ts, base.no_ts))
    print('  model -> client socket (kernel receive time) ms:  %s' % ms_line(lat))
    if m2s:
        print('    model -> stored (created_at, truncated to 1 ms): %s' % ms_line([x for x, _ in m2s]))
        print('    stored -> client socket:                         %s' % ms_line(s2a))
        tail = sorted(m2s, key=lambda x: x[1])[-max(1, len(m2s) // 100):]
        eng = sum(x for x, _ in tail) / len(tail)
        tot = sum(y for _, y in tail) / len(tail)
        print('    slowest 1%% of chunks (mean %.1f ms): %.1f ms before stored, %.1f ms after'
              % (tot, eng, tot - eng))
    print('  (the client decoded them: %s)' % ms_line(seen))
    print('  baseline, same client reading the scripted LLM directly (plain HTTP, no TLS):')
    if bbad:
        print('    %d of its streams did not end with [DONE]' % len(bbad))
    print('    model -> client socket ms: %s  (%d chunks)' % (ms_line(blat), len(blat)))
    print('    (the client decoded them: %s)' % ms_line(bseen))
    if lat and blat:
        added = percentile(sorted(lat), 99) - percentile(sorted(blat), 99)
        print('  p99 added by the server path: %.2f ms; target < 10 ms: %s' % (
            added, 'met' if added < 10 else 'NOT met'))
        return added, not bad
    return None, False


def loadavg():
    with open('/proc/loadavg') as f:
        return ' '.join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--turns', type=int, default=50)
    ap.add_argument('--chunks', type=int, default=60)
    ap.add_argument('--interval', type=float, default=0.05)
    ap.add_argument('--flush-ms', type=int, default=20)
    ap.add_argument('--runs', type=int, default=1, help='repeat the measurement (1)')
    a = ap.parse_args()

    benchlib.raise_nofile(4096)
    print('# bench/relay: %s; load average %s' % (time.strftime('%Y-%m-%d %H:%M:%S %Z'), loadavg()))
    for line in benchlib.machine():
        print('# ' + line)
    print('# ' + benchlib.build_flags())
    q = multiprocessing.Queue()
    child = multiprocessing.Process(target=serve_llm, args=(q, a.chunks, a.interval), daemon=True)
    child.start()
    ok = True
    try:
        port = q.get(timeout=30)
        for r in range(a.runs):
            res = one_run(a, port)
            print('run %d of %d (load average after: %s)' % (r + 1, a.runs, loadavg()))
            added, done = report(a, *res)
            ok = ok and added is not None and done
    finally:
        child.terminate()
    print('reproduce: bench/relay.py %s' % ' '.join(shlex.quote(x) for x in sys.argv[1:]))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
