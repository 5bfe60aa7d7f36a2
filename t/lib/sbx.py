"""sbx.py -- what the sandbox tests (t/32 ... t/39, t/48) share.

    env = sbx.Env(user)          # a temp dir with private copies of the
                                 # binaries, the seccomp blobs, an instance
                                 # dir, a workspace base and a config file
    r = env.cli('sandbox', 'run', '--', 'true')
    j = env.driver('--timeout', '1000', '--', 'sleep', '5')

Each Env runs its programs either as the current user or, when the tests run
as root, as an unprivileged service user (sbx.service_user()), the way
production runs. The copies live in a directory that user can reach, so the
build tree's permissions do not matter. Standard library only.
"""

import json
import os
import pwd
import shutil
import subprocess
import tempfile

import cdm
import tap

SVC_USER = 'cdm-test-svc'
BLOBS = os.path.join(cdm.BUILDDIR, 'sandbox', 'seccomp')
DRIVER = os.path.join(cdm.BUILDDIR, 't', 'sandbox-driver')


def children(pid):
    """[(pid, comm)] of the live (not zombie) children of PID."""
    out = []
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % p) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index('(') + 1:st.rindex(')')]
        fields = st[st.rindex(')') + 2:].split()
        if fields[0] != 'Z' and int(fields[1]) == pid:
            out.append((int(p), comm))
    return out


def held_mount_namespaces(pid):
    """The mount-namespace descriptors process PID holds open, sorted
    (the helper's held overlays, sandbox/hold.c)."""
    out = []
    for fd in os.listdir('/proc/%d/fd' % pid):
        try:
            link = os.readlink('/proc/%d/fd/%s' % (pid, fd))
        except OSError:
            continue
        if link.startswith('mnt:['):
            out.append(link)
    return sorted(out)


def bwrap_or_skip():
    if not (shutil.which('bwrap') or os.access('/usr/bin/bwrap', os.X_OK)):
        tap.skip_all('bwrap is not installed')


