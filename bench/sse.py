#!/usr/bin/python3
"""sse.py -- concurrent Server-Sent Events streams through nginx (TLS), held
by the one codumentor process, and the time an event takes to reach them.

    bench/sse.py [--streams 2000] [--events 20] [--interval 0.2]

1. Starts the real stack (t/lib/cdm.py: nginx from conf-examples/nginx.conf,
   TLS, codumentor api), makes a user and one conversation, and reads the
   server's resident memory (VmRSS) idle.
2. Opens N streams GET /api/conversations/{id}/events from this one process:
   non-blocking sockets in one selector loop, TLS through ssl.MemoryBIO, at
   most --connect-parallel handshakes in flight. Waits until every stream
   has its 200 head (or failed: each failure is counted and described).
3. Reads VmRSS and the thread count with the N streams open.
4. Publishes K events: POST /api/conversations/{id}/messages with a unique
   marker in the content, --interval seconds apart (a 409 -- the previous
   turn still running -- is retried). The send time is time.time() right
   before the request is written on an already-open TLS connection.
5. The arrival of event k on a stream is the kernel's receive timestamp
   (SO_TIMESTAMPNS) of the TLS record that completed its message.created
   frame, so the client's own Python processing time (one core shared with
   the server and nginx) is not counted as server latency. Streams are read
   one TLS record per recvmsg() for that purpose. The time the client got
   round to decoding it is reported too, separately.
6. Reports connect errors, missing arrivals, latency p50/p99/max over all
   (event, stream) pairs and per event the time until ALL streams had it,
   then closes the streams and checks the server let them go.

Everything goes to 127.0.0.1. Bounded: each phase has a deadline.
"""

import argparse
import collections
import http.client
import json
import os
import re
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib   # noqa: E402
from benchlib import cdm, percentile, rss_kib, threads, mib   # noqa: E402
import sseclient   # noqa: E402

MARK_RE = re.compile(rb'@@EVT(\d{5})@@')


class Streams(sseclient.Streams):
    """The event streams of one conversation: the arrival of event k on a
    stream is the kernel receive time of the record completing its marker."""

    def __init__(self, port, path, token, ctx, parallel):
        super().__init__(port, ctx, parallel, sseclient.get_request(path, token))

    def on_body(self, c, ts, now):
        for m in MARK_RE.finditer(c.body):
            k = int(m.group(1))
            if k not in c.arrivals:
                c.arrivals[k] = ts
                c.seen_at[k] = now
        if len(c.body) > 64:
            del c.body[:-32]     # a marker is 14 bytes: keep enough of the tail


def post(port, ctx, token, conv, content, timeout=10):
    """POST the message on a fresh, already-handshaken TLS connection; returns
    (status, time.time() just before the request was written)."""
    conn = http.client.HTTPSConnection('127.0.0.1', port, timeout=timeout, context=ctx)
    try:
        conn.connect()
        body = json.dumps({'content': content}).encode()
        hdrs = {'Host': 'localhost', 'Content-Type': 'application/json',
                'Authorization': 'Bearer ' + token, 'Connection': 'close'}
        t = time.time()
        conn.request('POST', '/api/conversations/%s/messages' % conv, body=body, headers=hdrs)
        r = conn.getresponse()
        r.read()
        return r.status, t
    finally:
        conn.close()


def ctx_switches(pid):
    """(voluntary, involuntary) context switches summed over PID's threads."""
    vol = inv = 0
    try:
        tids = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return 0, 0
    for t in tids:
        try:
            with open('/proc/%d/task/%s/status' % (pid, t)) as f:
                for line in f:
                    if line.startswith('voluntary_ctxt_switches'):
                        vol += int(line.split()[1])
                    elif line.startswith('nonvoluntary_ctxt_switches'):
                        inv += int(line.split()[1])
        except (OSError, ValueError):
            pass
    return vol, inv


def machine_busy():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]) - v[3] - v[4], sum(v[:8])


