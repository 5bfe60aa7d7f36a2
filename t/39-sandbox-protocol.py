#!/usr/bin/python3
# 39-sandbox-protocol: codumentor-sandbox spoken to directly, as a server
# that has gone wrong (or been taken over) would: its own socketpair on fd 3,
# raw datagrams. Every message it cannot accept is answered with ERROR and
# starts or mounts nothing: SPAWN, PREPARE with layers outside the workspace
# base or with '..', FORGET without an upper layer, an unknown type, a
# short datagram, a wrong version. What it accepts behaves: PREPARE mounts
# and holds the overlay (a mount-namespace fd in the helper, nothing on the
# host) and a command joins it, FORGET replaces it with a fresh mount that
# shows what the host wrote, at most 64 are held (least
# recently used out first), and the helper exits with its server, taking
# what it held. As root and as the unprivileged service user.
import json
import os
import select
import socket
import struct
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()

HELLO, SPAWN, SPAWNED, EXITED, KILL, ERROR, FORGET, PREPARE = range(1, 9)


def send(sock, typ, ident, body=None, fds=(), version=1):
    data = struct.pack('=HHI', version, typ, ident) + json.dumps(body or {}).encode()
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack('%di' % len(fds), *fds))] if fds else []
    sock.sendmsg([data], anc)


def recv(sock, timeout=5):
    """(type, id, body) of the next message, or None after TIMEOUT s."""
    r, _, _ = select.select([sock], [], [], timeout)
    if not r:
        return None
    data = sock.recv(200000)
    if not data:
        return ('EOF', 0, {})
    _, typ, ident = struct.unpack('=HHI', data[:8])
    return (typ, ident, json.loads(data[8:].decode() or '{}'))


mnt_fds = sbx.held_mount_namespaces


def spawn(sock, ident, lay, argv):
    """SPAWN argv in lay's workspace (held); ([reply types], exit code, output)."""
    r, w = os.pipe()
    send(sock, SPAWN, ident, dict(lay, profile='shell', argv=argv, hold=True), [w])
    os.close(w)
    msgs = [recv(sock, 30), recv(sock, 30)]
    out = b''
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        out += chunk
    os.close(r)
    return [m and m[0] for m in msgs], msgs[1] and msgs[1][2].get('exit_code'), out


def layers(env, name):
    root = os.path.join(env.workspaces, name)
    d = {k: os.path.join(root, k) for k in ('lower', 'upper', 'work', 'merged')}
    for p in d.values():
        os.makedirs(p, mode=0o700, exist_ok=True)
        env.chown(p)
    env.chown(root)
    return d


LABEL = ['']


def _labelled(fn):
    def f(*args):
        return fn(*(args[:-1] + ('%s: %s' % (LABEL[0], args[-1]),)))
    return f


is_, ok, like = _labelled(tap.is_), _labelled(tap.ok), _labelled(tap.like)


