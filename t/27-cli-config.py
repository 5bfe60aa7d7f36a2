#!/usr/bin/python3
# 27-cli-config: the command line and the configuration file. --version; an
# unknown command prints the usage; a configuration error (unknown key, wrong
# type, bad --set) stops `api` at start, naming FILE:LINE and the key;
# `user add` reads the password from standard input.
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

if not os.access(cdm.binary(), os.X_OK):
    tap.bail_out('no server binary at %s (set CDM_BUILDDIR)' % cdm.binary())


def run(*args, input=None, timeout=10):
    """(exit status, stdout, stderr); a command still running after TIMEOUT
    seconds is killed and reported with status None."""
    try:
        r = subprocess.run([cdm.binary()] + list(args), input=input, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or '', e.stderr or ''


# -- version and usage
rc, out, err = run('--version')
tap.is_(rc, 0, '--version: exit 0')
tap.ok(cdm.package_version() and cdm.package_version() in out,
       '--version prints the version (%s)' % cdm.package_version()) or tap.diag('stdout: %r' % out)
rc, out, err = run('frobnicate')
tap.ok(rc not in (0, None), 'unknown command: non-zero exit') or tap.diag('exit %r' % rc)
tap.is_(rc, 2, 'unknown command: exit 2 (usage)')
tap.like(err, r'(?i)usage', 'unknown command: usage on stderr')
rc, out, err = run()
tap.ok(rc not in (0, None) and 'usage' in err.lower(), 'no command: usage, non-zero exit')

# -- configuration errors stop `api` before it serves anything
tmp = tempfile.mkdtemp(prefix='cdm-cli-', dir='/tmp')
try:
    def config(name, lines):
        p = os.path.join(tmp, name)
        with open(p, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        return p

    common = ['instance_dir: "%s/instance"' % tmp,
              'listen: "unix:%s/fcgi.sock"' % tmp,
              'auth:',
              '  jwt_secret: "0123456789abcdef0123456789abcdef"']
    good = config('good.yaml', common + ['server:', '  workers: 4'])
    unknown = config('unknown.yaml', common + ['server:', '  workers: 4', '  wrokers: 4'])
    badtype = config('badtype.yaml', common + ['server:', '  heartbeat_seconds: soon'])
    toplevel = config('toplevel.yaml', ['bogus_section:', '  x: 1'] + common)

    for path, line, key, what in [(unknown, 7, 'wrokers', 'unknown key'),
                                  (badtype, 6, 'heartbeat_seconds', 'wrong type'),
                                  (toplevel, 1, 'bogus_section', 'unknown top-level key')]:
        rc, out, err = run('-c', path, 'api')
        name = os.path.basename(path)
        tap.ok(rc not in (0, None), '%s: api fails at start' % what) or tap.diag('exit %r' % rc)
        tap.ok('%s:%d' % (name, line) in err, '%s: stderr names %s:%d' % (what, name, line)) \
            or tap.diag('stderr: %r' % err)
        tap.ok(key in err, '%s: stderr names the key %s' % (what, key))
        tap.ok(not os.path.exists(os.path.join(tmp, 'fcgi.sock')), '%s: no socket was made' % what)

    rc, out, err = run('-c', good, '--set', 'server.workers=abc', 'api')
    tap.ok(rc not in (0, None), '--set server.workers=abc: api fails at start')
    tap.ok('server.workers' in err, '--set: stderr names the key server.workers') or tap.diag('stderr: %r' % err)
    rc, out, err = run('-c', good, '--set', 'server.nosuch=1', 'api')
    tap.ok(rc not in (0, None) and 'server.nosuch' in err, '--set of an unknown key fails, naming it') \
        or tap.diag('exit %r, stderr %r' % (rc, err))
    rc, out, err = run('-c', os.path.join(tmp, 'missing.yaml'), 'api')
    tap.ok(rc not in (0, None) and 'missing.yaml' in err, 'a missing configuration file fails, naming it') \
        or tap.diag('exit %r, stderr %r' % (rc, err))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

# -- user add (with a running server, so the user can log in)
if not os.access(cdm.NGINX, os.X_OK):
    tap.skip('nginx not found at %s' % cdm.NGINX, 8)
    tap.done()

with cdm.Stack() as s:
    r = s.cli('user', 'add', 'cli-user', input='cli-password\n')
    tap.is_(r.returncode, 0, 'user add NAME, password on stdin: exit 0') or tap.diag(r.stderr)
    r = s.request('POST', '/api/auth/login', body={'username': 'cli-user', 'password': 'cli-password'})
    tap.is_(r.status, 200, 'the new user logs in (the trailing newline is not part of the password)')
    tap.is_(((r.json or {}).get('user') or {}).get('is_admin'), False, 'not an admin without --admin')

    r = s.cli('user', 'add', 'cli-admin', '--admin', input='admin-password\n')
    tap.is_(r.returncode, 0, 'user add NAME --admin: exit 0')
    r = s.request('POST', '/api/auth/login', body={'username': 'cli-admin', 'password': 'admin-password'})
    tap.is_(((r.json or {}).get('user') or {}).get('is_admin'), True, '--admin makes an admin')

    r = s.cli('user', 'add', 'cli-user', input='other-password\n')
    tap.ok(r.returncode != 0 and 'cli-user' in r.stderr,
           'user add of an existing name: non-zero exit, message names the user') \
        or tap.diag('exit %d, stderr %r' % (r.returncode, r.stderr))

    r = s.cli('user', 'add', 'nopass', input='\n')
    tap.ok(r.returncode != 0 and r.stderr.strip(), 'an empty password is refused, with a message') \
        or tap.diag('exit %d, stderr %r' % (r.returncode, r.stderr))
    r = s.request('POST', '/api/auth/login', body={'username': 'nopass', 'password': ''})
    tap.isnt(r.status, 200, 'and no such user can log in')
tap.done()
