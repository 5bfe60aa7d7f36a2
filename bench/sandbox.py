#!/usr/bin/python3
"""sandbox.py -- the cost of starting one sandboxed command.

Runs `true` N times through the helper's shell profile (the server's own
client code, t/sandbox-driver --repeat: a SPAWN over the socketpair, the
user+mount namespace with the overlay mounted, bwrap with the full profile
and the seccomp blob, the exit reported back, the output pipe drained), and
N times as a bare `bwrap --unshare-all --ro-bind /usr /usr ... true` started
from this script, interleaved in batches in the same run so both see the
same machine load. Prints p50/p99 of each, the ratio, whether the target
(p50 <= 1.5x bare bwrap and < 15 ms) is met, and the command that
reproduces it.

    python3 bench/sandbox.py [--runs 200] [--seccomp enforce|audit|off]

Needs a build with t/sandbox-driver (make check builds it) and the seccomp
blobs (make). CDM_BUILDDIR as for the other benchmarks.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import benchlib   # noqa: F401  (sets CDM_BUILDDIR, imports cdm)
import cdm
import sbx

BARE = ['bwrap', '--unshare-all', '--ro-bind', '/usr', '/usr',
        '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64',
        '--symlink', 'usr/bin', '/bin', '--proc', '/proc', '--dev', '/dev', 'true']


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=200)
    ap.add_argument('--batch', type=int, default=20)
    ap.add_argument('--seccomp', default='enforce')
    a = ap.parse_args()
    if not os.access(sbx.DRIVER, os.X_OK):
        sys.exit('no %s: run make check (or make t/sandbox-driver) first' % sbx.DRIVER)
    helper, bare = [], []
    with sbx.Env(None, seccomp=a.seccomp) as env:
        left = a.runs
        while left > 0:
            n = min(a.batch, left)
            res = env.driver('--repeat', str(n), '--', 'true', timeout=600)
            bad = [r for r in res if r.get('rc') != 0 or r.get('exit_code') != 0]
            if bad or len(res) != n:
                sys.exit('helper runs failed: %r' % (bad or res)[:3])
            helper += [r['ms'] for r in res]
            for _ in range(n):
                t0 = time.perf_counter()
                r = subprocess.run(BARE, env={}, stdin=subprocess.DEVNULL)
                bare.append((time.perf_counter() - t0) * 1000)
                if r.returncode != 0:
                    sys.exit('bare bwrap failed')
            left -= n
        seccomp = env.seccomp
    hp50, hp99, bp50, bp99 = pct(helper, 50), pct(helper, 99), pct(bare, 50), pct(bare, 99)
    ratio = hp50 / bp50
    met = ratio <= 1.5 and hp50 < 15
    print('machine: %s, %s, %d cores, kernel %s' % (platform.node(), platform.machine(),
                                                     os.cpu_count(), platform.release()))
    print('runs: %d each, interleaved in batches of %d; seccomp %s; as uid %d' % (
        a.runs, a.batch, seccomp, os.geteuid()))
    print('helper shell profile (overlay + seccomp): p50 %.2f ms  p99 %.2f ms' % (hp50, hp99))
    print('bare bwrap --unshare-all ... true:         p50 %.2f ms  p99 %.2f ms' % (bp50, bp99))
    print('ratio p50: %.2fx  target (<= 1.5x and < 15 ms): %s' % (ratio, 'met' if met else 'NOT met'))
    print('reproduce: CDM_BUILDDIR=%s python3 bench/sandbox.py --runs %d --seccomp %s' % (
        cdm.BUILDDIR, a.runs, a.seccomp))
    print(json.dumps({'helper_p50_ms': round(hp50, 2), 'helper_p99_ms': round(hp99, 2),
                      'bare_p50_ms': round(bp50, 2), 'bare_p99_ms': round(bp99, 2),
                      'ratio': round(ratio, 2), 'target_met': met}))


if __name__ == '__main__':
    main()
