#!/usr/bin/python3
# 35-sandbox-fail-closed: each way isolation can be missing, provoked for
# real — bwrap at a missing path or not in PATH, the seccomp blob for this
# architecture and mode missing, the workspace base not writable, the helper
# binary missing — makes `codumentor sandbox run` refuse with its own error
# (exit 125) without running anything (the command would have left a file in
# the conversation's upper layer), `codumentor check` print the failed line
# and exit 1, and /api/health through nginx report sandbox.available false
# with the same cause. Isolation disabled is the one state where commands
# run host-direct; `check` says so and exits 0.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()
arch = os.uname().machine
seccomp = 'enforce' if sbx.blobs_present() else 'off'
good_blobs = {'sandbox.seccomp': seccomp, 'sandbox.seccomp_dir': sbx.BLOBS}


def cases(env):
    """(name, config overrides, extra environment, regex for the reason)"""
    empty = env.path('empty-blobs')
    os.makedirs(empty, exist_ok=True)
    a_file = env.path('not-a-dir')
    with open(a_file, 'w') as f:
        f.write('x')
    return [
        ('bwrap at a missing path', {'sandbox.bwrap_path': '/nonexistent/bwrap'}, {},
         r'bubblewrap is not available: /nonexistent/bwrap: No such file'),
        ('bwrap not in PATH', {}, {'PATH': '/nonexistent'},
         r"bubblewrap is not available: 'bwrap' not found in PATH"),
        ('seccomp blob missing', {'sandbox.seccomp': 'enforce', 'sandbox.seccomp_dir': empty}, {},
         r'seccomp filter cannot be loaded: %s/%s-enforce.bpf: No such file' % (empty, arch)),
        ('workspace base not a directory',
         {'workspace_isolation.base_dir': os.path.join(a_file, 'ws')}, {},
         # --conversation opens the instance first, which checks the base too
         r'(workspace base is not usable: |cannot create ).*not-a-dir/ws: Not a directory'),
        ('helper missing', {'sandbox.helper_path': '/nonexistent/codumentor-sandbox'}, {},
         r'sandbox helper /nonexistent/codumentor-sandbox cannot be run'),
    ]


with sbx.Env(None) as env:
    cid = env.make_conversation()
    upper = os.path.join(env.workspaces, cid, 'upper')
    base_cfg = dict(env.config)
    for name, cfg, extra, reason in cases(env):
        env.config = dict(base_cfg)
        env.config.update(cfg)
        env.write_config()
        r = env.cli('sandbox', 'run', '--conversation', cid, '--', 'sh', '-c',
                    'echo ran > marker', env=extra)
        tap.is_(r.returncode, 125, '%s: sandbox run refuses (125)' % name)
        tap.like(r.stderr, r'(sandbox unavailable: .*)?' + reason, '%s: and names the cause' % name)
        tap.ok(not os.path.exists(os.path.join(upper, 'marker')), '%s: nothing ran' % name)
        tap.is_(r.stdout, '', '%s: no output from a command' % name)
        r = env.cli('check', env=extra)
        tap.is_(r.returncode, 1, '%s: check exits 1' % name)
        tap.like(r.stdout, r'FAILED', '%s: check prints the failed prerequisite' % name)
        tap.like(r.stdout, r'sandbox: UNAVAILABLE: .*' + reason, '%s: check gives the reason' % name)
    env.config = dict(base_cfg)
    env.write_config()
    r = env.cli('check')
    tap.is_(r.returncode, 0, 'all present: check exits 0')
    for line in ('helper', 'bwrap', 'seccomp', 'workspace_base', 'user_namespaces', 'overlay',
                 'sandbox'):
        tap.like(r.stdout, r'(?m)^sandbox\.%s: ok: ' % line, 'check: sandbox.%s: ok' % line)
    tap.like(r.stdout, r'(?m)^sandbox: available$', 'check: sandbox: available')

    # An unwritable base, as an unprivileged user (root writes anyway).
    user = sbx.service_user() or (None if os.geteuid() == 0 else 'self')
    if user is not None:
        with sbx.Env(user if user != 'self' else None) as uenv:
            ro = uenv.path('readonly')
            os.mkdir(ro, 0o500)
            uenv.chown(ro)
            uenv.config['workspace_isolation.base_dir'] = os.path.join(ro, 'ws')
            uenv.write_config()
            r = uenv.cli('sandbox', 'run', '--', 'true')
            tap.is_(r.returncode, 125, 'read-only base: refused')
            tap.like(r.stderr, r'workspace base is not usable: .*readonly/ws: Permission denied',
                     'read-only base: names the cause')
    else:
        tap.skip('no unprivileged user to make a read-only base for', 2)

    # Isolation disabled: no sandbox to verify, but check is content.
    env.config['workspace_isolation.enabled'] = False
    env.write_config()
    r = env.cli('sandbox', 'run', '--', 'true')
    tap.is_(r.returncode, 125, 'isolation disabled: sandbox run refuses')
    tap.like(r.stderr, r'workspace isolation is disabled', 'isolation disabled: says so')
    r = env.cli('check')
    tap.is_(r.returncode, 0, 'isolation disabled: check exits 0')
    tap.like(r.stdout, r'isolation disabled in the configuration', 'isolation disabled: check says so')

# /api/health through nginx, with the same causes (PATH is the server's own).
with sbx.Env(None) as env:
    for name, cfg, extra, reason in cases(env):
        if extra:
            continue
        conf = dict(good_blobs)
        conf.update(cfg)
        if 'workspace_isolation.base_dir' in cfg:
            # The server checks its private directories before anything else.
            with cdm.Stack(config=conf, start=False) as s:
                s.start_server(wait=False)
                try:
                    rc = s.server.wait(timeout=30)
                except Exception:
                    rc = None
                tap.is_(rc, 1, 'server, %s: refuses to start' % name)
                tap.like(s.server_output(), r'cannot create .*not-a-dir/ws: Not a directory',
                         'server, %s: and says why' % name)
            continue
        with cdm.Stack(config=conf) as s:
            r = s.request('GET', '/api/health')
            sb = (r.json or {}).get('sandbox', {})
            tap.is_(sb.get('available'), False, 'health, %s: available false' % name)
            tap.like(sb.get('reason', ''), reason[:60], 'health, %s: the reason' % name)
            tap.like(s.server_log(), r'sandbox unavailable, execution tools are disabled',
                     'health, %s: logged at start' % name)

tap.done()
