#!/usr/bin/python3
# 42-engine-traversal: every file tool aimed outside the conversation's
# workspace — absolute paths, "..", a symlink to /etc, a symlink to a
# directory beside the workspace, a chain of symlinks, /proc/self/root, a
# symlink to a file outside, a FIFO and a device node — is refused with a
# reason, and nothing outside is read (no secret in any output or request
# to the model) or written. With isolation enabled and the sandbox
# unavailable, file tools refuse (fail closed) and say why.
import os
import stat
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402

SECRET = 'TOPSECRET-4d1c'

with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**{'workspace_isolation.enabled': False})) as s:
    u = s.new_user('climber')
    cid = s.create_conversation(u.token, 'escape')
    outside = s.path('outside')
    os.mkdir(outside, 0o700)
    with open(os.path.join(outside, 'secret.txt'), 'w') as f:
        f.write(SECRET + '\n')
    before = sorted(os.listdir(outside))
    # The workspace exists once a turn touched it; make it now to plant links.
    up = s.path('workspaces', cid, 'upper')
    for d in ('lower', 'upper', 'work'):
        os.makedirs(s.path('workspaces', cid, d), 0o700, exist_ok=True)
    os.symlink('/etc', os.path.join(up, 'etc'))
    os.symlink(outside, os.path.join(up, 'out'))
    os.symlink('c2', os.path.join(up, 'c1'))
    os.symlink('../../../outside', os.path.join(up, 'c2'))
    os.symlink('/proc/self/root', os.path.join(up, 'p'))
    os.symlink(os.path.join(outside, 'secret.txt'), os.path.join(up, 'secretlink'))
    os.mkfifo(os.path.join(up, 'fifo'))
    os.mkdir(os.path.join(up, 'sub'))
    have_dev = True
    try:
        os.mknod(os.path.join(up, 'dev'), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError:
        have_dev = False

    st = s.open_stream(cid, u.token)
    tid = llm.post(s, u, cid, '[[scenario:traversal]] escape')
    ev = llm.turn_events(st, tid, timeout=60)
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'the turn completes (no hang on the FIFO)')
    res = {r['call_id']: r for r in llm.of_type(ev, 'tool.result')}
    calls = llm.load_scenario('traversal')['steps'][0]['tool_calls']
    for c in calls:
        cid_ = c['id']
        r = res.get(cid_)
        if cid_ in ('s_all', 'l_root'):
            continue
        if cid_ == 'r_dev' and not have_dev:
            tap.skip('creating a device node needs CAP_MKNOD')
            continue
        tap.ok(r is not None and r.get('ok') is False,
               '%s %s: refused' % (c['name'], c['arguments'].get('path'))) or tap.diag(repr(r))
        tap.like((r or {}).get('error', ''), r'refused|outside|absolute|does not exist|not a directory|symlink',
                 '%s: with a reason' % cid_)
    tap.is_(res.get('s_all', {}).get('output'), 'no matches\n',
            'a search of the whole workspace does not follow symlinks out')
    tap.ok(res.get('l_root', {}).get('ok'), 'the root still lists') or tap.diag(res.get('l_root'))
    everything = repr([e.data for e, _ in ev]) + repr(m.requests())
    tap.ok(SECRET not in everything and 'root:x:0:0' not in everything,
           'no secret and no /etc/passwd line in any event or model request')
    tap.is_(sorted(os.listdir(outside)), before, 'nothing was created outside')
    with open(os.path.join(outside, 'secret.txt')) as f:
        tap.is_(f.read(), SECRET + '\n', 'the file outside is unchanged')
    tap.ok(not os.path.exists('/tmp/cdm-evil'), 'no file written at the absolute path')
    tap.ok(os.path.islink(os.path.join(up, 'secretlink')), 'the symlink was not replaced by a write')
    tap.ok(stat.S_ISFIFO(os.lstat(os.path.join(up, 'fifo')).st_mode), 'the FIFO is still a FIFO')

# With isolation on and no sandbox, the file tools refuse: fail closed.
with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**{'workspace_isolation.enabled': True})) as s:
    h = s.request('GET', '/api/health').json or {}
    if (h.get('sandbox') or {}).get('available'):
        tap.skip('the sandbox is available here, so file tools run', 2)
    else:
        u = s.new_user('closed')
        cid = s.create_conversation(u.token, 'closed')
        st = s.open_stream(cid, u.token)
        tid = llm.post(s, u, cid, '[[scenario:tools-files]] write')
        ev = llm.turn_events(st, tid)
        r = (llm.of_type(ev, 'tool.result') or [{}])[0]
        tap.is_(r.get('ok'), False, 'isolation enabled, sandbox unavailable: write_file refused')
        tap.like(r.get('error', ''), r'isolation is enabled but unavailable', 'saying why')
        tap.ok(not os.path.exists(s.path('workspaces', cid, 'upper', 'notes')), 'and nothing was written')
tap.done()
