#!/usr/bin/python3
# 37-gc-workspaces: `codumentor gc-workspaces` removes the workspaces whose
# last use (the root's mtime) is older than the TTL and nothing else: recent
# ones stay, a conversation with a running or queued turn stays, a symlink
# planted in the base or inside an old workspace is removed or skipped but
# never followed (what it points at survives), directories the sandbox left
# without permissions are removed, stale scratch dirs go after a day,
# --dry-run changes nothing, --ttl overrides the configuration, and the
# report says what was freed. A real sandbox run is collected too.
import os
import re
import sqlite3
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

DAY = 86400


def age(path, days):
    t = time.time() - days * DAY
    os.utime(path, (t, t), follow_symlinks=False)


def make_ws(env, cid, days, size=5000):
    root = os.path.join(env.workspaces, cid)
    for sub in ('lower', 'upper/src', 'work', 'merged'):
        os.makedirs(os.path.join(root, sub), 0o700, exist_ok=True)
    with open(os.path.join(root, 'upper', 'src', 'file.bin'), 'wb') as f:
        f.write(b'x' * size)
    age(root, days)
    return root


with sbx.Env(None, config={'workspace_isolation.ttl_days': 30}) as env:
    cid_running = env.make_conversation()
    db = sqlite3.connect(os.path.join(env.instance, 'data', 'codumentor.db'))
    db.execute("INSERT INTO turns (id, conversation_id, status, created_at, updated_at) "
               "VALUES (?, ?, 'running', 'x', 'x')", (cdm.random_id(), cid_running))
    db.commit()
    db.close()

    outside = env.path('outside')
    os.mkdir(outside)
    with open(os.path.join(outside, 'precious'), 'w') as f:
        f.write('keep me')
    old = make_ws(env, cdm.random_id(), 40)
    # Planted inside an old workspace: a link out, and a dir without permissions.
    os.symlink(outside, os.path.join(old, 'upper', 'link-out'))
    os.makedirs(os.path.join(old, 'work', 'work'))
    os.chmod(os.path.join(old, 'work', 'work'), 0)
    age(old, 40)
    old2 = make_ws(env, cdm.random_id(), 35)
    recent = make_ws(env, cdm.random_id(), 5)
    running = make_ws(env, cid_running, 60)
    planted = os.path.join(env.workspaces, cdm.random_id())
    os.symlink(outside, planted)
    age(planted, 90)
    age(outside, 90)
    scratch = os.path.join(env.workspaces, '.run-abc123')
    os.makedirs(os.path.join(scratch, 'upper'))
    age(scratch, 2)
    other = os.path.join(env.workspaces, 'not-a-conversation')
    os.mkdir(other)
    age(other, 90)

    r = env.cli('gc-workspaces', '--dry-run')
    tap.is_(r.returncode, 0, '--dry-run: exit 0')
    tap.like(r.stdout, r'would remove %s' % os.path.basename(old), '--dry-run: names the old workspace')
    tap.like(r.stdout, r'would free 3 workspaces', '--dry-run: three candidates')
    tap.ok(all(os.path.exists(p) for p in (old, old2, scratch)), '--dry-run: nothing removed')

    r = env.cli('gc-workspaces', '--ttl', '38')
    tap.is_(r.returncode, 0, '--ttl 38: exit 0')
    tap.ok(not os.path.exists(old) and os.path.exists(old2),
           '--ttl 38: the 40-day-old goes, the 35-day-old stays')

    r = env.cli('gc-workspaces')
    tap.is_(r.returncode, 0, 'exit 0')
    tap.ok(not os.path.exists(old2), 'past the configured TTL (30 days): removed')
    tap.like(r.stdout, r'removed %s: \d+ files, \d+ bytes' % os.path.basename(old2),
             'the report names it with files and bytes')
    m = re.search(r'freed (\d+) workspaces, (\d+) bytes', r.stdout)
    tap.ok(m and m.group(1) == '1' and int(m.group(2)) >= 5000, 'the summary: count and bytes freed')
    tap.ok(os.path.exists(recent), 'a recent workspace stays')
    tap.ok(os.path.exists(running), 'a conversation with a running turn stays')
    tap.like(r.stdout, r'skipped %s: a turn is running' % cid_running, 'and the report says why')
    tap.ok(os.path.islink(planted), 'a symlink in the base is not followed (nor removed)')
    tap.like(r.stdout, r'skipped %s: a symbolic link' % os.path.basename(planted),
             'and the report says so')
    with open(os.path.join(outside, 'precious')) as f:
        tap.is_(f.read(), 'keep me', 'what the symlinks point at is untouched')
    tap.ok(not os.path.exists(scratch), 'a day-old scratch workspace is removed')
    tap.ok(os.path.exists(other), 'a directory that is no workspace stays')

    r = env.cli('gc-workspaces', '--ttl', '0')
    tap.is_(r.returncode, 2, '--ttl 0: usage error')
    r = env.cli('gc-workspaces', '--bogus')
    tap.is_(r.returncode, 2, 'an unknown option: usage error')

    # A workspace a real sandbox wrote (overlay's work/work is 0000).
    cid = env.make_conversation()
    r = env.cli('sandbox', 'run', '--conversation', cid, '--', 'sh', '-c',
                'mkdir -p a/b && echo x > a/b/c && ln -s /etc/passwd p && rm -f nothing')
    tap.is_(r.returncode, 0, 'a real sandbox run wrote its workspace')
    root = os.path.join(env.workspaces, cid)
    age(root, 31)
    r = env.cli('gc-workspaces')
    tap.ok(not os.path.exists(root), 'and that workspace is collected too')
    tap.ok(os.path.exists('/etc/passwd'), 'its symlink to /etc/passwd was not followed')

tap.done()
