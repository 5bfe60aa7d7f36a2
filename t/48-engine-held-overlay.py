#!/usr/bin/python3
# 48-engine-held-overlay: the helper mounts a conversation's overlay when a
# turn starts and keeps it mounted between its commands
# (sandbox.keep_mounted_seconds), and never serves a stale view from it. Through whole turns against the real server, helper
# and bwrap: what the file tools write (a new file the shell had looked for,
# an edit, a file in a new directory) is what the next shell command reads;
# a workspace removed from the host between two commands (as gc-workspaces
# does) comes back empty instead of showing the old overlay; the helper
# holds the namespaces (its fds) only while they are fresh, not at all with
# keep_mounted_seconds 0, and drops them after the idle time; the host's
# merged/ directory stays empty throughout; no held descriptor leaks into a
# sandbox. As root (also with keep_mounted_seconds 0) and, with the server
# and the CLI running as the unprivileged service user, as in production.
import os
import shutil
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()
SECCOMP = {'sandbox.seccomp': 'enforce'} if sbx.blobs_present() else {'sandbox.seccomp': 'off'}
KEEP = 3


def helper_pid(server_pid):
    kids = [pid for pid, comm in sbx.children(server_pid) if comm.startswith('codumentor-sand')]
    return kids[0] if kids else None