def check(label, user):
    LABEL[0] = label
    env = sbx.Env(user)
    try:
        base = env.workspaces
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = [os.path.join(env.bin, 'codumentor-sandbox'), '--parent', str(os.getpid()), '--bwrap', '/usr/bin/bwrap', '--base', base,
                '--seccomp-mode', 'off', '--keep-mounted', '60']

        def fd3():
            if user is not None:
                os.setgroups([])
                os.setgid(user.pw_gid)
                os.setuid(user.pw_uid)
            os.dup2(child.fileno(), 3)
        # close_fds=False: Python would close fd 3 after fd3() ran; the helper
        # closes everything above its socket itself.
        p = subprocess.Popen(argv, preexec_fn=fd3, close_fds=False, stdin=subprocess.DEVNULL)
        child.close()
        hello = recv(parent, 60)
        is_(hello and hello[0], HELLO, 'the helper says HELLO first')
        ok(hello and hello[2].get('available'), 'with the sandbox available') or tap.diag(hello)

        good = layers(env, cdm.random_id())
        outside = dict(good, upper='/tmp/cdm-outside-upper')
        dotdot = dict(good, work=good['work'] + '/../../x')
        comma = dict(good, upper=good['upper'] + ',lowerdir=/etc')
        cases = [
            ('PREPARE with upper outside the base', PREPARE, outside, r'upper: .* is not below the workspace base'),
            ('PREPARE with .. in work', PREPARE, dotdot, r"work: expected an absolute path without '\.', '\.\.'"),
            ('PREPARE with overlay option syntax in upper', PREPARE, comma, r"upper: expected an absolute path"),
            ('PREPARE without layers', PREPARE, {}, r'lower: expected an absolute path'),
            ('FORGET without an upper layer', FORGET, {'lower': good['lower']}, r'FORGET: expected \{"upper": path\}'),
            ('SPAWN with upper outside the base', SPAWN,
             dict(outside, profile='shell', argv=['true']), r'upper: .* is not below the workspace base'),
            ('an unknown type', 42, {}, r'unexpected message type 42'),
        ]
        ident = 100
        for name, typ, body, want in cases:
            ident += 1
            fds = []
            if typ == SPAWN:
                r, w = os.pipe()
                fds = [w]
            send(parent, typ, ident, body, fds)
            if fds:
                os.close(fds[0])
                os.close(r)
            m = recv(parent)
            is_(m and (m[0], m[1]), (ERROR, ident), '%s: ERROR for that request' % name) or tap.diag(m)
            like(m and m[2].get('message') or '', want, '%s: saying why' % name)
        is_(mnt_fds(p.pid), [], 'none of them mounted or held anything')
        ok(not os.path.exists('/tmp/cdm-outside-upper'), 'nor created anything outside the base')

        parent.send(b'\x01\x00')
        m = recv(parent)
        is_(m and m[0], ERROR, 'a short datagram: ERROR') or tap.diag(m)
        send(parent, PREPARE, 7, good, version=9)
        m = recv(parent)
        is_(m and m[0], ERROR, 'a wrong protocol version: ERROR') or tap.diag(m)
        is_(mnt_fds(p.pid), [], 'and nothing held')

        # What it accepts.
        send(parent, PREPARE, 200, good)
        is_(recv(parent, 1), None, 'PREPARE: no reply')
        held = mnt_fds(p.pid)
        is_(len(held), 1, 'PREPARE: the helper holds one mount namespace') or tap.diag(held)
        is_(os.listdir(good['merged']), [], 'PREPARE: nothing is mounted on the host')
        send(parent, PREPARE, 201, good)
        is_(mnt_fds(p.pid), held, 'PREPARE again: the same one, not a second')
        # The held overlay looks for a file and caches that it is not there;
        # the host writes it into upper/ and says so (FORGET).
        kinds, code, out = spawn(parent, 300, good, ['cat', 'from-host.txt'])
        is_((kinds, code), ([SPAWNED, EXITED], 1), 'a command in the held overlay: no from-host.txt yet')
        with open(os.path.join(good['upper'], 'from-host.txt'), 'w') as f:
            f.write('x')
        env.chown(os.path.join(good['upper'], 'from-host.txt'))
        send(parent, FORGET, 202, {'upper': good['upper']})
        is_(recv(parent, 1), None, 'FORGET: no reply')
        is_(len(mnt_fds(p.pid)), 1, 'FORGET: one held still (mounted afresh)')
        send(parent, FORGET, 203, {'upper': os.path.join(base, 'not-held', 'upper')})
        is_(recv(parent, 1), None, 'FORGET of what is not held: no reply, no harm')
        is_(len(mnt_fds(p.pid)), 1, 'and the held one stays')
        kinds, code, out = spawn(parent, 301, good, ['cat', 'from-host.txt'])
        is_((kinds, code, out), ([SPAWNED, EXITED], 0, b'x'), 'the next command reads the host\'s write')

        # At most 64 held: the least recently used goes first.
        many = [layers(env, 'many-%02d' % i) for i in range(65)]
        for i, lay in enumerate(many):
            send(parent, PREPARE, 400 + i, lay)
        # The helper works through its socket in order: the answer to an
        # unknown type comes once every PREPARE before it is done.
        send(parent, 42, 499)
        m = recv(parent, 60)
        is_(m and (m[0], m[1]), (ERROR, 499), '65 PREPAREs: no reply of their own') or tap.diag(m)
        is_(len(mnt_fds(p.pid)), 64, '65 workspaces prepared: 64 held, no more')
        kinds, code, _ = spawn(parent, 500, good, ['true'])
        is_((kinds, code), ([SPAWNED, EXITED], 0), 'the least recently used one still runs a command')
        is_(len(mnt_fds(p.pid)), 64, 'mounted afresh in place of the next least recently used')

        parent.close()
        try:
            p.wait(10)
            ok(True, 'the helper exits when its server goes away')
        except subprocess.TimeoutExpired:
            p.kill()
            ok(False, 'the helper exits when its server goes away')
        is_(os.listdir(good['merged']), [], 'and leaves nothing mounted on the host')

    finally:
        env.cleanup()

for label, user in sbx.identities():
    check(label, user)

tap.done()
