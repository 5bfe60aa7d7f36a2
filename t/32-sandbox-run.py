#!/usr/bin/python3
# 32-sandbox-run: `codumentor sandbox run` through the real helper and bwrap,
# as root and as an unprivileged service user: the exit status is the
# command's, its output reaches our stdout/stderr, --workspace DIR shows DIR
# and never modifies it, --conversation ID keeps its writes in that
# conversation's upper layer (and only there), no option gives an empty
# workspace, --net shares the network only when asked, and bad invocations
# are refused before anything runs.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()


def net_ifaces(text):
    return sorted(line.split(':')[0].strip() for line in text.splitlines()[2:] if ':' in line)


for label, user in sbx.identities():
    with sbx.Env(user) as env:
        r = env.cli('sandbox', 'run', '--', 'sh', '-c', 'echo to-out; echo to-err >&2; exit 3')
        tap.is_(r.returncode, 3, '%s: the exit status is the command\'s' % label)
        tap.is_(r.stdout, 'to-out\n', '%s: stdout reaches ours' % label)
        tap.is_(r.stderr, 'to-err\n', '%s: stderr reaches ours' % label)

        r = env.cli('sandbox', 'run', '--', 'sh', '-c', 'kill -TERM $$')
        tap.is_(r.returncode, 128 + 15, '%s: killed by a signal: 128 + signal' % label)

        # --workspace DIR: the lower layer, never modified.
        d = env.path('project')     # a checkout the service user owns
        os.mkdir(d, 0o755)
        env.chown(d)
        for name, text in (('a.txt', 'orig\n'), ('c.txt', 'keep\n')):
            with open(os.path.join(d, name), 'w') as f:
                f.write(text)
            os.chmod(os.path.join(d, name), 0o644)
            env.chown(os.path.join(d, name))
        r = env.cli('sandbox', 'run', '--workspace', d, '--', 'sh', '-c',
                    'cat a.txt; echo changed > a.txt; echo new > b.txt; rm c.txt; '
                    'cat a.txt; ls')
        tap.is_(r.returncode, 0, '%s: --workspace: ran' % label)
        tap.is_(r.stdout, 'orig\nchanged\na.txt\nb.txt\n',
                '%s: --workspace: DIR is /workspace, writable through the overlay' % label)
        with open(os.path.join(d, 'a.txt')) as f:
            tap.is_(f.read(), 'orig\n', '%s: --workspace: DIR\'s file unchanged' % label)
        tap.ok(not os.path.exists(os.path.join(d, 'b.txt')),
               '%s: --workspace: no new file in DIR' % label)
        tap.ok(os.path.exists(os.path.join(d, 'c.txt')),
               '%s: --workspace: the deleted file is still in DIR' % label)
        tap.is_(env.leftovers(), [], '%s: --workspace: the temporary upper layer is removed' % label)

        # Neither option: an empty temporary workspace.
        r = env.cli('sandbox', 'run', '--', 'sh', '-c', 'ls -A; pwd; echo x > f && cat f')
        tap.is_(r.stdout, '/workspace\nx\n', '%s: no option: an empty, writable /workspace' % label)
        tap.is_(env.leftovers(), [], '%s: no option: nothing left behind' % label)

        # --conversation ID: that conversation's workspace, writes kept.
        cid = env.make_conversation()
        r = env.cli('sandbox', 'run', '--conversation', cid, '--', 'sh', '-c',
                    'echo kept > notes.txt; mkdir -p src && echo int > src/main.c')
        tap.is_(r.returncode, 0, '%s: --conversation: ran' % label)
        ws = os.path.join(env.workspaces, cid)
        with open(os.path.join(ws, 'upper', 'notes.txt')) as f:
            tap.is_(f.read(), 'kept\n', '%s: --conversation: the write is in the upper layer' % label)
        tap.is_(os.listdir(os.path.join(ws, 'lower')), [],
                '%s: --conversation: the lower layer is untouched' % label)
        tap.is_(os.listdir(os.path.join(ws, 'merged')), [],
                '%s: --conversation: the overlay was never mounted on the host' % label)
        tap.is_(oct(os.stat(ws).st_mode & 0o777), '0o700',
                '%s: --conversation: the workspace is 0700' % label)
        r = env.cli('sandbox', 'run', '--conversation', cid, '--', 'cat', 'notes.txt', 'src/main.c')
        tap.is_(r.stdout, 'kept\nint\n', '%s: --conversation: a later run sees the earlier writes' % label)

        r = env.cli('sandbox', 'run', '--conversation', cdm.random_id(), '--', 'true')
        tap.is_(r.returncode, 125, '%s: unknown conversation: 125' % label)
        tap.like(r.stderr, r'no such conversation', '%s: unknown conversation: says so' % label)
        r = env.cli('sandbox', 'run', '--conversation', '../../etc', '--', 'true')
        tap.is_(r.returncode, 125, '%s: a malformed id is refused' % label)
        tap.like(r.stderr, r'not a conversation id', '%s: a malformed id: says so' % label)
        r = env.cli('sandbox', 'run', '--workspace', env.path('nonexistent'), '--', 'true')
        tap.is_(r.returncode, 125, '%s: a missing --workspace DIR is refused' % label)

        # The network: loopback only, unless --net.
        r = env.cli('sandbox', 'run', '--', 'cat', '/proc/net/dev')
        tap.is_(net_ifaces(r.stdout), ['lo'], '%s: default: only a loopback interface' % label)
        host = open('/proc/net/dev').read()
        r = env.cli('sandbox', 'run', '--net', '--', 'cat', '/proc/net/dev')
        tap.is_(net_ifaces(r.stdout), net_ifaces(host), '%s: --net: the host\'s interfaces' % label)

        # Usage errors: nothing runs.
        for args, name in ((['sandbox'], 'no subcommand'),
                           (['sandbox', 'run'], 'no command'),
                           (['sandbox', 'run', '--bogus', '--', 'true'], 'an unknown option'),
                           (['sandbox', 'run', '--workspace', d, '--conversation', cid, '--', 'true'],
                            'both --workspace and --conversation')):
            r = env.cli(*args)
            tap.is_(r.returncode, 2, '%s: %s: usage error (2)' % (label, name))

tap.done()
