#!/usr/bin/python3
# 64-deploy-files: the deployment snippets are the ones that work.
# conf-examples/codumentor.service passes `systemd-analyze verify`; the
# spawn-fcgi line of doc/deployment.md, run as written (paths and user
# replaced), starts a server that serves on the socket spawn-fcgi made
# (fd 0), with the mode and group the web server needs, through nginx.
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import apache   # noqa: E402
import cdm   # noqa: E402
import tap   # noqa: E402

EX_BIN = '/usr/bin/codumentor'
EX_CONF = '/etc/codumentor/codumentor.yaml'
EX_SOCK = '/run/codumentor/fcgi.sock'

# -- the systemd unit
sa = shutil.which('systemd-analyze')
if sa:
    with open(os.path.join(cdm.SRCDIR, 'conf-examples', 'codumentor.service')) as f:
        unit = f.read()
    tap.ok(EX_BIN in unit, 'the unit runs %s' % EX_BIN)
    d = cdm.tempfile.mkdtemp(prefix='cdm-unit-')
    try:
        path = os.path.join(d, 'codumentor.service')
        with open(path, 'w') as f:
            f.write(unit.replace(EX_BIN, cdm.binary()))
        r = subprocess.run([sa, 'verify', path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        tap.is_((r.returncode, r.stdout.strip()), (0, ''), 'systemd-analyze verify: clean')
    finally:
        shutil.rmtree(d)
    for opt in ('NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes',
                'PrivateTmp=yes', 'RestrictNamespaces=user mnt pid net ipc uts cgroup',
                'UMask=0077', 'RuntimeDirectoryMode=0750'):
        tap.ok(re.search(r'^%s$' % re.escape(opt), unit, re.M), 'the unit sets %s' % opt)
else:
    tap.diag('systemd-analyze not found: unit not verified')

# -- spawn-fcgi, from the documentation
with open(os.path.join(cdm.SRCDIR, 'doc', 'deployment.md')) as f:
    lines = [ln.strip() for ln in f if ln.strip().startswith('spawn-fcgi ')]
tap.is_(len(lines), 1, 'doc/deployment.md has one spawn-fcgi command line')
spawn = shutil.which('spawn-fcgi')
if not spawn or os.geteuid() != 0 or not lines:
    tap.diag('spawn-fcgi not run (needs spawn-fcgi and root)')
    tap.done()
    sys.exit(0)

with cdm.Stack(start=False) as s:
    apache.give_to(s, apache.RUN_USER)
    argv = shlex.split(lines[0])
    argv = [a.replace(EX_SOCK, s.socket_path).replace(EX_CONF, s.config_path)
            .replace(EX_BIN, cdm.binary()) for a in argv]
    argv[argv.index('-u') + 1] = apache.RUN_USER
    argv[0] = spawn
    env = dict(os.environ)
    env.pop('CODUMENTOR_JWT_SECRET', None)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=30, env=env)
    tap.is_(r.returncode, 0, 'spawn-fcgi started it') or tap.diag(r.stdout)
    pids = cdm.wait_for(lambda: apache.processes(s.config_path, 'api'), 10)
    try:
        tap.is_(len(pids), 1, 'one server runs')
        ok = cdm.wait_for(lambda: s.request('GET', '/api/health', timeout=5).status == 200, 15, 0.2)
        tap.ok(ok, 'GET /api/health through nginx: 200')
        tap.like(s.server_log(), r'serving on the listening socket passed as fd 0',
                 'the server serves on the socket spawn-fcgi made (fd 0)')
        st = os.stat(s.socket_path)
        tap.is_((stat.S_IMODE(st.st_mode), st.st_gid),
                (0o660, apache.grp.getgrnam('www-data').gr_gid),
                'the socket is 0660, group www-data')
        if pids:
            with open('/proc/%d/status' % pids[0]) as f:
                uid = int([ln for ln in f if ln.startswith('Uid:')][0].split()[1])
            tap.is_(uid, apache.pwd.getpwnam(apache.RUN_USER).pw_uid, 'it runs as the -u user')
    finally:
        for pid in pids or []:
            apache._terminate(pid)
tap.done()
