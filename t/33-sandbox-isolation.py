#!/usr/bin/python3
# 33-sandbox-isolation: what a command inside the shell profile can and
# cannot reach, as root and as an unprivileged service user. A probe runs
# inside and reports: host secrets (/etc/shadow, the user's ~/.ssh, the
# instance dir) absent; no network at all (only lo, connecting to a port
# the test listens on fails); no secret of the caller's environment in its
# environment or in any /proc/*/environ; bwrap's own options not visible in
# /proc/1/cmdline; capabilities 0, NoNewPrivs 1, Seccomp 2; no process of
# the host can be signalled; nested user namespaces and mount refused.
import json
import os
import secrets
import socket
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()

PROBE = r'''
import json, os, socket, sys
home, instance, port, hostpid, fake = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = 'ok'
    except Exception as e:
        out[name] = type(e).__name__
attempt('shadow', lambda: open('/etc/shadow').read())
attempt('ssh_key', lambda: open(os.path.join(home, '.ssh', fake)).read())
attempt('home', lambda: os.listdir(home))
attempt('instance', lambda: os.listdir(instance))
attempt('run', lambda: os.listdir('/run'))
attempt('root', lambda: os.listdir('/root'))
def connect():
    s = socket.socket(); s.settimeout(3); s.connect(('127.0.0.1', port))
attempt('connect', connect)
attempt('signal_host', lambda: os.kill(hostpid, 0))
attempt('unshare', lambda: os.unshare(os.CLONE_NEWUSER))
out['ifaces'] = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:])
out['environ'] = dict(os.environ)
allenv = b''
for p in os.listdir('/proc'):
    if p.isdigit():
        try:
            allenv += open('/proc/%s/environ' % p, 'rb').read()
        except OSError:
            pass
out['all_environ'] = allenv.decode('latin-1')
out['cmdline1'] = open('/proc/1/cmdline', 'rb').read().decode('latin-1')
out['pids'] = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
st = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines() if ':' in l)
out['status'] = {k: st[k].strip() for k in ('CapEff', 'CapPrm', 'CapBnd', 'NoNewPrivs', 'Seccomp')}
out['hostname'] = socket.gethostname()
out['mounts'] = sorted(set(l.split()[1] for l in open('/proc/self/mounts')))
print(json.dumps(out))
'''

listener = socket.socket()
listener.bind(('127.0.0.1', 0))
listener.listen(5)
port = listener.getsockname()[1]
secret = 'cdm-secret-' + secrets.token_hex(12)
passed = 'cdm-passed-' + secrets.token_hex(6)
seccomp_on = sbx.blobs_present()

for label, user in sbx.identities():
    home = user.pw_dir if user else os.path.expanduser('~')
    fake = 'cdm-test-key-' + secrets.token_hex(6)
    ssh = os.path.join(home, '.ssh')
    made_ssh = not os.path.isdir(ssh)
    os.makedirs(ssh, mode=0o700, exist_ok=True)
    with open(os.path.join(ssh, fake), 'w') as f:
        f.write('-----BEGIN FAKE KEY-----\n')
    if user:
        os.chown(ssh, user.pw_uid, user.pw_gid)
        os.chown(os.path.join(ssh, fake), user.pw_uid, user.pw_gid)
    try:
        with sbx.Env(user, config={'sandbox.env_passthrough': 'CDM_TEST_PASSED'}) as env:
            r = env.cli('sandbox', 'run', '--', 'python3', '-c', PROBE, home, env.instance,
                        str(port), str(os.getpid()), fake,
                        env={'CODUMENTOR_JWT_SECRET': secret, 'OPENAI_API_KEY': secret,
                             'CDM_TEST_PASSED': passed})
            if not tap.is_(r.returncode, 0, '%s: the probe ran' % label):
                tap.diag(r.stderr)
                continue
            o = json.loads(r.stdout)
            for what in ('shadow', 'ssh_key', 'home', 'instance', 'run', 'root'):
                tap.is_(o[what], 'FileNotFoundError', '%s: %s is not there' % (label, what))
            tap.isnt(o['connect'], 'ok', '%s: connecting to a host port fails' % label)
            tap.is_(o['ifaces'], ['lo'], '%s: only a loopback interface' % label)
            tap.is_(o['signal_host'], 'ProcessLookupError',
                    '%s: a host process (the test) cannot be signalled' % label)
            tap.is_(sorted(o['environ']), ['CDM_TEST_PASSED', 'HOME', 'LANG', 'PATH', 'PWD', 'TERM'],
                    '%s: the environment is the minimal list plus the listed variable' % label)
            tap.is_(o['environ'].get('CDM_TEST_PASSED'), passed,
                    '%s: sandbox.env_passthrough passes its value' % label)
            tap.is_(o['environ']['PATH'], '/usr/local/bin:/usr/bin:/bin', '%s: PATH' % label)
            tap.ok(secret not in r.stdout, '%s: the secret is in no environment '
                   '(env, /proc/*/environ)' % label)
            tap.ok(o['cmdline1'].startswith('bwrap\0--args\0'),
                   '%s: /proc/1 is bwrap, its options passed with --args' % label)
            tap.ok('--ro-bind' not in o['cmdline1'] and env.workspaces not in o['cmdline1'],
                   '%s: no bwrap option or workspace path in /proc/1/cmdline' % label)
            tap.ok(max(o['pids']) < 50, '%s: a pid namespace of its own (pids %s)' % (label, o['pids']))
            tap.is_(o['status']['CapEff'], '0000000000000000', '%s: CapEff 0' % label)
            tap.is_(o['status']['CapPrm'], '0000000000000000', '%s: CapPrm 0' % label)
            tap.is_(o['status']['CapBnd'], '0000000000000000', '%s: CapBnd 0' % label)
            tap.is_(o['status']['NoNewPrivs'], '1', '%s: NoNewPrivs 1' % label)
            if seccomp_on:
                tap.is_(o['status']['Seccomp'], '2', '%s: Seccomp 2 (filter)' % label)
            else:
                tap.skip('no seccomp blobs built')
            tap.isnt(o['unshare'], 'ok', '%s: a nested user namespace is refused' % label)
            tap.is_(o['hostname'], 'sandbox', '%s: hostname' % label)
            tap.ok(not any(m.startswith(('/home', '/root', '/run', env.base)) for m in o['mounts']),
                   '%s: no mount of /home, /root, /run or the instance' % label)
            tap.ok('/workspace' in o['mounts'] and '/usr' in o['mounts'],
                   '%s: /workspace and /usr are mounted' % label)
            r = env.cli('sandbox', 'run', '--', 'sh', '-c', 'echo x > /usr/x; echo y > /etc/passwd')
            tap.isnt(r.returncode, 0, '%s: system directories are read-only' % label)
            r = env.cli('sandbox', 'run', '--', 'sh', '-c',
                        'echo y >> /etc/passwd 2>/dev/null && echo WROTE; cat /etc/passwd')
            with open('/etc/passwd') as f:
                host_passwd = f.read()
            tap.ok('WROTE' not in r.stdout, '%s: /etc/passwd is read-only inside' % label)
            tap.is_(r.stdout, host_passwd, '%s: /etc/passwd inside is the host file' % label)
    finally:
        os.unlink(os.path.join(ssh, fake))
        if made_ssh:
            os.rmdir(ssh)

listener.close()
tap.done()
