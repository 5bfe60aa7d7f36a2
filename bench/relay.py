#!/usr/bin/python3
"""relay.py -- engine relay overhead: the time from the scripted LLM
sending a chunk to an SSE client (through nginx, TLS) receiving the
message.delta that carries it, with N turns streaming at once.

The scripted LLM (t/lib/llm.py, in a process of its own so its threads do
not share a GIL with the clients) writes the wall-clock time it sent each
chunk into the chunk's text ("<t=1764740000.123456>"); each client parses
the stamps out of the deltas it receives and subtracts them from its own
clock at reception. What is measured therefore includes libcurl, the
parser, delta coalescing (engine.delta_flush_ms), the SQLite append, the
bus, the FastCGI stream, nginx, TLS and the Python client -- everything
between the model and the user.

    python3 bench/relay.py [--turns 50] [--chunks 60] [--interval 0.05]
                           [--flush-ms 20]

Prints p50/p90/p99/max in milliseconds and whether p99 < 10 ms.
CDM_BUILDDIR as for the other benchmarks.
"""

import argparse
import multiprocessing
import os
import platform
import re
import sys
import time

import benchlib   # noqa: F401  (sets CDM_BUILDDIR, imports cdm)
import cdm

sys.path.insert(0, os.path.join(benchlib.SRCDIR, 't', 'lib'))
import llm   # noqa: E402

STAMP = re.compile(r'<t=([0-9.]+)>')


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def serve_llm(q, chunks, interval):
    m = llm.ScriptedLLM(scenarios={'stamp': {'steps': [
        {'stamp': True, 'count': chunks, 'delay': interval}]}})
    m.start()
    q.put(m.port)
    while True:
        time.sleep(3600)


def baseline(port, turns):
    """The same clients reading the scripted LLM directly: what the
    measuring itself costs (Python threads, loopback, the LLM process)."""
    import http.client
    import json

    def one(i):
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
        c.request('POST', '/v1/chat/completions', body=json.dumps({
            'model': 'scripted', 'stream': True,
            'messages': [{'role': 'user', 'content': '[[scenario:stamp]] base %d' % i}]}),
            headers={'Content-Type': 'application/json'})
        r = c.getresponse()
        got = []
        for line in r:
            now = time.time()
            got += [now - float(t) for t in STAMP.findall(line.decode())]
            if line.startswith(b'data: [DONE]'):
                break
        c.close()
        return got
    res = cdm.parallel(turns, one, timeout=300)
    return [x * 1000 for r in res if not isinstance(r, BaseException) for x in r]


def stored_latency(s):
    """Model -> stored: each delta's created_at (ms) in the event log minus
    the stamps it carries. The rest of the path is stored -> client."""
    import calendar
    import json
    import sqlite3
    con = sqlite3.connect('file:%s?mode=ro' % s.db_path(), uri=True, timeout=10)
    out = []
    for created, data in con.execute("SELECT created_at, data FROM events WHERE type = 'message.delta'"):
        t = calendar.timegm(time.strptime(created[:19], '%Y-%m-%dT%H:%M:%S')) + int(created[20:23]) / 1000.0
        out += [(t - float(x)) * 1000 for x in STAMP.findall(json.loads(data)['text'])]
    con.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--turns', type=int, default=50)
    ap.add_argument('--chunks', type=int, default=60)
    ap.add_argument('--interval', type=float, default=0.05)
    ap.add_argument('--flush-ms', type=int, default=20)
    a = ap.parse_args()

    benchlib.raise_nofile(4096)
    q = multiprocessing.Queue()
    child = multiprocessing.Process(target=serve_llm, args=(q, a.chunks, a.interval), daemon=True)
    child.start()
    port = q.get(timeout=30)
    base = baseline(port, a.turns)
    cfg = {'llm.profiles.default.base_url': 'http://127.0.0.1:%d/v1' % port,
           'llm.profiles.default.model': 'scripted',
           'engine.workers': a.turns + 8,
           'engine.delta_flush_ms': a.flush_ms,
           'server.workers': a.turns * 2 + 16,
           'server.max_streams': a.turns * 2 + 16,
           'log.level': 'warn'}
    lat = []
    try:
        with cdm.Stack(config=cfg) as s:
            u = s.new_user('bench')
            convs = [s.create_conversation(u.token, 'relay %d' % i) for i in range(a.turns)]
            streams = [s.open_stream(c, u.token, timeout=30) for c in convs]

            def one(i):
                tid = llm.post(s, u, convs[i], '[[scenario:stamp]] go')
                got = []
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    ev = streams[i].next_event(timeout=deadline - time.monotonic())
                    now = time.time()
                    if ev.type == 'message.delta':
                        got += [now - float(t) for t in STAMP.findall(ev.data['text'])]
                    elif ev.type in llm.END_TYPES and ev.data.get('turn_id') == tid:
                        return got, ev.type
                raise TimeoutError('turn %d did not end' % i)

            t0 = time.monotonic()
            res = cdm.parallel(a.turns, one, timeout=300)
            wall = time.monotonic() - t0
            stored = stored_latency(s)
    finally:
        child.terminate()
    bad = [r for r in res if isinstance(r, BaseException) or r[1] != 'turn.completed']
    for r in res:
        if not isinstance(r, BaseException):
            lat += r[0]
    if bad:
        print('%d turns did not complete: %r' % (len(bad), bad[:3]))
    ms = [x * 1000 for x in lat]
    want = a.turns * a.chunks
    print('relay: %d turns x %d chunks every %.0f ms, delta_flush_ms %d, %s, %d cores'
          % (a.turns, a.chunks, a.interval * 1000, a.flush_ms, platform.machine(), os.cpu_count()))
    print('chunks measured: %d of %d; wall %.1f s' % (len(ms), want, wall))
    if ms:
        print('latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f'
              % (pct(ms, 50), pct(ms, 90), pct(ms, 99), max(ms)))
        if stored:
            print('of which model -> stored (event created_at, 1 ms resolution): p50 %.1f  p99 %.1f'
                  % (pct(stored, 50), pct(stored, 99)))
        print('baseline ms (clients reading the LLM directly): p50 %.2f  p90 %.2f  p99 %.2f  max %.2f'
              % (pct(base, 50), pct(base, 90), pct(base, 99), max(base)))
        added = pct(ms, 99) - pct(base, 99)
        print('p99 added by the server path: %.2f ms; target < 10 ms: %s'
              % (added, 'met' if added < 10 else 'NOT met'))
    return 0 if ms and not bad else 1


if __name__ == '__main__':
    sys.exit(main())
