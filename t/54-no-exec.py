#!/usr/bin/python3
# 54-no-exec: the resident server cannot start a program. Through the
# test-only route POST /api/admin/test/exec (./configure --enable-test-hooks)
# the server tries execve, execveat, fork, posix_spawn and clone3 itself:
# EPERM (clone3: ENOSYS) and no child appears, while threads still work;
# with Landlock it cannot open /var. Serving, SQLite and log reopening work
# under both; security.no_exec/landlock: false turn them off; `check`
# reports them.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402


def children(pid):
    kids = set()
    try:
        for tid in os.listdir('/proc/%d/task' % pid):
            with open('/proc/%d/task/%s/children' % (pid, tid)) as f:
                kids |= set(f.read().split())
    except OSError:
        pass
    return kids


def status(pid, field):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith(field + ':'):
                return line.split(':', 1)[1].strip()
    return None


with cdm.Stack() as s:
    r = s.request('POST', '/api/admin/test/exec', token=s.admin_token())
    if r.status == 404:
        tap.skip_all('built without --enable-test-hooks')
    check = s.cli('check').stdout
    landlock = 'Landlock ABI' in check
    tap.like(check, r'(?m)^security\.no_exec: on \(seccomp filter, \w+\)$', 'check: no_exec on')
    tap.like(check, r'(?m)^security\.landlock: on', 'check: landlock on')

    pid = s.server_pid
    kids = children(pid)
    r = s.request('POST', '/api/admin/test/exec', token=s.admin_token())
    tap.is_(r.status, 200, 'test hook answers')
    got = r.json
    tap.is_(got.get('execve'), 'EPERM', 'execve: EPERM')
    tap.is_(got.get('execveat'), 'EPERM', 'execveat: EPERM')
    tap.is_(got.get('fork'), 'EPERM', 'fork: EPERM')
    tap.is_(got.get('vfork'), 'EPERM', 'posix_spawn (clone with CLONE_VFORK): EPERM')
    tap.is_(got.get('clone3'), 'ENOSYS', 'clone3: ENOSYS (libc falls back to clone)')
    tap.is_(got.get('thread'), 'ok', 'pthread_create still works')
    tap.is_(children(pid), kids, 'no process was created')
    tap.is_(status(pid, 'Seccomp'), '2', 'the server runs under a seccomp filter')
    tap.is_(status(pid, 'NoNewPrivs'), '1', 'with no_new_privs')
    if landlock:
        tap.is_(got.get('read_outside'), 'EACCES', 'Landlock: /var is out of reach')
    else:
        tap.skip('the kernel has no Landlock')
    r = s.request('POST', '/api/admin/test/exec', token=s.new_user().token)
    cdm.is_error(r, 403, 'forbidden', 'the hook is for administrators only')

    # ordinary work under the guard: SQLite writes, secrets, streams, log reopen
    u = s.new_user()
    cid = s.create_conversation(u.token, 'guarded')
    tap.ok(cid, 'conversations are created')
    r = s.request('PUT', '/api/secrets/K', body={'value': 'guarded-value-1'}, token=u.token)
    tap.is_(r.status, 204, 'secrets are stored')
    log = s.log_path()
    os.rename(log, log + '.1')
    s.signal_server(signal.SIGHUP)
    tap.ok(cdm.wait_for(lambda: os.path.exists(log) and 'log reopened' in open(log).read(), 10),
           'SIGHUP reopens the log (a new file in logs/)')
    r = s.request('GET', '/api/conversations/%s' % cid, token=u.token)
    tap.is_(r.status, 200, 'still serving after the reopen')
    with open(log + '.1') as f:
        tap.like(f.read(), r'self-guard: no_exec on, landlock (on|unavailable)', 'the start is logged')
    tap.is_(s.stop_server(), 0, 'clean exit under the guard (LeakSanitizer included)')

with cdm.Stack(config={'security.no_exec': False, 'security.landlock': False}) as s:
    r = s.request('POST', '/api/admin/test/exec', token=s.admin_token())
    got = r.json or {}
    tap.is_(got.get('execve'), 'ENOENT', 'no_exec off: execve reaches the filesystem')
    tap.is_(got.get('fork'), 'created', 'no_exec off: fork works')
    tap.is_(got.get('read_outside'), 'ok', 'landlock off: /var opens')
    tap.is_(status(s.server_pid, 'Seccomp'), '0', 'no filter')
    check = s.cli('check').stdout
    tap.like(check, r'(?m)^security\.no_exec: off', 'check: no_exec off')
    tap.like(check, r'(?m)^security\.landlock: off', 'check: landlock off')

tap.done()