def uid_of(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('Uid:'):
                return int(line.split()[1])
    return None


def held_namespaces(pid):
    return len(sbx.held_mount_namespaces(pid))


def run_turn(s, u, cid, st, scenario, on_approval=None, timeout=60):
    """Post SCENARIO and follow its turn; approve each shell call (after
    calling on_approval(call_id)). Returns {call_id: tool.result data}."""
    tid = llm.post(s, u, cid, '[[scenario:%s]] go' % scenario)
    results, end = {}, None
    deadline = time.monotonic() + timeout
    while end is None and time.monotonic() < deadline:
        ev = st.next_event(timeout=deadline - time.monotonic())
        d = ev.data if isinstance(ev.data, dict) else {}
        if d.get('turn_id') != tid:
            continue
        if ev.type == 'approval.required':
            if on_approval:
                on_approval(d['call_id'])
            s.request('POST', '/api/conversations/%s/approvals/%s' % (cid, d['call_id']),
                      body={'decision': 'approve'}, token=u.token)
        elif ev.type == 'tool.result':
            results[d.get('call_id')] = d
        elif ev.type in llm.END_TYPES:
            end = ev.type
    tap.is_(end, 'turn.completed', '%s: the turn completes' % scenario)
    return results


RUNS = [('keep_mounted_seconds %d' % KEEP, KEEP, None),
        ('keep_mounted_seconds 0', 0, None)]
SVC = sbx.service_user()
if SVC is not None:
    RUNS.append(('as service user %s, keep_mounted_seconds %d' % (SVC.pw_name, KEEP), KEEP, SVC))

for label, keep, user in RUNS:
    cfg = dict(SECCOMP)
    cfg['sandbox.keep_mounted_seconds'] = keep
    cfg['tools.shell_always_allow'] = True
    with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**cfg), user=user) as s:
        health = s.request('GET', '/api/health').json or {}
        if not (health.get('sandbox') or {}).get('available'):
            tap.ok(False, '%s: the sandbox is available (%r)' % (label, health.get('sandbox')))
            continue
        hp = helper_pid(s.server_pid)
        tap.ok(hp, '%s: the helper runs (pid %s)' % (label, hp))
        if user is not None:
            tap.is_((uid_of(s.server_pid), uid_of(hp)), (user.pw_uid, user.pw_uid),
                    '%s: the server and its helper run as that user' % label)
        u = s.new_user('holder')

        # -- a turn's start mounts its workspace before any command
        cid0 = s.create_conversation(u.token, 'prepared')
        st0 = s.open_stream(cid0, u.token)
        before = held_namespaces(hp)
        run_turn(s, u, cid0, st0, 'hello')
        tap.ok(os.path.isdir(s.path('workspaces', cid0, 'upper')),
               '%s: a turn creates its workspace' % label)
        if keep:
            tap.ok(cdm.wait_for(lambda: held_namespaces(hp) == before + 1, timeout=KEEP - 0.5),
                   '%s: and the helper holds its overlay, with no command run' % label)
        else:
            tap.is_(held_namespaces(hp), 0, '%s: and the helper holds nothing' % label)

        # -- the file tools' writes reach the next command
        cid = s.create_conversation(u.token, 'held')
        st = s.open_stream(cid, u.token)
        merged = s.path('workspaces', cid, 'merged')
        res = run_turn(s, u, cid, st, 'held-overlay')
        first = res.get('ho_sh1', {})
        tap.is_((first.get('ok'), first.get('output')), (True, 'no new.txt\none\n'),
                '%s: the first command looked for new.txt and wrote seen.txt' % label) or tap.diag(first)
        tap.is_([res.get(c, {}).get('ok') for c in ('ho_w1', 'ho_e1', 'ho_w2')], [True, True, True],
                '%s: write_file, edit_file, write_file into a new directory' % label)
        second = res.get('ho_sh2', {})
        tap.is_((second.get('ok'), second.get('output')), (True, 'made by write_file\ntwo\ninner\n'),
                '%s: the next command sees all three writes' % label) or tap.diag(second)
        tap.is_(os.listdir(merged), [], '%s: merged/ on the host stays empty' % label)
        if keep:
            tap.ok(held_namespaces(hp) >= 1, '%s: the helper holds the overlay after the command' % label)
        else:
            tap.is_(held_namespaces(hp), 0, '%s: the helper holds nothing' % label)

        # -- `codumentor sandbox run --conversation` writes from outside the
        # server: the next command sees it (the layers-changed marker)
        res = run_turn(s, u, cid, st, 'held-overlay-cli-1')
        tap.is_(res.get('cl1', {}).get('output'), 'no cli.txt\n',
                '%s: a command looks for cli.txt, which is not there' % label)
        r = s.cli('sandbox', 'run', '--conversation', cid, '--', 'sh', '-c', 'echo from the cli > cli.txt')
        tap.is_(r.returncode, 0, '%s: sandbox run --conversation wrote cli.txt' % label) or tap.diag(r.stderr)
        res = run_turn(s, u, cid, st, 'held-overlay-cli-2')
        tap.is_(res.get('cl2', {}).get('output'), 'from the cli\n',
                '%s: the next command of the server reads it' % label) or tap.diag(res)

        # -- no held descriptor inside a sandbox
        res = run_turn(s, u, cid, st, 'shell-ls-fd')
        out = res.get('fd1', {}).get('output', '')
        tap.is_(out.split(), ['0', '1', '2', '3'],
                '%s: a sandboxed command has fds 0-2 (and ls its own 3), nothing held' % label) \
            or tap.diag(out)

        # -- a workspace removed from the host between two commands
        s.extra['tools.shell_always_allow'] = False
        s.write_config()
        s.restart_server()
        hp = helper_pid(s.server_pid)
        cid2 = s.create_conversation(u.token, 'removed')
        st2 = s.open_stream(cid2, u.token)
        ws2 = s.path('workspaces', cid2)

        def remove(call_id):
            if call_id == 'hr_sh2':
                shutil.rmtree(ws2)
        res = run_turn(s, u, cid2, st2, 'held-overlay-removed', on_approval=remove)
        tap.is_(res.get('hr_sh1', {}).get('output'), 'old.txt\n', '%s: the first command wrote old.txt' % label)
        tap.is_((res.get('hr_sh2', {}).get('ok'), res.get('hr_sh2', {}).get('output')), (True, ''),
                '%s: after the removal the next command sees an empty workspace' % label) \
            or tap.diag(res.get('hr_sh2'))
        tap.is_(sorted(os.listdir(os.path.join(ws2, 'upper'))), ['fresh.txt'],
                '%s: and writes into the new upper layer' % label)
        tap.is_(os.listdir(os.path.join(ws2, 'merged')), [],
                '%s: not into the plain merged/ directory' % label)

        # -- dropped when idle
        if keep:
            tap.ok(cdm.wait_for(lambda: held_namespaces(hp) == 0, timeout=keep + 10),
                   '%s: nothing is held %d s after the last command' % (label, keep))
            tap.is_(helper_pid(s.server_pid), hp, '%s: by the same helper process' % label)

tap.done()
