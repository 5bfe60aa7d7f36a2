#!/usr/bin/python3
"""fronts.py -- the same server behind three fronts, measured in one run:

    nginx        nginx --FastCGI--> codumentor api           (conf-examples/nginx.conf)
    proxy_fcgi   Apache mod_proxy_fcgi --FastCGI--> same     (apache-proxy-fcgi.conf)
    fcgid        Apache mod_fcgid --> codumentor relay --> same (apache-fcgid.conf)

All three listen with TLS on loopback in front of ONE `codumentor api`, so
only the front differs. For each: authenticated GET /api/conversations
throughput and latency with wrk (bench/auth.lua), and SSE first-event
latency: on an open stream, the time from POSTing a message to its
message.created event arriving. Also the relay processes' resident memory.
Prints a table and the command that reproduces it.

Usage: CDM_BUILDDIR=/path/to/build bench/fronts.py [--duration S]
       [--connections N] [--sse-rounds N]   (as root, like the tests)
"""

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib   # noqa: E402
from benchlib import cdm   # noqa: E402
import apache   # noqa: E402  (t/lib, on the path through benchlib)


def wrk(port, token, duration, connections, threads=2):
    env = dict(os.environ, BENCH_TOKEN=token)
    cmd = ['wrk', '-t%d' % threads, '-c%d' % connections, '-d%ds' % duration,
           '--latency', '-s', os.path.join(benchlib.HERE, 'auth.lua'),
           'https://127.0.0.1:%d/api/conversations' % port]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, timeout=duration + 60).stdout
    rps = re.search(r'Requests/sec:\s+([\d.]+)', out)
    p50 = re.search(r'^\s+50%\s+([\d.]+)(us|ms|s)\s*$', out, re.M)
    p99 = re.search(r'^\s+99%\s+([\d.]+)(us|ms|s)\s*$', out, re.M)
    errs = re.search(r'Non-2xx or 3xx responses: (\d+)', out)
    sock = re.search(r'Socket errors: (.*)', out)

    def ms(m):
        if not m:
            return None
        return float(m.group(1)) * {'us': 0.001, 'ms': 1, 's': 1000}[m.group(2)]
    return {'rps': float(rps.group(1)) if rps else None, 'p50': ms(p50), 'p99': ms(p99),
            'errors': int(errs.group(1)) if errs else 0,
            'socket_errors': sock.group(1) if sock else '', 'raw': out}


def first_event_latency(via, token, cid, rounds):
    """Milliseconds from POST to message.created on an already open stream."""
    got = []
    st = via.open_stream(cid, token, timeout=60)    # a new conversation: no replay
    try:
        for i in range(rounds):
            t0 = time.monotonic()
            r = via.post_message(token, cid, 'ping %d' % i)
            mid = (r.json or {}).get('message_id')
            st.wait_event(apache.created(mid), timeout=15)
            got.append((time.monotonic() - t0) * 1000)
    finally:
        st.close()
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--duration', type=int, default=10, help='seconds per wrk run')
    ap.add_argument('--connections', type=int, default=32)
    ap.add_argument('--sse-rounds', type=int, default=30)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit('fronts.py: run as root (Apache and nginx workers run as www-data)')
    benchlib.raise_nofile(65536)

    results = {}
    with cdm.Stack(config={'server.workers': 64, 'server.max_streams': 1024,
                           'server.heartbeat_seconds': 15}) as s:
        u = s.new_user('bench')
        for i in range(20):
            s.create_conversation(u.token, 'conversation %d' % i)
        fronts = [('nginx', s, None)]
        started = []
        try:
            for module in ('proxy_fcgi', 'fcgid'):
                f = apache.Front(s, module)
                f.start()
                started.append(f)
                fronts.append((module, apache.Via(s, f.port), f))
            for name, via, f in fronts:
                # Warm up (mod_fcgid spawns its relays on demand).
                wrk(via.port, u.token, 3, args.connections)
                w = wrk(via.port, u.token, args.duration, args.connections)
                cid = s.create_conversation(u.token, 'latency via ' + name)
                lat = first_event_latency(via, u.token, cid, args.sse_rounds)
                rss = [benchlib.rss_kib(p) for p in f.relay_pids()] if f and f.module == 'fcgid' else []
                results[name] = (w, lat, rss)
        finally:
            for f in started:
                f.stop()

    print()
    print('%-11s %10s %9s %9s %7s   %14s %10s' % (
        'front', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'SSE first ev.', 'p95 ms'))
    for name in ('nginx', 'proxy_fcgi', 'fcgid'):
        w, lat, rss = results[name]
        lat = sorted(lat)
        p95 = lat[min(len(lat) - 1, int(len(lat) * 0.95))] if lat else float('nan')
        print('%-11s %10.0f %9.2f %9.2f %7d   %11.2f ms %10.2f' % (
            name, w['rps'] or 0, w['p50'] or 0, w['p99'] or 0,
            w['errors'], statistics.median(lat) if lat else float('nan'), p95))
        if w['socket_errors']:
            print('            socket errors: %s' % w['socket_errors'])
    rss = results['fcgid'][2]
    if rss:
        print('\nrelay processes: %d, resident memory %d..%d KiB each' % (
            len(rss), min(rss), max(rss)))
    print('\nGET /api/conversations (20 conversations), wrk -t2 -c%d -d%ds, TLS; SSE: '
          'median of %d POST -> message.created on an open stream.' % (
              args.connections, args.duration, args.sse_rounds))
    print('reproduce: CDM_BUILDDIR=%s %s' % (
        shlex.quote(os.environ['CDM_BUILDDIR']),
        ' '.join(shlex.quote(a) for a in [sys.argv[0]] + sys.argv[1:])))


if __name__ == '__main__':
    main()
