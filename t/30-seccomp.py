#!/usr/bin/python3
# 30-seccomp: the build-time seccomp blobs inside real bubblewrap, no server.
# t/sandbox-probe attempts every blocked operation under each blob: enforce
# refuses each with its errno (EPERM, ENOSYS, EAFNOSUPPORT) while ordinary
# work (threads, fork+exec, UNIX/INET/NETLINK sockets, personality queries)
# still runs; audit lets the same calls through to the kernel, logged; the
# sandbox reports Seccomp 2, NoNewPrivs 1 and no capabilities. The blob of
# another architecture kills the process (fail closed), the aarch64 blobs
# are well-formed, and, as root, enforce is run again as an unprivileged user.
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

BLOBS = os.path.join(cdm.BUILDDIR, 'sandbox', 'seccomp')
PROBE = os.path.join(cdm.BUILDDIR, 't', 'sandbox-probe')
BWRAP = os.environ.get('CDM_BWRAP') or shutil.which('bwrap') or '/usr/bin/bwrap'
NATIVE = {'x86_64': 'x86_64', 'aarch64': 'aarch64'}.get(platform.machine())

# What enforce answers; everything not listed must succeed ("OK").
ENOSYS = ['clone3', 'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount',
          'fspick', 'mount_setattr', 'io_uring_setup', 'io_uring_enter',
          'io_uring_register', 'i386_clone3', 'i386_io_uring_setup']
EAFNOSUPPORT = ['socket_packet', 'socket_packet_high', 'socket_vsock', 'socket_alg',
                'socket_key', 'socketpair_packet', 'i386_socket_packet',
                # i386 socketcall(SYS_SOCKET) hides the family behind a pointer
                'i386_socketcall_unix']
EPERM = ['clone_newuser', 'clone_newns', 'clone_newpid', 'clone_newnet',
         'clone_newuts', 'clone_newipc', 'clone_newcgroup', 'clone_newtime',
         'unshare_user', 'setns', 'mount', 'umount2', 'pivot_root', 'chroot',
         'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open',
         'userfaultfd', 'ptrace', 'process_vm_readv', 'process_vm_writev', 'kcmp',
         'pidfd_getfd', 'kexec_load', 'kexec_file_load', 'init_module',
         'finit_module', 'delete_module', 'reboot', 'swapon', 'swapoff', 'syslog',
         'acct', 'quotactl', 'quotactl_fd', 'open_by_handle_at', 'fanotify_init',
         'personality_rie', 'personality_norandom', 'personality_linux32_norandom',
         'personality_1', 'personality_9', 'personality_fffffffe',
         'personality_7fffffff', 'personality_80000000', 'personality_high_rie',
         'ioctl_tiocsti', 'ioctl_tiocsti_high', 'ioctl_tioclinux',
         'i386_unshare', 'i386_umount', 'i386_mount', 'i386_personality',
         'i386_keyctl', 'i386_ioctl_tiocsti', 'x32_unshare']
BLOCKED = dict([(n, 'ENOSYS') for n in ENOSYS] + [(n, 'EAFNOSUPPORT') for n in EAFNOSUPPORT]
               + [(n, 'EPERM') for n in EPERM])
# Not filtered, and not expected to succeed: the kernel's own answer.
KERNEL = {'ioctl_tiocgwinsz': 'ENOTTY', 'x32_getpid': None}
# Where the kernel itself gives the filter's errno without the filter (a
# capability the sandbox dropped, a socket family this kernel lacks), audit
# cannot be told from enforce by the result; the kernel log shows it.
SAME_IN_AUDIT = {'pivot_root', 'reboot', 'swapon', 'swapoff', 'syslog', 'acct',
                 'i386_umount', 'socket_alg', 'socket_key', 'socket_vsock'}
# In audit mode these must really have happened: logged, not refused.
AUDIT_OK = ['unshare_user', 'add_key', 'userfaultfd', 'process_vm_readv', 'kcmp',
            'pidfd_getfd', 'fanotify_init', 'personality_rie', 'i386_unshare',
            'i386_socketcall_unix']

if NATIVE is None:
    tap.skip_all('no seccomp blob covers %s' % platform.machine())
if not os.access(BWRAP, os.X_OK):
    tap.skip_all('bwrap not found (%s)' % BWRAP)
if not os.access(PROBE, os.X_OK):
    tap.bail_out('no probe at %s (make check builds it)' % PROBE)

tmp = tempfile.mkdtemp(prefix='cdm-t30-')
os.chmod(tmp, 0o755)    # the unprivileged run must reach the probe
shutil.copy(PROBE, os.path.join(tmp, 'sandbox-probe'))
os.chmod(os.path.join(tmp, 'sandbox-probe'), 0o755)


def system_binds():
    """/usr read-only, and the merged-/usr symlinks (or directories) Debian has."""
    args = ['--ro-bind', '/usr', '/usr']
    for d in ('/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'):
        if os.path.islink(d):
            args += ['--symlink', os.readlink(d), d]
        elif os.path.isdir(d):
            args += ['--ro-bind', d, d]
    return args