def service_user():
    """pwd entry of an unprivileged user to run as, or None (with a
    diagnostic) when the tests do not run as root. The user is created once
    with useradd and left in place: parallel tests share it."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SVC_USER)
    except KeyError:
        pass
    subprocess.run(['useradd', '--system', '--create-home', '--shell',
                    '/usr/sbin/nologin', SVC_USER],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return pwd.getpwnam(SVC_USER)
    except KeyError:
        tap.diag('could not create the user %s' % SVC_USER)
        return None


def identities():
    """[(label, pwd entry or None)]: the current user, then the service
    user when running as root."""
    out = [('as %s' % pwd.getpwuid(os.geteuid()).pw_name, None)]
    u = service_user()
    if u is not None:
        out.append(('as service user %s' % u.pw_name, u))
    elif os.geteuid() != 0:
        tap.diag('not root: the unprivileged run is this one')
    return out


def blobs_present():
    arch = os.uname().machine
    return os.path.exists(os.path.join(BLOBS, '%s-enforce.bpf' % arch))


class Env:
    """A sandbox installation in a temporary directory, owned by USER (a
    pwd entry) or by the current user."""

    def __init__(self, user=None, config=None, seccomp='enforce', copy_blobs=True):
        self.user = user
        self.base = tempfile.mkdtemp(prefix='cdm-sbx-', dir='/tmp')
        os.chmod(self.base, 0o755)
        self.bin = self.path('bin')
        os.mkdir(self.bin, 0o755)
        for src in (cdm.binary(), os.path.join(cdm.BUILDDIR, 'codumentor-sandbox'), DRIVER):
            shutil.copy(src, self.bin)
            os.chmod(os.path.join(self.bin, os.path.basename(src)), 0o755)
        self.blobs = self.path('seccomp')
        os.mkdir(self.blobs, 0o755)
        if copy_blobs and os.path.isdir(BLOBS):
            for f in os.listdir(BLOBS):
                shutil.copy(os.path.join(BLOBS, f), self.blobs)
                os.chmod(os.path.join(self.blobs, f), 0o644)
        if seccomp != 'off' and not blobs_present():
            tap.diag('no seccomp blobs in %s: running with sandbox.seccomp off' % BLOBS)
            seccomp = 'off'
        self.seccomp = seccomp
        self.instance = self.path('instance')
        self.workspaces = self.path('workspaces')
        for d in (self.instance, self.workspaces):
            os.mkdir(d, 0o700)
            self.chown(d)
        self.config = {
            'instance_dir': self.instance,
            'workspace_isolation.base_dir': self.workspaces,
            'sandbox.seccomp': seccomp,
            'sandbox.seccomp_dir': self.blobs,
            'auth.jwt_secret': 'x' * 40,
        }
        self.config.update(config or {})
        self.write_config()

    def path(self, *parts):
        return os.path.join(self.base, *parts)

    def chown(self, p):
        if self.user is not None:
            os.chown(p, self.user.pw_uid, self.user.pw_gid)

    def write_config(self):
        self.config_path = self.path('codumentor.yaml')
        with open(self.config_path, 'w') as f:
            f.write(cdm.render_yaml(cdm.nest(self.config)) + '\n')
        os.chmod(self.config_path, 0o644)

    def argv_as_user(self, argv):
        if self.user is None:
            return argv
        return ['setpriv', '--reuid', str(self.user.pw_uid), '--regid',
                str(self.user.pw_gid), '--clear-groups', '--'] + argv

    def environ(self, extra=None):
        env = dict(os.environ)
        if self.user is not None:
            env['HOME'] = self.user.pw_dir
            env['USER'] = env['LOGNAME'] = self.user.pw_name
        env.update(extra or {})
        return env

    def run(self, argv, env=None, timeout=60, input=None):
        return subprocess.run(self.argv_as_user(argv), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout,
                              env=self.environ(env), cwd=self.base, input=input)

    def cli(self, *args, env=None, timeout=60, input=None):
        """`codumentor -c CFG ARGS...` as the Env's user."""
        return self.run([os.path.join(self.bin, 'codumentor'), '-c', self.config_path]
                        + list(args), env=env, timeout=timeout, input=input)

    def driver(self, *args, env=None, timeout=60):
        """t/sandbox-driver: a list of result dicts (one per run)."""
        r = self.run([os.path.join(self.bin, 'sandbox-driver'), self.config_path]
                     + list(args), env=env, timeout=timeout)
        out = []
        for line in r.stdout.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                tap.diag('driver: %r' % line)
        if r.returncode != 0:
            tap.diag('driver exit %d, stderr: %s' % (r.returncode, r.stderr[-2000:]))
        return out

    def make_conversation(self):
        """A conversation row in the instance database (via `user add`,
        which creates and migrates it); returns its id."""
        import sqlite3
        r = self.cli('user', 'add', 'u' + cdm.random_id()[:8].lower().replace('-', 'x'),
                     input='pw-%s\n' % cdm.random_id())
        if r.returncode != 0:
            raise RuntimeError('user add: ' + r.stderr)
        db = sqlite3.connect(os.path.join(self.instance, 'data', 'codumentor.db'))
        uid = db.execute('SELECT id FROM users LIMIT 1').fetchone()[0]
        cid = cdm.random_id()
        now = '2026-01-01T00:00:00.000Z'
        db.execute('INSERT INTO conversations (id, user_id, title, created_at, updated_at)'
                   ' VALUES (?, ?, ?, ?, ?)', (cid, uid, 't', now, now))
        db.commit()
        db.close()
        return cid

    def leftovers(self):
        """Scratch workspaces left in the base (there should be none)."""
        return [n for n in os.listdir(self.workspaces)
                if n.startswith('.run-') or n.startswith('.selftest-')]

    def cleanup(self):
        if cdm.KEEP:
            tap.diag('CDM_KEEP: keeping %s' % self.base)
            return
        # The sandbox may leave 0000 directories (overlayfs work/work).
        for root, dirs, _ in os.walk(self.base):
            for d in dirs:
                p = os.path.join(root, d)
                if not os.path.islink(p):
                    try:
                        os.chmod(p, 0o700)
                    except OSError:
                        pass
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False
