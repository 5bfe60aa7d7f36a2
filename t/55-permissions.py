#!/usr/bin/python3
# 55-permissions: the instance directory, its data/ and logs/, and the
# workspace base are created 0700 and the files in them 0600; a server (or
# a CLI command) facing one that group or others can read refuses to run
# and prints the chmod that fixes it.
import os
import stat
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


with cdm.Stack(make_instance=False) as s:
    inst = s.instance_dir
    ws = s.path('workspaces')
    for p in (inst, os.path.join(inst, 'data'), os.path.join(inst, 'logs'), ws):
        tap.is_(oct(mode(p)), oct(0o700), '%s is 0700' % os.path.relpath(p, s.base))
    s.admin()
    for p in (s.db_path(), s.log_path()):
        tap.is_(oct(mode(p)), oct(0o600), '%s is 0600' % os.path.relpath(p, s.base))
    s.stop_server()

    for path, m in ((os.path.join(inst, 'data'), 0o750), (os.path.join(inst, 'logs'), 0o705),
                    (ws, 0o755), (inst, 0o770)):
        name = os.path.relpath(path, s.base)
        os.chmod(path, m)
        s.start_server(wait=False)
        try:
            rc = s.server.wait(30)
        except Exception:
            rc = None
        s.server = None
        tap.is_(rc, 1, '%s mode %o: the server refuses to start' % (name, m))
        out = s.server_output()
        tap.ok(('%s is readable by group or others (mode %04o); fix it with: chmod 700 %s'
                % (path, m, path)) in out, '%s: the message names the directory and the fix' % name) \
            or tap.diag(out[-400:])
        r = s.cli('user', 'add', 'someone', input='pw-for-someone\n')
        tap.ok(r.returncode != 0 and 'chmod 700 %s' % path in r.stderr,
               '%s: CLI commands refuse too' % name)
        os.chmod(path, 0o700)
        open(s.server_out, 'w').close()
    s.start_server()
    tap.is_(s.request('GET', '/api/health').status, 200, 'after chmod 700: the server starts')

tap.done()
