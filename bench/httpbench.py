#!/usr/bin/python3
"""httpbench.py -- requests per second and latency through nginx (TLS), with wrk,
for GET /api/health and an authenticated GET /api/conversations, on two
stacks behind the same nginx:

    codumentor   nginx --FastCGI, unix socket--> codumentor api (one process)
    fastapi      nginx --HTTP proxy, unix socket--> uvicorn (N workers) + bench/fastapi_peer.py

Both read the same SQLite database; the token is one codumentor issued.
Started by bench/http.sh; see bench/README.md. Prints a table and the ratio.
"""

import argparse
import http.client
import json
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib   # noqa: E402
from benchlib import cdm   # noqa: E402

HERE = benchlib.HERE

PEER_SITE = """
# --- added by bench/http.py: the FastAPI + uvicorn peer, same TLS settings
# --- as conf-examples/nginx.conf, proxied the way uvicorn's deployment
# --- documentation shows (HTTP/1.1, no upstream keepalive unless asked).
upstream fastapi_peer {
    server unix:%(sock)s;
    %(keepalive)s
}
server {
    listen 127.0.0.1:%(port)d ssl;
    server_name peer.example.org;
    ssl_certificate     %(cert)s;
    ssl_certificate_key %(key)s;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:codumentor_ssl:10m;
    ssl_session_timeout 1d;
    add_header Strict-Transport-Security "max-age=31536000" always;
    client_max_body_size 1m;
    location / {
        return 404;
    }
    # The ceiling: nginx answering by itself, no application behind it (a
    # body of the same size as /api/health's), for what TLS + nginx + wrk
    # alone allow on this machine.
    location = /nginx-static {
        default_type application/json;
        return 200 '%(static_body)s';
    }
    location /api/ {
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header Connection "";
        proxy_redirect off;
        proxy_pass http://fastapi_peer;
    }
}
"""


class BenchStack(cdm.Stack):
    """cdm.Stack plus a second server block proxying to the FastAPI peer."""

    peer_keepalive = 0

    def write_nginx_config(self):
        super().write_nginx_config()
        self.peer_port = cdm.free_port()
        self.peer_sock = os.path.join(self.run_dir, 'peer.sock')
        site = os.path.join(self.nginx_dir, 'codumentor-site.conf')
        with open(site, 'a') as f:
            f.write(PEER_SITE % {
                'sock': self.peer_sock, 'port': self.peer_port,
                'cert': self.cert, 'key': self.key,
                'static_body': '{"status":"ok","version":"0","sandbox":{"available":false,'
                               '"reason":"%s"},"warnings":[]}' % ('x' * 88),
                'keepalive': ('keepalive %d;' % self.peer_keepalive
                              if self.peer_keepalive else ''),
            })