def nginx_problems(s, since_bytes):
    path = os.path.join(s.nginx_dir, 'error.log')
    try:
        with open(path, 'rb') as f:
            f.seek(since_bytes)
            text = f.read().decode('utf-8', 'replace')
    except OSError:
        return []
    return [ln for ln in text.splitlines() if re.search(r'\[(error|crit|alert|emerg)\]', ln)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--streams', '-n', type=int, default=2000, help='streams to open (2000)')
    ap.add_argument('--events', '-k', type=int, default=20, help='events to publish (20; 0: memory only)')
    ap.add_argument('--interval', type=float, default=0.2, help='seconds between events (0.2)')
    ap.add_argument('--connect-parallel', type=int, default=64,
                    help='TLS handshakes in flight at once (64)')
    ap.add_argument('--connect-timeout', type=float, default=180, help='seconds to open them all (180)')
    ap.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                    help='extra codumentor configuration key (repeatable)')
    ap.add_argument('--cycles', type=int, default=1,
                    help='open and close the N streams this many times (RSS after each; 1)')
    ap.add_argument('--json', metavar='FILE', help='also write the figures as JSON to FILE')
    args = ap.parse_args()

    nofile = benchlib.raise_nofile(2 * args.streams + 1024)
    extra = {'server.heartbeat_seconds': 15,
             'server.max_streams': max(4096, args.streams + 16)}
    for kv in args.set:
        k, _, v = kv.partition('=')
        extra[k] = int(v) if v.lstrip('-').isdigit() else v

    print('# bench/sse: %s' % time.strftime('%Y-%m-%d %H:%M:%S %Z'))
    for line in benchlib.machine():
        print('# ' + line)
    print('# ' + benchlib.build_flags())
    print('# RLIMIT_NOFILE (client, inherited by server and nginx): %d' % nofile)
    print('# server config: %s' % ', '.join('%s=%s' % kv for kv in sorted(extra.items())))
    fig = {'streams': args.streams, 'events': args.events}

    with cdm.Stack(config=extra) as s:
        pid = s.server_pid
        ctx = s.ssl_context()
        u = s.new_user('streamer')
        conv = s.create_conversation(u.token, 'sse bench')
        s.admin_token()
        time.sleep(1)
        fig['rss_idle_kib'] = rss_kib(pid)
        fig['threads_idle'] = threads(pid)
        print('# server pid %d: idle VmRSS %.1f MiB, %d threads' % (
            pid, mib(fig['rss_idle_kib']), fig['threads_idle']), flush=True)
        try:
            elog_start = os.path.getsize(os.path.join(s.nginx_dir, 'error.log'))
        except OSError:
            elog_start = 0

        st = Streams(s.port, '/api/conversations/%s/events' % conv, u.token, ctx,
                     args.connect_parallel)
        t0 = time.monotonic()
        cpu0 = os.times()
        st.open(args.streams)
        st.run_until(lambda: st.connected + st.failed >= args.streams,
                     t0 + args.connect_timeout)
        t_open = time.monotonic() - t0
        fig['connected'], fig['connect_failed'] = st.connected, st.failed
        fig['connect_seconds'] = t_open
        pending = args.streams - st.connected - st.failed
        print('# opened %d of %d streams in %.1f s (%d failed, %d still pending)' % (
            st.connected, args.streams, t_open, st.failed, pending), flush=True)
        for why, n in st.errors.most_common(10):
            print('#   %5d x %s' % (n, why))

        # Settle, then memory with the streams open.
        st.run_until(lambda: False, time.monotonic() + 2)
        fig['rss_streams_kib'] = rss_kib(pid)
        fig['threads_streams'] = threads(pid)
        server_count = s.open_stream_count()
        st.run_until(lambda: False, time.monotonic() + 0.2)
        fig['server_stream_count'] = server_count
        per = ((fig['rss_streams_kib'] - fig['rss_idle_kib']) / st.connected) if st.connected else 0
        fig['rss_per_stream_kib'] = per
        print('# with %d streams open: VmRSS %.1f MiB, %d threads, server counts %s streams; '
              '%.1f KiB per stream' % (st.connected, mib(fig['rss_streams_kib']),
                                       fig['threads_streams'], server_count, per), flush=True)

        # Publish.
        hz = os.sysconf('SC_CLK_TCK')
        ngx = lambda: benchlib.descendants(s.nginx_proc.pid)   # noqa: E731
        p0 = (benchlib.cpu_ticks([pid]) / hz, benchlib.cpu_ticks(ngx()) / hz, sum(os.times()[:2]), machine_busy(),
              time.monotonic())
        cs0 = ctx_switches(pid)
        sent, post_ms = {}, []
        post_err = collections.Counter()
        next_at = time.monotonic()
        k = 0
        deadline = time.monotonic() + args.events * (args.interval + 15) + 10
        while k < args.events and time.monotonic() < deadline:
            st.run_until(lambda: time.monotonic() >= next_at, next_at + 1)
            try:
                status, t = post(s.port, ctx, u.token, conv,
                                 'bench event %d @@EVT%05d@@' % (k, k))
            except (OSError, http.client.HTTPException) as e:
                status, t = 'error %s' % e, None
            if status == 202:
                sent[k] = t
                post_ms.append((time.time() - t) * 1000)
                k += 1
                next_at = time.monotonic() + args.interval
            else:
                post_err[status] += 1           # 409: the previous turn still runs
                next_at = time.monotonic() + 0.05

        def all_in():
            return all(len(c.arrivals) >= len(sent) for c in st.conns if c.state == 'open')
        st.run_until(all_in, time.monotonic() + 10)
        p1 = (benchlib.cpu_ticks([pid]) / hz, benchlib.cpu_ticks(ngx()) / hz, sum(os.times()[:2]), machine_busy(),
              time.monotonic())
        cs1 = ctx_switches(pid)
        frames = max(1, len(sent) * st.connected)
        fig['ctx_switches_per_delivery'] = ((cs1[0] - cs0[0]) / frames, (cs1[1] - cs0[1]) / frames)
        fig['server_cpu_us_per_delivery'] = (p1[0] - p0[0]) * 1e6 / frames
        post_ms.sort()
        fig['post_p50_ms'] = percentile(post_ms, 50)
        fig['post_max_ms'] = post_ms[-1] if post_ms else float('nan')
        span = p1[4] - p0[4]
        fig['publish_seconds'] = span
        fig['publish_cpu_pct'] = {
            'server': 100 * (p1[0] - p0[0]) / span, 'nginx': 100 * (p1[1] - p0[1]) / span,
            'client': 100 * (p1[2] - p0[2]) / span,
            'machine': 100 * os.cpu_count() * (p1[3][0] - p0[3][0]) / max(1, p1[3][1] - p0[3][1])}
        cpu1 = os.times()
        fig['client_cpu_seconds'] = (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)
        fig['wall_seconds'] = time.monotonic() - t0

        lat, seen, per_event, missing = [], [], [], 0
        open_conns = [c for c in st.conns if c.state == 'open']
        for kk, t in sent.items():
            worst = 0.0
            for c in open_conns:
                a = c.arrivals.get(kk)
                if a is None:
                    missing += 1
                    continue
                d = (a - t) * 1000
                lat.append(d)
                seen.append((c.seen_at[kk] - t) * 1000)
                worst = max(worst, d)
            per_event.append(worst)
        lat.sort()
        seen.sort()
        per_event.sort()
        dropped = sum(1 for c in st.conns if c.state == 'failed' and c.status == 200)
        fig.update({
            'events_sent': len(sent), 'post_retries': dict((str(a), b) for a, b in post_err.items()),
            'arrivals': len(lat), 'missing': missing, 'dropped_after_open': dropped,
            'no_kernel_ts': st.no_ts,
            'lat_p50_ms': percentile(lat, 50), 'lat_p99_ms': percentile(lat, 99),
            'lat_max_ms': lat[-1] if lat else float('nan'),
            'all_p50_ms': percentile(per_event, 50), 'all_p99_ms': percentile(per_event, 99),
            'all_max_ms': per_event[-1] if per_event else float('nan'),
            'seen_p50_ms': percentile(seen, 50), 'seen_p99_ms': percentile(seen, 99),
        })

        # Close, and check the server lets them go.
        st.close_all()
        gone = cdm.wait_for(lambda: s.open_stream_count() == 0, 30, 0.5)
        time.sleep(1)
        fig['server_stream_count_after_close'] = s.open_stream_count()
        fig['rss_after_close_kib'] = rss_kib(pid)
        fig['threads_after_close'] = threads(pid)
        fig['cycles'] = []
        for cyc in range(2, args.cycles + 1):
            st2 = Streams(s.port, '/api/conversations/%s/events' % conv, u.token, ctx,
                          args.connect_parallel)
            st2.open(args.streams)
            st2.run_until(lambda: st2.connected + st2.failed >= args.streams,
                          time.monotonic() + args.connect_timeout)
            st2.run_until(lambda: False, time.monotonic() + 2)
            with_kib = rss_kib(pid)
            n_open = st2.connected
            st2.close_all()
            cdm.wait_for(lambda: s.open_stream_count() == 0, 30, 0.5)
            time.sleep(1)
            fig['cycles'].append((cyc, n_open, with_kib, rss_kib(pid)))
        fig['nginx_errors'] = nginx_problems(s, elog_start)
        fig['server_alive'] = s.server is not None and s.server.poll() is None

    print()
    print('SSE through nginx (TLS): %d streams to one conversation, %d events %.0f ms apart' % (
        args.streams, args.events, args.interval * 1000))
    print('  streams open:           %d of %d (%d failed to open, %d dropped later)' % (
        fig['connected'], args.streams, fig['connect_failed'], fig['dropped_after_open']))
    if args.events:
        print('  events published:       %d (POST retries: %s)' % (
            fig['events_sent'], fig['post_retries'] or 'none'))
        print('  arrivals:               %d of %d (missing %d)' % (
            fig['arrivals'], fig['events_sent'] * fig['connected'], fig['missing']))
        print('  publish -> arrival, all (event, stream) pairs: p50 %.1f ms, p99 %.1f ms, max %.1f ms' % (
            fig['lat_p50_ms'], fig['lat_p99_ms'], fig['lat_max_ms']))
        print('  publish -> arrival at ALL streams, per event:  p50 %.1f ms, p99 %.1f ms, max %.1f ms' % (
            fig['all_p50_ms'], fig['all_p99_ms'], fig['all_max_ms']))
        print('  (arrival = kernel receive timestamp%s; the client decoded them at p50 %.1f ms, '
              'p99 %.1f ms)' % ('' if not fig['no_kernel_ts'] else
                                ', %d without one' % fig['no_kernel_ts'],
                                fig['seen_p50_ms'], fig['seen_p99_ms']))
        ok = (fig['connected'] == args.streams and fig['missing'] == 0
              and fig['dropped_after_open'] == 0 and fig['lat_p99_ms'] < 50)
        print('  target (%d streams, no errors, p99 < 50 ms): %s' % (
            args.streams, 'met' if ok else 'MISSED'))
    print('  server VmRSS: idle %.1f MiB; with %d streams %.1f MiB; per stream %.1f KiB; '
          'after closing %.1f MiB' % (mib(fig['rss_idle_kib']), fig['connected'],
                                     mib(fig['rss_streams_kib']), fig['rss_per_stream_kib'],
                                     mib(fig['rss_after_close_kib'])))
    print('  server threads: idle %d, with streams %d, after closing %d; streams it counts: '
          'open %s, after closing %s' % (fig['threads_idle'], fig['threads_streams'],
                                        fig['threads_after_close'], fig['server_stream_count'],
                                        fig['server_stream_count_after_close']))
    for cyc, n_open, with_kib, after_kib in fig['cycles']:
        print('  cycle %d: %d streams opened again: VmRSS %.1f MiB; after closing %.1f MiB' % (
            cyc, n_open, mib(with_kib), mib(after_kib)))
    print('  client (this process) CPU: %.1f s over %.1f s' % (
        fig['client_cpu_seconds'], fig['wall_seconds']))
    if args.events:
        c = fig['publish_cpu_pct']
        print('  CPU while publishing (%.1f s): server %.0f%%, nginx %.0f%%, this client %.0f%%, '
              'whole machine %.0f%% of %d%%' % (fig['publish_seconds'], c['server'], c['nginx'],
                                                c['client'], c['machine'], 100 * os.cpu_count()))
        print('  server per (event, stream) delivered: %.1f us CPU, %.2f voluntary + %.2f '
              'involuntary context switches' % ((fig['server_cpu_us_per_delivery'],) +
                                                 tuple(fig['ctx_switches_per_delivery'])))
        print('  POST /messages answered (202) after: p50 %.1f ms, max %.1f ms' % (
            fig['post_p50_ms'], fig['post_max_ms']))
    if fig['nginx_errors']:
        print('  nginx error log: %d error lines, e.g. %s' % (
            len(fig['nginx_errors']), fig['nginx_errors'][0][:200]))
    print('  server still running at the end: %s' % ('yes' if fig['server_alive'] else 'NO'))
    print('reproduce: %s %s' % (os.path.relpath(os.path.abspath(__file__), os.getcwd())
                                if False else 'bench/sse.py',
                                ' '.join(shlex.quote(a) for a in sys.argv[1:])))
    if args.json:
        fig['nginx_errors'] = fig['nginx_errors'][:20]
        with open(args.json, 'w') as f:
            json.dump(fig, f, indent=1)


if __name__ == '__main__':
    main()