def sandbox(blob, args, user=None, timeout=120):
    """Run the probe in bwrap with BLOB as its filter: (exit status, stdout, stderr)."""
    fd = os.open(blob, os.O_RDONLY | os.O_CLOEXEC)
    cmd = [BWRAP, '--unshare-all', '--die-with-parent', '--new-session',
           '--cap-drop', 'ALL'] + system_binds() + \
          ['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
           '--ro-bind', tmp, '/probe', '--seccomp', str(fd),
           '/probe/sandbox-probe'] + list(args)
    kw = {}
    if user is not None:
        kw = {'user': user, 'group': user, 'extra_groups': []}
    try:
        r = subprocess.run(cmd, pass_fds=(fd,), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout,
                           env={'PATH': '/usr/bin:/bin'}, cwd='/', **kw)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or '', e.stderr or ''
    finally:
        os.close(fd)


def results(out):
    d = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            d[parts[0]] = parts[1]
    return d


def blob(mode, arch=NATIVE):
    return os.path.join(BLOBS, '%s-%s.bpf' % (arch, mode))


def check_status(mode, user=None):
    rc, out, err = sandbox(blob(mode), ['status'], user=user)
    st = results(out)
    who = ' (uid %d)' % user if user is not None else ''
    tap.is_(st.get('status.Seccomp'), '2', '%s%s: Seccomp 2 in the sandbox' % (mode, who)) \
        or tap.diag('exit %r, stderr %r' % (rc, err))
    tap.is_(st.get('status.NoNewPrivs'), '1', '%s%s: NoNewPrivs 1' % (mode, who))
    tap.is_(st.get('status.CapEff'), '0000000000000000', '%s%s: CapEff 0' % (mode, who))


def check_enforce(user=None):
    rc, out, err = sandbox(blob('enforce'), [], user=user)
    got = results(out)
    who = ' (uid %d)' % user if user is not None else ''
    if not tap.ok(rc == 0 and len(got) > 0, 'enforce%s: the probe ran' % who):
        tap.diag('exit %r, stderr %r' % (rc, err))
        return
    wrong = []
    for name, res in sorted(got.items()):
        want = BLOCKED.get(name, KERNEL.get(name, 'OK'))
        if want is not None and res != want:
            wrong.append('%s: got %s, expected %s' % (name, res, want))
    missing = [n for n in BLOCKED if n not in got
               and (NATIVE == 'x86_64' or not n.startswith(('i386_', 'x32_')))]
    tap.ok(not missing, 'enforce%s: the probe tried every blocked call' % who) \
        or tap.diag('missing: ' + ', '.join(missing))
    refused = [n for n in got if n in BLOCKED]
    tap.ok(not wrong, 'enforce%s: %d blocked calls refused with their errno, '
           '%d ordinary calls unaffected' % (who, len(refused), len(got) - len(refused))) \
        or tap.diag('\n'.join(wrong))
    # The rows the issue names, one by one, so a regression names itself.
    for name in ('clone_newuser', 'unshare_user', 'mount', 'ptrace', 'keyctl', 'bpf',
                 'io_uring_setup', 'clone3', 'socket_packet', 'ioctl_tiocsti_high',
                 'personality_high_rie', 'thread', 'fork_exec', 'socket_inet',
                 'personality_query64', 'i386_unshare', 'i386_socket_unix', 'x32_unshare'):
        if name in got:
            tap.is_(got[name], BLOCKED.get(name, 'OK'), 'enforce%s: %s' % (who, name))
    return got


def read_kmsg_since(fd):
    lines = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:     # EPIPE: records overwritten meanwhile
            continue
        if not rec:
            break
        lines.append(rec.decode('utf-8', 'replace'))
    return lines


def check_audit_record():
    """A SECCOMP audit record for the probe's logged personality() call."""
    try:
        with open('/proc/sys/kernel/seccomp/actions_logged') as f:
            if 'log' not in f.read().split():
                tap.skip('the kernel does not log SECCOMP_RET_LOG (actions_logged)')
                return
        fd = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        tap.skip('kernel log not readable here (%s): audit record not checked' % e.strerror)
        return
    nr = {'x86_64': 135, 'aarch64': 92}[NATIVE]
    found = False
    try:
        # Audit lines reach the kernel log through printk's rate limit
        # (10 per 5 s) when no auditd listens: one retry past the window.
        for attempt in range(2):
            os.lseek(fd, 0, os.SEEK_END)
            sandbox(blob('audit'), ['personality_rie'])
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not found:
                for line in read_kmsg_since(fd):
                    if ('type=1326' in line and 'comm="sandbox-probe"' in line
                            and ('syscall=%d ' % nr) in line):
                        found = True
                        tap.diag(line.strip().split(';', 1)[-1][:300])
                time.sleep(0.2)
            if found:
                break
            time.sleep(6)
    finally:
        os.close(fd)
    tap.ok(found, 'audit: the kernel logged a SECCOMP record (type=1326) for the probe')


