#!/usr/bin/python3
"""memory.py -- resident memory (VmRSS, /proc/PID/status) of `codumentor api`
behind nginx: right after start, and after some ordinary requests (login,
conversations created and listed, messages posted, health checks). Prints
the figures; bench/memory.sh runs it and then bench/sse.py for per-stream
memory.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib   # noqa: E402
from benchlib import cdm, rss_kib, threads, mib   # noqa: E402


def status_kib(pid, key):
    return int(benchlib.proc_status(pid)[key].split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--requests', type=int, default=200, help='GET requests of each kind (200)')
    args = ap.parse_args()
    print('# bench/memory: %s' % time.strftime('%Y-%m-%d %H:%M:%S %Z'))
    for line in benchlib.machine():
        print('# ' + line)
    print('# ' + benchlib.build_flags())
    with cdm.Stack(config={'server.heartbeat_seconds': 15}) as s:
        pid = s.server_pid
        time.sleep(1)
        rows = [('after start (one health check)', rss_kib(pid), threads(pid),
                 status_kib(pid, 'VmHWM'))]
        u = s.new_user('mem')
        convs = [s.create_conversation(u.token, 'c%d' % i) for i in range(20)]
        for c in convs[:5]:
            s.post_message(u.token, c, 'hello')
        for i in range(args.requests):
            s.request('GET', '/api/health')
            s.request('GET', '/api/conversations', token=u.token)
            s.request('GET', '/api/conversations/%s/messages' % convs[i % 5], token=u.token)
        time.sleep(1)
        rows.append(('after %d requests' % (3 * args.requests + 33), rss_kib(pid), threads(pid),
                     status_kib(pid, 'VmHWM')))
        print()
        print('codumentor api resident memory (idle target: under 15 MB)')
        print('%-36s %10s %10s %8s' % ('', 'VmRSS', 'VmHWM', 'threads'))
        for name, kib, th, hwm in rows:
            print('%-36s %6.1f MiB %6.1f MiB %8d' % (name, mib(kib), mib(hwm), th))
        worst = max(r[1] for r in rows) * 1024
        print('idle target (< 15 MB = 15000000 bytes): %s (%.1f MB)' % (
            'met' if worst < 15e6 else 'MISSED', worst / 1e6))
        print('reproduce: bench/memory.py %s' % ' '.join(sys.argv[1:]))


if __name__ == '__main__':
    main()
