#!/usr/bin/python3
"""sandbox.py -- the cost of starting one sandboxed command.

Runs `true` through the helper's shell profile with the server's own client
code (t/sandbox-driver --repeat: a SPAWN over the socketpair, the user+mount
namespace with the overlay, bwrap with the full profile and the seccomp
blob, the exit reported back, the output drained), and as a bare
`bwrap --unshare-all --ro-bind /usr /usr ... true` started from this script,
interleaved in batches in the same run so all see the same machine load.

Three series:
  held   the workspace's overlay is already mounted: the helper keeps it
         between commands (sandbox.keep_mounted_seconds) and remounts it
         right after a file-tool write, off the command's path. Every
         command of a conversation but its first (after an idle period)
  turn   each command in a new workspace, 20 ms after the server asked
         for its overlay (PREPARE) as it does when a turn starts: the first
         command of a turn, the model's thinking time standing in for 20 ms
  first  each command in a new workspace with nothing prepared: the helper
         creates the user and mount namespaces and mounts the overlay on the
         command's path (a command arriving before the mount is done)
  bare   bare bwrap, no overlay, no profile, back to back (for held and
         first) and each 20 ms after the previous (for turn: an idle
         machine's caches are colder, whoever starts the process)

Prints p50/p99 of each, the ratios to bare, whether the target (p50 <= 1.5x
bare bwrap and < 15 ms) is met for each, and the command that reproduces
it.

    python3 bench/sandbox.py [--runs 200] [--seccomp enforce|audit|off]
                             [--service-user]

--service-user runs the helper and bare bwrap as the unprivileged test user
(as root only), the production set-up. Needs a build with t/sandbox-driver
(make check builds it) and the seccomp blobs (make). CDM_BUILDDIR as for
the other benchmarks.
"""

import argparse
import json
import os
import platform
import subprocess
import sys

import benchlib   # noqa: F401  (sets CDM_BUILDDIR, imports cdm)
import cdm
import sbx

IDLE_MS = 20   # the model's thinking time between a turn's start and its command

BARE = ['bwrap', '--unshare-all', '--ro-bind', '/usr', '/usr',
        '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64',
        '--symlink', 'usr/bin', '/bin', '--proc', '/proc', '--dev', '/dev', 'true']


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


# The bare series is timed by a Python child already running as the user,
# so each bwrap is started the same way (vfork+exec) whoever runs it; a
# preexec_fn that drops privileges would force a full fork of this process
# per run and make bare bwrap look slower than it is.
BARE_LOOP = """
import json, subprocess, sys, time
argv, n, idle, ms = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), []
for _ in range(n):
    time.sleep(idle)
    t0 = time.perf_counter()
    if subprocess.run(argv, env={}, stdin=subprocess.DEVNULL).returncode != 0:
        sys.exit('bare bwrap failed')
    ms.append((time.perf_counter() - t0) * 1000)
print(json.dumps(ms))
"""


def bare_batch(n, user, idle_ms=0):
    kw = {}
    if user is not None:
        kw = {'user': user.pw_uid, 'group': user.pw_gid, 'extra_groups': []}
    # Debian's interpreter: one under /root (pyenv) is not the user's to run.
    py = '/usr/bin/python3' if os.access('/usr/bin/python3', os.X_OK) else sys.executable
    r = subprocess.run([py, '-c', BARE_LOOP, json.dumps(BARE), str(n), str(idle_ms / 1000.0)],
                       stdout=subprocess.PIPE, text=True, cwd='/', **kw)
    if r.returncode != 0:
        sys.exit('bare bwrap runs failed')
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=200)
    ap.add_argument('--batch', type=int, default=20)
    ap.add_argument('--seccomp', default='enforce')
    ap.add_argument('--service-user', action='store_true')
    a = ap.parse_args()
    if not os.access(sbx.DRIVER, os.X_OK):
        sys.exit('no %s: run make check (or make t/sandbox-driver) first' % sbx.DRIVER)
    user = sbx.service_user() if a.service_user else None
    if a.service_user and user is None:
        sys.exit('--service-user needs root (to create and become %s)' % sbx.SVC_USER)
    series = {'held': [], 'turn': [], 'first': [], 'bare': [], 'bare_idle': []}
    env = sbx.Env(user, seccomp=a.seccomp)
    try:
        left = a.runs
        while left > 0:
            n = min(a.batch, left)
            for name, extra in (('held', ()), ('turn', ('--fresh', '--prepare', str(IDLE_MS))),
                                ('first', ('--fresh',))):
                # One more than n: the first command of a new helper also
                # loads its code and the workspace's inodes; not counted.
                res = env.driver('--repeat', str(n + 1), *extra, '--', 'true', timeout=600)
                bad = [r for r in res if r.get('rc') != 0 or r.get('exit_code') != 0]
                if bad or len(res) != n + 1:
                    sys.exit('%s runs failed: %r' % (name, (bad or res)[:3]))
                series[name] += [r['ms'] for r in res[1:]]
            series['bare'] += bare_batch(n, user)
            series['bare_idle'] += bare_batch(n, user, IDLE_MS)
            left -= n
        seccomp = env.seccomp
    finally:
        env.__exit__(None, None, None)
    p = {k: (pct(v, 50), pct(v, 99)) for k, v in series.items()}
    who = user.pw_name if user else 'uid %d' % os.geteuid()
    print('machine: %s, %s, %d cores, kernel %s' % (platform.node(), platform.machine(),
                                                     os.cpu_count(), platform.release()))
    print('runs: %d each, interleaved in batches of %d; seccomp %s; as %s' % (
        a.runs, a.batch, seccomp, who))
    rows = (('held', 'helper, overlay held (steady state)', 'bare'),
            ('turn', 'helper, first command of a turn', 'bare_idle'),
            ('first', 'helper, overlay mounted for the command', 'bare'),
            ('bare', 'bare bwrap, back to back', None),
            ('bare_idle', 'bare bwrap, %d ms apart' % IDLE_MS, None))
    out = {}
    for k, label, base in rows:
        line = '%-40s p50 %6.2f ms  p99 %6.2f ms' % (label + ':', p[k][0], p[k][1])
        out[k] = {'p50_ms': round(p[k][0], 2), 'p99_ms': round(p[k][1], 2)}
        if base:
            ratio = p[k][0] / p[base][0]
            met = ratio <= 1.5 and p[k][0] < 15
            line += '  %.2fx %s  target %s' % (ratio, base, 'met' if met else 'NOT met')
            out[k].update(ratio=round(ratio, 2), target_met=met)
        print(line)
    print('target: p50 <= 1.5x bare bwrap and < 15 ms')
    print('reproduce: CDM_BUILDDIR=%s python3 bench/sandbox.py --runs %d --seccomp %s%s' % (
        cdm.BUILDDIR, a.runs, a.seccomp, ' --service-user' if a.service_user else ''))
    print(json.dumps(out))


if __name__ == '__main__':
    main()
