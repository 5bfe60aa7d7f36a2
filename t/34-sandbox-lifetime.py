#!/usr/bin/python3
# 34-sandbox-lifetime: the server's sandbox client (t/sandbox-driver calls
# sandbox_run() as the engine does) against the real helper, as root and as
# a service user: background and detached processes die with their sandbox,
# a timeout kills everything the command started, cancellation works, the
# output cap keeps head and tail with a marker, there is no stdin, several
# commands run at once, writes land in the conversation's upper layer only,
# and the command's exit status comes back. The host is checked with
# /proc afterwards, not trusted from inside.
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()


def host_procs(marker):
    """Host processes whose command line contains MARKER."""
    found = []
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % p, 'rb') as f:
                cmd = f.read().replace(b'\0', b' ').decode('latin-1')
        except OSError:
            continue
        if marker in cmd and 'sandbox-driver' not in cmd and 'codumentor' not in cmd:
            found.append((int(p), cmd))
    return found


for label, user in sbx.identities():
    with sbx.Env(user) as env:
        # Background, nohup+setsid, double fork: all of them stay inside.
        script = ('sleep 1001 & setsid nohup sleep 1002 >/dev/null 2>&1 & '
                  '(sleep 1003 &) ; echo started')
        res = env.driver('--', 'sh', '-c', script)
        tap.is_(res and res[0]['rc'], 0, '%s: the command with background children ran' % label)
        tap.is_(res and res[0]['output'], 'started\n', '%s: its output' % label)
        left = cdm.wait_for(lambda: not [p for p in host_procs('sleep 100')
                                         if p[1].strip() in ('sleep 1001', 'sleep 1002', 'sleep 1003')],
                            timeout=10)
        tap.ok(left, '%s: no background or detached process outlives the sandbox' % label)

        t0 = time.monotonic()
        res = env.driver('--timeout', '1500', '--', 'sh', '-c', 'sleep 1004 & sleep 1005')
        took = time.monotonic() - t0
        r = res[0] if res else {}
        tap.is_(r.get('timed_out'), 1, '%s: timeout: reported' % label)
        tap.is_(r.get('started'), 1, '%s: timeout: the command had started' % label)
        tap.is_(r.get('signal'), 9, '%s: timeout: killed (SIGKILL)' % label)
        tap.ok(took < 30, '%s: timeout: returned in %.1f s' % (label, took))
        tap.ok(cdm.wait_for(lambda: not [p for p in host_procs('sleep 100')
                                         if p[1].strip() in ('sleep 1004', 'sleep 1005')], 10),
               '%s: timeout: everything the command started is gone' % label)

        t0 = time.monotonic()
        res = env.driver('--cancel-after', '500', '--', 'sleep', '1006')
        r = res[0] if res else {}
        tap.is_(r.get('cancelled'), 1, '%s: cancel: reported' % label)
        tap.ok(time.monotonic() - t0 < 30, '%s: cancel: returned promptly' % label)

        res = env.driver('--cap', '1000', '--', 'sh', '-c',
                         'echo FIRST; yes filler | head -c 200000; echo; echo LAST')
        r = res[0] if res else {}
        out = r.get('output', '')
        tap.is_(r.get('truncated'), 1, '%s: output cap: truncated' % label)
        tap.like(out, r'\[\.\.\. \d+ bytes of output omitted \.\.\.\]', '%s: output cap: a marker' % label)
        tap.ok(out.startswith('FIRST\n') and out.endswith('LAST\n'),
               '%s: output cap: the head and the tail are kept' % label)
        tap.ok(len(out) < 1000 + 100, '%s: output cap: %d bytes kept' % (label, len(out)))
        res = env.driver('--cap', '1000', '--', 'sh', '-c', 'echo short; echo err >&2')
        tap.is_(res and (res[0]['output'], res[0]['truncated']), ('short\nerr\n', 0),
                '%s: stdout and stderr in one stream, not truncated' % label)

        # The run ends at the exit report, not at the pipe's EOF: all the
        # command wrote must still be there, however much.
        for i in range(3):
            res = env.driver('--cap', '4000000', '--', 'sh', '-c',
                             'head -c 1000000 /dev/zero | tr "\\0" x; echo END')
            r = res[0] if res else {}
            out = r.get('output', '')
            if not tap.is_((len(out), out[-5:], r.get('truncated')), (1000004, 'xEND\n', 0),
                           '%s: 1 MB of output, all of it (run %d)' % (label, i + 1)):
                break
        # Commands of one workspace in a row (the overlay is held between
        # them, sandbox.keep_mounted_seconds): each sees the ones before.
        res = env.driver('--repeat', '4', '--', 'sh', '-c', 'echo x >> count; wc -l < count')
        tap.is_([(x['rc'], x['output']) for x in res], [(0, '%d\n' % k) for k in range(1, 5)],
                '%s: four commands in one workspace, each sees the writes before it' % label)
        res = env.driver('--timeout', '20000', '--', 'sh', '-c', 'cat; echo "stdin: EOF"')
        tap.is_(res and res[0]['output'], 'stdin: EOF\n', '%s: stdin is empty (/dev/null)' % label)

        res = env.driver('--parallel', '4', '--', 'sh', '-c', 'sleep 0.3; echo par')
        tap.is_([(x['rc'], x['exit_code'], x['output']) for x in res], [(0, 0, 'par\n')] * 4,
                '%s: four commands at once' % label)

        cid = cdm.random_id()
        res = env.driver('--conversation', cid, '--env', 'GREETING=hi', '--', 'sh', '-c',
                         'echo $GREETING > f.txt; exit 5')
        r = res[0] if res else {}
        tap.is_((r.get('rc'), r.get('exit_code')), (0, 5), '%s: exit status 5 comes back' % label)
        ws = os.path.join(env.workspaces, cid)
        try:
            with open(os.path.join(ws, 'upper', 'f.txt')) as f:
                tap.is_(f.read(), 'hi\n', '%s: the write (with the run\'s env) is in upper/' % label)
        except OSError as e:
            tap.ok(False, '%s: upper/f.txt: %s' % (label, e))
        tap.is_(os.listdir(os.path.join(ws, 'lower')), [], '%s: lower/ untouched' % label)

        res = env.driver('--', 'no-such-command-cdm')
        r = res[0] if res else {}
        tap.is_((r.get('rc'), r.get('started'), r.get('exit_code')), (0, 1, 1),
                '%s: an unknown command: bwrap exits 1' % label)
        tap.like(r.get('output', ''), r'no-such-command-cdm: No such file',
                 '%s: an unknown command: the reason is in the output' % label)

tap.done()