def check_audit():
    rc, out, err = sandbox(blob('audit'), [])
    got = results(out)
    if not tap.ok(rc == 0 and len(got) > 0, 'audit: the probe ran'):
        tap.diag('exit %r, stderr %r' % (rc, err))
        return
    refused, same = [], []
    for name, res in sorted(got.items()):
        if name not in BLOCKED:
            want = KERNEL.get(name, 'OK')
            if want is not None and res != want:
                refused.append('%s: got %s, expected %s' % (name, res, want))
        elif res == BLOCKED[name]:
            (same if name in SAME_IN_AUDIT else refused).append('%s: %s' % (name, res))
    tap.ok(not refused, 'audit: no blocked call answered with the filter\'s errno '
           '(%d of them checked)' % (len([n for n in got if n in BLOCKED]) - len(same))) \
        or tap.diag('\n'.join(refused))
    if same:
        tap.diag('the kernel itself answered these with the same errno (no '
                 'capability or no such family), not told apart here: ' + ', '.join(same))
    for name in AUDIT_OK:
        if name in got:
            tap.is_(got[name], 'OK', 'audit: %s is logged but allowed' % name)
    for name in ('clone3', 'io_uring_setup', 'x32_unshare'):
        if name in got:
            tap.isnt(got[name], BLOCKED[name], 'audit: %s does not answer %s'
                     % (name, BLOCKED[name]))


def insns(path):
    with open(path, 'rb') as f:
        data = f.read()
    return data, [struct.unpack('<HBBI', data[i:i + 8]) for i in range(0, len(data) - 7, 8)]


AUDIT_ARCH = {'x86_64': (0xC000003E, 0x40000003), 'aarch64': (0xC00000B7, 0x40000028)}
RET, JEQ, LD_ABS_W = 0x06, 0x15, 0x20
RET_KILL_PROCESS, RET_LOG, RET_ERRNO = 0x80000000, 0x7FFC0000, 0x00050000


def check_blob(arch, mode):
    path = blob(mode, arch)
    name = '%s-%s.bpf' % (arch, mode)
    if not tap.ok(os.path.isfile(path), '%s exists' % name):
        return
    data, prog = insns(path)
    tap.ok(len(data) % 8 == 0 and 8 <= len(data) <= 4096 * 8,
           '%s: %d bytes, whole instructions, within BPF_MAXINSNS' % (name, len(data)))
    tap.is_(prog[0], (LD_ABS_W, 0, 0, 4), '%s: starts by loading seccomp_data.arch' % name)
    arches = {k for c, jt, jf, k in prog if c == JEQ}
    tap.ok(all(a in arches for a in AUDIT_ARCH[arch]),
           '%s: checks both ABIs of the family (%s)' % (name, ', '.join(
               '%#x' % a for a in AUDIT_ARCH[arch])))
    rets = {k for c, jt, jf, k in prog if c == RET}
    errnos = {k & 0xFFFF for k in rets if k & 0xFFFF0000 == RET_ERRNO}
    tap.ok(RET_KILL_PROCESS in rets, '%s: another architecture kills the process' % name)
    if mode == 'enforce':
        tap.ok(errnos == {1, 38, 97} and RET_LOG not in rets,
               '%s: refuses with EPERM, ENOSYS, EAFNOSUPPORT, logs nothing' % name) \
            or tap.diag('returns: %s' % sorted('%#x' % k for k in rets))
    else:
        tap.ok(not errnos and RET_LOG in rets, '%s: logs, refuses nothing' % name) \
            or tap.diag('returns: %s' % sorted('%#x' % k for k in rets))


try:
    for arch in ('x86_64', 'aarch64'):
        for mode in ('audit', 'enforce'):
            check_blob(arch, mode)

    check_status('enforce')
    check_status('audit')
    check_enforce()
    # Before the full audit run, whose records use up printk's rate limit.
    check_audit_record()
    check_audit()

    # The blob of another family: the arch check kills bwrap's execve.
    other = 'aarch64' if NATIVE == 'x86_64' else 'x86_64'
    rc, out, err = sandbox(blob('enforce', other), ['status'])
    tap.ok(rc not in (0, None) and 'status.' not in out,
           'the %s blob on %s: nothing runs (exit %r)' % (other, NATIVE, rc)) \
        or tap.diag('stdout %r stderr %r' % (out, err))

    # Production runs as a service user: bwrap then builds its own userns.
    if os.geteuid() != 0:
        tap.skip('already unprivileged: the runs above are the unprivileged case')
    else:
        rc, out, err = sandbox(blob('enforce'), ['status'], user=65534)
        if rc != 0:
            tap.skip('bwrap does not run as uid 65534 here (%s)' % err.strip()[:200])
        else:
            check_status('enforce', user=65534)
            check_enforce(user=65534)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

tap.done()
