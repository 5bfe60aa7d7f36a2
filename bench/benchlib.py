"""benchlib.py -- what the benchmarks share: the integration-test harness
(t/lib/cdm.py, imported unchanged), process memory figures, machine facts.

Environment (the same as the tests'): CDM_BUILDDIR (holds the codumentor
binary; default: the current directory if it has one, else /tmp/benchbuild),
CDM_SRCDIR (default: the tree this file is in), CDM_NGINX (default
/usr/sbin/nginx).
"""

import os
import platform
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, '..'))

os.environ.setdefault('CDM_SRCDIR', SRCDIR)
if 'CDM_BUILDDIR' not in os.environ:
    os.environ['CDM_BUILDDIR'] = (os.getcwd() if os.access('codumentor', os.X_OK)
                                  else '/tmp/benchbuild')
os.environ.setdefault('CDM_NGINX', '/usr/sbin/nginx')
sys.path.insert(0, os.path.join(SRCDIR, 't', 'lib'))

import cdm   # noqa: E402,F401  (re-exported)
import tap   # noqa: E402,F401


def raise_nofile(want):
    """Raise RLIMIT_NOFILE (soft, and hard if we may) to at least WANT, for
    this process and the server and nginx it starts. Returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return soft
    if hard != resource.RLIM_INFINITY and hard < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return want
        except (ValueError, OSError):
            want = hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


def proc_status(pid):
    """/proc/PID/status as a dict of strings."""
    out = {}
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            k, _, v = line.partition(':')
            out[k] = v.strip()
    return out


def rss_kib(pid):
    """Resident set size of PID in KiB (VmRSS)."""
    return int(proc_status(pid)['VmRSS'].split()[0])


def threads(pid):
    return int(proc_status(pid)['Threads'])


def mib(kib):
    return kib / 1024.0


def machine():
    """One line per fact: date, nproc, CPU model, kernel, memory."""
    model = '?'
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    mem = '?'
    try:
        with open('/proc/meminfo') as f:
            mem = f.readline().split(':', 1)[1].strip()
    except OSError:
        pass
    nginx = subprocess.run([os.environ['CDM_NGINX'], '-v'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True).stdout.strip()
    return [
        'nproc: %d, CPU: %s, MemTotal: %s' % (os.cpu_count(), model, mem),
        'kernel: %s %s, python %s, %s' % (platform.system(), platform.release(),
                                           platform.python_version(), nginx),
        'server binary: %s' % cdm.binary(),
    ]


def build_flags():
    """CFLAGS of the build the binary came from (its config.log), if known."""
    log = os.path.join(os.environ['CDM_BUILDDIR'], 'config.log')
    try:
        with open(log) as f:
            for line in f:
                if line.startswith("CFLAGS='"):
                    return line.strip()
    except OSError:
        pass
    return 'CFLAGS unknown (no config.log in CDM_BUILDDIR)'


def percentile(sorted_vals, p):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_vals:
        return float('nan')
    k = max(0, min(len(sorted_vals) - 1, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def cpu_ticks(pids):
    """utime + stime, in clock ticks, summed over PIDS (gone ones count 0)."""
    total = 0
    for pid in pids:
        try:
            with open('/proc/%d/stat' % pid) as f:
                fields = f.read().rsplit(')', 1)[1].split()
            total += int(fields[11]) + int(fields[12])     # utime + stime
        except (OSError, IndexError, ValueError):
            pass
    return total


def descendants(pid):
    """PID and all its descendants (from /proc/*/stat ppid)."""
    parent = {}
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open('/proc/%s/stat' % d) as f:
                    parent[int(d)] = int(f.read().rsplit(')', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(c for c, pp in parent.items() if pp == p)
    return out