def get(port, path, token=None):
    ctx = cdm.Stack.ssl_context(None)
    conn = http.client.HTTPSConnection('127.0.0.1', port, timeout=10, context=ctx)
    hdrs = {'Host': 'localhost'}
    if token:
        hdrs['Authorization'] = 'Bearer ' + token
    try:
        conn.request('GET', path, headers=hdrs)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def children_cpu():
    """CPU seconds of our reaped children (wrk)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def machine_busy():
    """(busy ticks, total ticks) over all CPUs, from /proc/stat."""
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v[:8]) - idle, sum(v[:8])


UNITS = {'us': 1e-3, 'ms': 1.0, 's': 1000.0, 'm': 60000.0}


def to_ms(text):
    m = re.match(r'([\d.]+)(us|ms|s|m)$', text)
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_wrk(out):
    r = {}
    m = re.search(r'Requests/sec:\s+([\d.]+)', out)
    r['rps'] = float(m.group(1)) if m else float('nan')
    for pct in ('50', '75', '90', '99'):
        m = re.search(r'^\s+%s(?:\.0+)?%%\s+(\S+)' % pct, out, re.M)
        r['p' + pct] = to_ms(m.group(1)) if m else float('nan')
    m = re.search(r'(\d+) requests in', out)
    r['requests'] = int(m.group(1)) if m else 0
    m = re.search(r'Non-2xx or 3xx responses: (\d+)', out)
    r['non2xx'] = int(m.group(1)) if m else 0
    m = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', out)
    r['sockerr'] = sum(int(x) for x in m.groups()) if m else 0
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--threads', '-t', type=int, default=2, help='wrk threads (2)')
    ap.add_argument('--connections', '-c', type=int, default=64, help='wrk connections (64)')
    ap.add_argument('--duration', '-d', type=int, default=10, help='seconds per run (10)')
    ap.add_argument('--warmup', type=int, default=2, help='seconds of warm-up before each run (2)')
    ap.add_argument('--runs', type=int, default=3, help='runs per (stack, endpoint); median reported (3)')
    ap.add_argument('--workers', type=int, default=2, help='uvicorn worker processes (2)')
    ap.add_argument('--conversations', type=int, default=20, help='conversations seeded (20)')
    ap.add_argument('--peer-keepalive', type=int, default=0,
                    help='nginx upstream keepalive connections to uvicorn (0 = none, '
                         'like fastcgi_keep_conn off on the codumentor side)')
    ap.add_argument('--peer-no-access-log', action='store_true',
                    help="turn off uvicorn's access log (on by default there, as codumentor "
                         'logs every request to its log file)')
    ap.add_argument('--only', choices=('codumentor', 'fastapi'), help='one stack only')
    ap.add_argument('--no-ceiling', action='store_true',
                    help='skip the nginx-only row (GET /nginx-static, answered by nginx itself)')
    ap.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                    help='extra codumentor configuration key (repeatable)')
    args = ap.parse_args()

    benchlib.raise_nofile(4096)
    extra = {'server.heartbeat_seconds': 15}      # the shipped default, not the tests' 2
    for kv in args.set:
        k, _, v = kv.partition('=')
        extra[k] = int(v) if v.isdigit() else v
    BenchStack.peer_keepalive = args.peer_keepalive

    print('# bench/http: %s' % time.strftime('%Y-%m-%d %H:%M:%S %Z'))
    for line in benchlib.machine():
        print('# ' + line)
    print('# ' + benchlib.build_flags())

    peer = None
    with BenchStack(config=extra) as s:
        try:
            u = s.new_user('bench')
            for i in range(args.conversations):
                s.create_conversation(u.token, 'conversation %d' % i)
            # The peer: uvicorn on a unix socket, behind the second server block.
            env = dict(os.environ, PEER_DB=s.db_path(), PEER_JWT_SECRET=s.jwt_secret,
                       PEER_VERSION=(cdm.package_version() or 'peer'))
            peer_cmd = [sys.executable, '-m', 'uvicorn', '--app-dir', HERE,
                        '--uds', s.peer_sock, '--workers', str(args.workers),
                        '--log-level', 'warning'] + (
                            ['--no-access-log'] if args.peer_no_access_log else []) + [
                        'fastapi_peer:app']
            peer = subprocess.Popen(peer_cmd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=open(s.path('peer.out'), 'wb'),
                                    stderr=subprocess.STDOUT, preexec_fn=os.setsid)
            ok = cdm.wait_for(lambda: os.path.exists(s.peer_sock) and
                              _status(s.peer_port, '/api/health') == 200, 20)
            if not ok:
                sys.exit('fastapi peer did not start: ' + cdm.tail(s.path('peer.out')))
            print('# uvicorn: %s' % ' '.join(shlex.quote(a) for a in peer_cmd[1:]))
            print('# uvicorn runtime: %s' % _uvicorn_impl())

            # Same answers from both, or the comparison means nothing.
            for path, tok in (('/api/health', None), ('/api/conversations', u.token)):
                a = get(s.port, path, tok)
                b = get(s.peer_port, path, tok)
                ja, jb = json.loads(a[1]), json.loads(b[1])
                if path == '/api/conversations':
                    same = a[0] == b[0] == 200 and ja == jb and len(ja['conversations']) == args.conversations
                else:
                    same = a[0] == b[0] == 200 and ja.get('status') == jb.get('status') == 'ok'
                print('# check %s: codumentor %d (%d bytes), fastapi %d (%d bytes): %s' % (
                    path, a[0], len(a[1]), b[0], len(b[1]), 'same answer' if same else 'DIFFERENT'))
                if not same:
                    sys.exit('the two stacks answer differently: %r / %r' % (a[1][:300], b[1][:300]))
            bad = get(s.peer_port, '/api/conversations', u.token[:-2] + 'xx')
            if bad[0] != 401:
                sys.exit('fastapi peer accepted a bad signature')

            stacks = [('codumentor', s.port, lambda: [s.server_pid]),
                      ('fastapi', s.peer_port, lambda: benchlib.descendants(peer.pid))]
            if args.only:
                stacks = [x for x in stacks if x[0] == args.only]
            if not args.no_ceiling:
                stacks.append(('nginx-only', s.peer_port, lambda: []))
            nginx_pids = lambda: benchlib.descendants(s.nginx_proc.pid)   # noqa: E731
            endpoints = [('GET /api/health', '/api/health', False),
                         ('GET /api/conversations', '/api/conversations', True)]
            lua = os.path.join(HERE, 'auth.lua')
            results = {}
            hz = os.sysconf('SC_CLK_TCK')
            for run in range(args.runs):
                for ename, path, auth in endpoints:
                    for sname, port, app_pids in stacks:
                        if sname == 'nginx-only':
                            if auth:
                                continue
                            path = '/nginx-static'
                        url = 'https://127.0.0.1:%d%s' % (port, path)
                        base = ['wrk', '-t%d' % args.threads, '-c%d' % args.connections]
                        if auth:
                            base += ['-s', lua]
                        wenv = dict(os.environ, BENCH_TOKEN=u.token if auth else '')
                        if args.warmup:
                            subprocess.run(base + ['-d%ds' % args.warmup, url], env=wenv,
                                           stdout=subprocess.DEVNULL, timeout=args.warmup + 30)
                        cmd = base + ['-d%ds' % args.duration, '--latency', url]
                        ap_, np_ = app_pids(), nginx_pids()
                        c0, n0, t0 = benchlib.cpu_ticks(ap_), benchlib.cpu_ticks(np_), time.monotonic()
                        w0, m0 = children_cpu(), machine_busy()
                        w = subprocess.run(cmd, env=wenv, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True,
                                           timeout=args.duration + 60)
                        r = parse_wrk(w.stdout)
                        c1, n1, t1 = benchlib.cpu_ticks(ap_), benchlib.cpu_ticks(np_), time.monotonic()
                        w1, m1 = children_cpu(), machine_busy()
                        r['wrk_cpu'] = (w1 - w0) / (t1 - t0) * 100
                        r['all_cpu'] = (m1[0] - m0[0]) / max(1, m1[1] - m0[1]) * 100 * os.cpu_count()
                        r['app_cpu'] = (c1 - c0) / hz / (t1 - t0) * 100
                        r['nginx_cpu'] = (n1 - n0) / hz / (t1 - t0) * 100
                        r['other_cpu'] = r['all_cpu'] - r['app_cpu'] - r['nginx_cpu'] - r['wrk_cpu']
                        r['cmd'] = cmd
                        results.setdefault((ename, sname), []).append(r)
                        print('# run %d %-24s %-10s %9.0f req/s  p50 %7.2f ms  p99 %7.2f ms  '
                              'non-2xx %d  socket errors %d  cpu: app %3.0f%% nginx %3.0f%% wrk %3.0f%% other %3.0f%%' % (
                                  run + 1, ename, sname, r['rps'], r['p50'], r['p99'],
                                  r['non2xx'], r['sockerr'], r['app_cpu'], r['nginx_cpu'],
                                  r['wrk_cpu'], r['other_cpu']),
                              flush=True)
                        if w.returncode != 0 or r['requests'] == 0:
                            print(w.stdout)
            report(args, results, endpoints, stacks, s, u)
        finally:
            if peer is not None and peer.poll() is None:
                os.killpg(peer.pid, signal.SIGTERM)
                try:
                    peer.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(peer.pid, signal.SIGKILL)
                    peer.wait()


def _status(port, path):
    try:
        return get(port, path)[0]
    except (OSError, http.client.HTTPException):
        return None


def _uvicorn_impl():
    parts = []
    for mod, name in (('uvloop', 'loop'), ('httptools', 'http')):
        try:
            __import__(mod)
            parts.append('%s=%s' % (name, mod))
        except ImportError:
            parts.append('%s=%s' % (name, 'asyncio' if mod == 'uvloop' else 'h11'))
    import uvicorn
    return 'uvicorn %s, %s (what --loop auto / --http auto pick here)' % (
        uvicorn.__version__, ', '.join(parts))


def report(args, results, endpoints, stacks, s, u):
    def median_run(runs):
        return sorted(runs, key=lambda r: r['rps'])[len(runs) // 2]

    print()
    print('wrk -t%d -c%d -d%ds --latency, %d run(s) each, median run by req/s; '
          '%d conversations; uvicorn --workers %d' % (
              args.threads, args.connections, args.duration, args.runs,
              args.conversations, args.workers))
    print('%-24s %-10s %10s %9s %9s %8s %6s %6s %6s %6s' % (
        'endpoint', 'stack', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'app%', 'nginx%', 'wrk%', 'other%'))
    med = {}
    for ename, _, _ in endpoints:
        for sname, _, _ in stacks:
            runs = results.get((ename, sname))
            if not runs:
                continue
            r = med[(ename, sname)] = median_run(runs)
            print('%-24s %-10s %10.0f %9.2f %9.2f %8d %6.0f %6.0f %6.0f %6.0f' % (
                ename, sname, r['rps'], r['p50'], r['p99'],
                sum(x['non2xx'] + x['sockerr'] for x in runs), r['app_cpu'], r['nginx_cpu'],
                r['wrk_cpu'], r['other_cpu']))
    for ename, _, _ in endpoints:
        a, b = med.get((ename, 'codumentor')), med.get((ename, 'fastapi'))
        if a and b:
            ratio = a['rps'] / b['rps'] if b['rps'] else float('inf')
            print('ratio %-24s codumentor/fastapi = %.1fx throughput, p99 %.2f vs %.2f ms  '
                  '(target >= 10x: %s)' % (ename, ratio, a['p99'], b['p99'],
                                           'met' if ratio >= 10 else 'MISSED'))
            c = med.get(('GET /api/health', 'nginx-only'))
            if c:
                print('      10x fastapi would be %.0f req/s; nginx alone (no application) '
                      'does %.0f req/s here; codumentor reaches %.0f%% of that' % (
                          10 * b['rps'], c['rps'], 100 * a['rps'] / c['rps']))
    print()
    print('errors = non-2xx answers + socket errors over all runs; app%/nginx%/wrk% = CPU used')
    print('by the application process(es) / the nginx workers / wrk during the median run,')
    print('other% = the rest of the machine (kernel softirq work not charged to a process,')
    print('and anything else running); %d%% = every core busy. nginx-only = GET /nginx-static,' % (
        100 * os.cpu_count()))
    print('answered by nginx itself over the same TLS: the ceiling for anything behind it here.')
    print('reproduce: bench/http.sh %s' % ' '.join(shlex.quote(a) for a in sys.argv[1:]))
    for (ename, sname), r in med.items():
        if sname == 'codumentor':
            print('  one wrk run by hand (port and token are per run): %s%s' % (
                'BENCH_TOKEN=<token> ' if '-s' in r['cmd'] else '',
                ' '.join(shlex.quote(a) for a in r['cmd'])))


if __name__ == '__main__':
    main()
