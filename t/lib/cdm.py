"""cdm.py -- the integration-test harness: a real `codumentor api` behind a
real nginx, in a temporary directory, torn down afterwards.

    with cdm.Stack() as s:
        tok = s.admin_token()
        r = s.request('GET', '/api/auth/me', token=tok)

Stack builds, under one tempfile.mkdtemp() directory:
    instance/     the server's instance_dir (data/ and logs/ below it)
    workspaces/   workspace_isolation.base_dir
    run/          the FastCGI socket
    nginx/        nginx prefix: its configuration, temp dirs, logs, pid
    tls/          a throw-away self-signed certificate for 127.0.0.1
    codumentor.yaml, server.out (the server's stdout and stderr)

The nginx server block is conf-examples/nginx.conf itself, with only the
listen line, the socket path, the certificate paths and client_max_body_size
replaced, so the operator's example is what the suite exercises.

Event streams are read by eventstream.EventStream (Stack.open_stream); cdm
re-exports EventStream, StreamEnded and Event for the tests.

Environment: CDM_BUILDDIR (holds the codumentor binary), CDM_SRCDIR (the
source tree), CDM_NGINX (default /usr/sbin/nginx), CDM_KEEP=1 (keep the
temporary directory and print where it is).

Standard library only.
"""

import base64
import collections
import hashlib
import hmac
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import tap
from eventstream import Event, EventStream, StreamEnded, json_or_none as _json_or_none  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get('CDM_SRCDIR') or os.path.abspath(os.path.join(HERE, '..', '..'))
BUILDDIR = os.environ.get('CDM_BUILDDIR') or SRCDIR
NGINX = os.environ.get('CDM_NGINX') or '/usr/sbin/nginx'
KEEP = os.environ.get('CDM_KEEP', '') not in ('', '0')

# The strings of conf-examples/nginx.conf the harness replaces.
EX_LISTEN = 'listen 443 ssl;'
EX_SOCKET = 'unix:/run/codumentor/fcgi.sock'
EX_CERT = '/etc/ssl/codumentor/fullchain.pem'
EX_KEY = '/etc/ssl/codumentor/privkey.pem'
EX_BODY_RE = re.compile(r'client_max_body_size\s+[^;]+;')

Response = collections.namedtuple('Response', 'status headers body json')


class StackError(Exception):
    pass


def binary():
    return os.path.join(BUILDDIR, 'codumentor')


def package_version():
    """The version configure.ac declares (AC_INIT), or None."""
    try:
        with open(os.path.join(SRCDIR, 'configure.ac')) as f:
            m = re.search(r'AC_INIT\(\[[^\]]*\],\s*\[([^\]]+)\]', f.read())
            return m.group(1) if m else None
    except OSError:
        return None


def random_id():
    """An id that no server object has: 128 random bits, base64url."""
    return secrets.token_urlsafe(16)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def tail(path, lines=40):
    try:
        with open(path, 'rb') as f:
            data = f.read().decode('utf-8', 'replace')
    except OSError as e:
        return '(%s: %s)' % (path, e.strerror)
    return '\n'.join(data.splitlines()[-lines:])


def render_yaml(tree, indent=0):
    """Block-style YAML for a nested dict of scalars, lists and dicts."""
    out = []
    pad = ' ' * indent
    for key, val in tree.items():
        if isinstance(val, dict):
            out.append('%s%s:' % (pad, key))
            out.append(render_yaml(val, indent + 2))
        elif isinstance(val, (list, tuple)):
            if not val:
                out.append('%s%s: []' % (pad, key))
            else:
                out.append('%s%s:' % (pad, key))
                out.extend('%s  - %s' % (pad, yaml_scalar(v)) for v in val)
        else:
            out.append('%s%s: %s' % (pad, key, yaml_scalar(val)))
    return '\n'.join(line for line in out if line != '')


def yaml_scalar(v):
    if v is None:
        return 'null'
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(str(v))      # a JSON string is a YAML double-quoted scalar


def nest(dotted):
    """{'a.b': 1, 'a.c': 2} -> {'a': {'b': 1, 'c': 2}}"""
    tree = {}
    for key, val in dotted.items():
        node = tree
        parts = key.split('.')
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError('config key %s: %s is not a mapping' % (key, p))
        node[parts[-1]] = val
    return tree


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))


def jwt_encode(header, payload, key, alg='HS256'):
    """A compact JWT with HEADER and PAYLOAD (dicts or raw bytes) signed
    with KEY under ALG ('HS256', 'HS512' or 'none' for an empty signature)."""
    def enc(part):
        if isinstance(part, dict):
            part = json.dumps(part, separators=(',', ':')).encode()
        return _b64url(part)
    signing_input = enc(header) + '.' + enc(payload)
    if alg == 'none':
        sig = ''
    else:
        digest = {'HS256': hashlib.sha256, 'HS512': hashlib.sha512}[alg]
        if isinstance(key, str):
            key = key.encode()
        sig = _b64url(hmac.new(key, signing_input.encode(), digest).digest())
    return signing_input + '.' + sig


def jwt_decode(token):
    """(header, payload) of a compact JWT, without verifying anything."""
    h, p, _ = token.split('.')
    return json.loads(b64url_decode(h)), json.loads(b64url_decode(p))


def parallel(n, fn, timeout=60):
    """Run fn(i) for i in range(n), each in its own thread. Returns the list
    of results; an exception raised by fn(i) is returned in its place."""
    results = [None] * n

    def run(i):
        try:
            results[i] = fn(i)
        except BaseException as e:      # reported, never lost
            results[i] = e
    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for i, t in enumerate(threads):
        t.join(max(0, deadline - time.monotonic()))
        if t.is_alive():
            results[i] = TimeoutError('thread %d still running after %ss' % (i, timeout))
    return results


def wait_for(pred, timeout, interval=0.1):
    """Poll PRED until it returns something true or TIMEOUT passes; returns
    the last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def _pdeathsig():
    # Children die with the test: a test killed by the driver's timeout must
    # not leave a server or an nginx behind.
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)       # PR_SET_PDEATHSIG
    except Exception:
        pass


class User:
    """A user the test made: name, password, id, token, is_admin."""

    def __init__(self, name, password, id=None, token=None, is_admin=False):
        self.name, self.password, self.id = name, password, id
        self.token, self.is_admin = token, is_admin

    def __repr__(self):
        return 'User(%r)' % self.name


class Stack:
    """nginx + codumentor api in a temporary directory.

    config: extra configuration keys, dotted ({'server.max_streams': 2}).
    nginx_max_body: client_max_body_size for nginx (e.g. '1m'); by default
        the example's value, or server.max_body_bytes when the test sets it.
    nginx: False to run the server alone (no TLS front, no HTTP helpers).
    start: False to set up everything but not start the server.
    make_instance: False to leave instance/ for the server to create.
    user: a pwd entry to run the server and the CLI as (as root only), the
        production set-up: the binaries and seccomp blobs are copied to
        bin/ and seccomp/ where that user can reach them, instance/ and
        workspaces/ belong to it, and it runs with www-data as an extra
        group so that it can hand the socket to nginx.
    """

    def __init__(self, config=None, nginx=True, nginx_max_body=None, start=True,
                 make_instance=True, user=None):
        self.extra = dict(config or {})
        self.user = user
        self.use_nginx = nginx
        self.nginx_max_body = nginx_max_body
        self.autostart = start
        self.make_instance = make_instance
        self.base = None
        self.server = None
        self.nginx_proc = None
        self.port = None
        self.streams = []
        self._admin = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ setup

    def __enter__(self):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        try:
            self.setup()
            if self.autostart:
                self.start_server()
        except StackError as e:
            self._diag_tails()
            self.cleanup()
            tap.bail_out(str(e))
        except BaseException:
            self._diag_tails()
            self.cleanup()
            raise
        return self

    def __exit__(self, etype, value, tb):
        if etype is not None or tap.failed():
            self._diag_tails()
        self.cleanup()
        return False

    def _on_signal(self, signum, frame):
        raise SystemExit('killed by signal %d' % signum)

    def setup(self):
        if not os.access(binary(), os.X_OK):
            raise StackError('no server binary at %s (set CDM_BUILDDIR)' % binary())
        if self.use_nginx:
            if not os.access(NGINX, os.X_OK):
                tap.skip_all('nginx not found at %s (set CDM_NGINX)' % NGINX)
            if not shutil.which('openssl'):
                tap.skip_all('openssl command not found')
        self.root = os.geteuid() == 0
        self.base = tempfile.mkdtemp(prefix='cdm-test-', dir='/tmp')
        if KEEP:
            tap.diag('CDM_KEEP: keeping %s' % self.base)
        self.instance_dir = self.path('instance')
        self.run_dir = self.path('run')
        self.nginx_dir = self.path('nginx')
        self.socket_path = os.path.join(self.run_dir, 'fcgi.sock')
        self.config_path = self.path('codumentor.yaml')
        self.server_out = self.path('server.out')
        for d in ('instance', 'workspaces', 'run', 'nginx', 'tls'):
            if d != 'instance' or self.make_instance:
                os.mkdir(self.path(d), 0o700)
        self.server_binary = binary()
        if self.root:
            # nginx workers run as www-data: they must reach run/fcgi.sock
            # (group www-data, see server.socket_group) and nginx/ (temp dirs).
            import grp
            self.www_gid = grp.getgrnam('www-data').gr_gid
            os.chmod(self.base, 0o711)
            os.chown(self.run_dir, 0 if self.user is None else self.user.pw_uid, self.www_gid)
            os.chmod(self.run_dir, 0o750)
            os.chmod(self.nginx_dir, 0o755)
        if self.user is not None:
            if not self.root:
                raise StackError('Stack(user=...) needs root')
            self._setup_user()
        self.jwt_secret = secrets.token_hex(32)
        self.heartbeat = int(self.extra.get('server.heartbeat_seconds', 2))
        self.write_config()
        if self.use_nginx:
            self.make_cert()
            self.write_nginx_config()
            self.start_nginx()

    def _setup_user(self):
        uid, gid = self.user.pw_uid, self.user.pw_gid
        for name, mode in (('bin', 0o755), ('seccomp', 0o755)):
            os.mkdir(self.path(name), mode)
        for src in (binary(), os.path.join(BUILDDIR, 'codumentor-sandbox')):
            dst = self.path('bin', os.path.basename(src))
            shutil.copy(src, dst)
            os.chmod(dst, 0o755)
        blobs = os.path.join(BUILDDIR, 'sandbox', 'seccomp')
        for f in (os.listdir(blobs) if os.path.isdir(blobs) else ()):
            shutil.copy(os.path.join(blobs, f), self.path('seccomp', f))
            os.chmod(self.path('seccomp', f), 0o644)
        self.server_binary = self.path('bin', 'codumentor')
        for d in ('instance', 'workspaces'):
            if os.path.isdir(self.path(d)):
                os.chown(self.path(d), uid, gid)

    def _env(self):
        """The environment of the server and the CLI: the test's, without
        the JWT secret, with the Stack's user's HOME when there is one."""
        env = dict(os.environ)
        env.pop('CODUMENTOR_JWT_SECRET', None)
        if self.user is not None:
            env['HOME'] = self.user.pw_dir
            env['USER'] = env['LOGNAME'] = self.user.pw_name
        return env

    def _user_kw(self):
        """Popen arguments that run a process as the Stack's user."""
        if self.user is None:
            return {}
        return {'user': self.user.pw_uid, 'group': self.user.pw_gid,
                'extra_groups': [self.www_gid]}

    def path(self, *parts):
        return os.path.join(self.base, *parts)

    def config_values(self):
        """The dotted keys written to codumentor.yaml."""
        cfg = {
            'instance_dir': self.instance_dir,
            'listen': 'unix:' + self.socket_path,
            'server.heartbeat_seconds': 2,
            'auth.jwt_secret': self.jwt_secret,
            'workspace_isolation.base_dir': self.path('workspaces'),
            # Nothing listens there: a turn fails at once instead of waiting
            # for a model.
            'llm.profiles.default.base_url': 'http://127.0.0.1:%d/v1' % free_port(),
            'llm.profiles.default.model': 'test-model',
            # The seccomp blobs the build made; installed ones may be absent
            # or from another version. (The helper is found beside the binary.)
            'sandbox.seccomp_dir': os.path.join(BUILDDIR, 'sandbox', 'seccomp'),
        }
        if self.user is not None:
            cfg['sandbox.seccomp_dir'] = self.path('seccomp')
        if self.root:
            cfg['server.socket_group'] = 'www-data'
        cfg.update(self.extra)
        return cfg

    def write_config(self):
        text = '# written by t/lib/cdm.py\n' + render_yaml(nest(self.config_values())) + '\n'
        with open(self.config_path, 'w') as f:
            f.write(text)

    def make_cert(self):
        self.cert = self.path('tls', 'cert.pem')
        self.key = self.path('tls', 'key.pem')
        r = subprocess.run(
            ['openssl', 'req', '-x509', '-newkey', 'ec',
             '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
             '-subj', '/CN=localhost', '-keyout', self.key, '-out', self.cert],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        if r.returncode != 0:
            raise StackError('openssl req failed: ' + r.stdout.decode(errors='replace'))

    def write_nginx_config(self):
        with open(os.path.join(SRCDIR, 'conf-examples', 'nginx.conf')) as f:
            site = f.read()
        self.port = free_port()
        site = _replace(site, EX_LISTEN, 'listen 127.0.0.1:%d ssl;' % self.port)
        site = _replace(site, EX_SOCKET, 'unix:' + self.socket_path)
        site = _replace(site, EX_CERT, self.cert)
        site = _replace(site, EX_KEY, self.key)
        body = self.nginx_max_body
        if body is None and 'server.max_body_bytes' in self.extra:
            body = str(self.extra['server.max_body_bytes'])
        if body is not None:
            if not EX_BODY_RE.search(site):
                raise StackError('conf-examples/nginx.conf: no client_max_body_size line')
            site = EX_BODY_RE.sub('client_max_body_size %s;' % body, site)
        n = self.nginx_dir
        with open(os.path.join(n, 'codumentor-site.conf'), 'w') as f:
            f.write(site)
        # "include fastcgi_params" is relative to the main file's directory.
        shutil.copy('/etc/nginx/fastcgi_params', os.path.join(n, 'fastcgi_params'))
        main = [
            '# written by t/lib/cdm.py around conf-examples/nginx.conf',
            'user www-data;' if self.root else '',
            'worker_processes 2;',
            'worker_rlimit_nofile 16384;',
            'daemon off;',
            'pid %s/nginx.pid;' % n,
            'error_log %s/error.log info;' % n,
            'events { worker_connections 8192; }',
            'http {',
            '    include /etc/nginx/mime.types;',
            '    default_type application/octet-stream;',
            '    access_log %s/access.log;' % n,
            '    client_body_temp_path %s/client_body_temp;' % n,
            '    fastcgi_temp_path %s/fastcgi_temp;' % n,
            '    proxy_temp_path %s/proxy_temp;' % n,
            '    uwsgi_temp_path %s/uwsgi_temp;' % n,
            '    scgi_temp_path %s/scgi_temp;' % n,
            '    include %s/codumentor-site.conf;' % n,
            '}',
        ]
        self.nginx_conf = os.path.join(n, 'nginx.conf')
        with open(self.nginx_conf, 'w') as f:
            f.write('\n'.join(line for line in main if line) + '\n')

    def nginx_cmd(self, *extra):
        n = self.nginx_dir
        cmd = [NGINX, '-p', n + '/', '-c', self.nginx_conf]
        if _nginx_has_e():
            # Else nginx opens its built-in error log before reading ours.
            cmd += ['-e', os.path.join(n, 'error.log')]
        return cmd + list(extra)

    def nginx_test(self):
        """`nginx -t` on the generated configuration: (exit code, output)."""
        r = subprocess.run(self.nginx_cmd('-t'), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        return r.returncode, r.stdout.decode(errors='replace')

    def start_nginx(self):
        rc, out = self.nginx_test()
        if rc != 0:
            raise StackError('nginx -t failed: ' + out)
        self.nginx_proc = subprocess.Popen(
            self.nginx_cmd(), stdin=subprocess.DEVNULL,
            stdout=open(os.path.join(self.nginx_dir, 'nginx.out'), 'wb'),
            stderr=subprocess.STDOUT, preexec_fn=_pdeathsig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.nginx_proc.poll() is not None:
                raise StackError('nginx exited with %d' % self.nginx_proc.returncode)
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise StackError('nginx is not listening on port %d' % self.port)

    # ------------------------------------------------------------ server

    def start_server(self, args=(), wait=True):
        """Start `codumentor -c CFG api` and wait until GET /api/health through
        nginx answers 200 (10 s at most)."""
        if self.server is not None and self.server.poll() is None:
            raise StackError('server already running')
        env = self._env()
        out = open(self.server_out, 'ab')
        self.server = subprocess.Popen(
            [self.server_binary, '-c', self.config_path, 'api'] + list(args),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=env, cwd=self.base, preexec_fn=_pdeathsig, **self._user_kw())
        out.close()
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=10):
        deadline = time.monotonic() + timeout
        last = 'socket %s never appeared' % self.socket_path
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise StackError('server exited with %d at start' % self.server.returncode)
            if os.path.exists(self.socket_path):
                if not self.use_nginx:
                    return
                try:
                    r = self.request('GET', '/api/health', timeout=2)
                    if r.status == 200:
                        return
                    last = 'GET /api/health: %d %r' % (r.status, r.body[:200])
                except (OSError, http.client.HTTPException) as e:
                    last = 'GET /api/health: %s' % e
            time.sleep(0.05)
        raise StackError('server not ready after %ss: %s' % (timeout, last))

    @property
    def server_pid(self):
        return self.server.pid if self.server else None

    def stop_server(self, sig=signal.SIGTERM, timeout=10):
        """Signal the server and wait for it; returns its exit status
        (negative: killed by that signal), or None if it had to be killed
        with SIGKILL after TIMEOUT seconds."""
        if self.server is None:
            return None
        p, self.server = self.server, None
        if p.poll() is not None:
            return p.returncode
        p.send_signal(sig)
        try:
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            tap.diag('server did not exit %ss after signal %d: killed' % (timeout, sig))
            p.kill()
            p.wait()
            return None

    def restart_server(self, sig=signal.SIGTERM):
        rc = self.stop_server(sig)
        self.start_server()
        return rc

    def signal_server(self, sig):
        self.server.send_signal(sig)

    def log_path(self):
        return self.extra.get('log.file') or os.path.join(self.instance_dir, 'logs', 'codumentor.log')

    def server_log(self):
        """The server's log file (instance/logs/codumentor.log) as text."""
        try:
            with open(self.log_path(), 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except OSError:
            return ''

    def server_output(self):
        """What the server wrote to stdout and stderr."""
        try:
            with open(self.server_out, 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except OSError:
            return ''

    def db_path(self):
        return os.path.join(self.instance_dir, 'data', 'codumentor.db')

    def cli(self, *args, input=None, timeout=30, config=True):
        """Run `codumentor [-c CFG] ARGS...`; returns CompletedProcess with
        stdout and stderr as text."""
        cmd = [self.server_binary] + (['-c', self.config_path] if config else []) + list(args)
        env = self._env()
        return subprocess.run(cmd, input=input, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout, env=env,
                              cwd=self.base, **self._user_kw())

    # ------------------------------------------------------------ teardown

    def _diag_tails(self):
        if not self.base:
            return
        tap.diag('--- server output (%s), last lines:' % self.server_out)
        tap.diag(tail(self.server_out))
        tap.diag('--- server log (%s), last lines:' % self.log_path())
        tap.diag(tail(self.log_path()))
        if self.use_nginx:
            # [info] lines (clients closing connections) are routine; the
            # whole file is kept with CDM_KEEP=1.
            tap.diag('--- nginx error log, last warnings and errors:')
            log = tail(os.path.join(self.nginx_dir, 'error.log'), 2000).splitlines()
            tap.diag('\n'.join([ln for ln in log if re.search(
                r'\[(warn|error|crit|alert|emerg)\]', ln)][-20:]) or '(none)')

    def cleanup(self):
        for st in list(self.streams):
            st.close()
        self.streams = []
        if self.server is not None:
            self.stop_server(timeout=10)
        if self.nginx_proc is not None:
            p, self.nginx_proc = self.nginx_proc, None
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)       # fast shutdown
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.base and os.path.isdir(self.base):
            if KEEP:
                tap.diag('CDM_KEEP: left %s' % self.base)
            else:
                shutil.rmtree(self.base, onerror=_force_remove)
        self.base = None

    # ------------------------------------------------------------ HTTP

    def ssl_context(self):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def request(self, method, path, body=None, headers=None, token=None,
                raw=None, timeout=15):
        """One HTTPS request through nginx. BODY (a dict or list) is sent as
        JSON; RAW (bytes or str) is sent as is, with Content-Type
        application/json unless HEADERS says otherwise. Returns
        Response(status, headers (lowercased names), body bytes, json or None).
        """
        hdrs = {'Host': 'localhost', 'Connection': 'close'}
        if token is not None:
            hdrs['Authorization'] = 'Bearer ' + token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
        elif raw is not None:
            data = raw.encode() if isinstance(raw, str) else raw
        if data is not None:
            hdrs['Content-Type'] = 'application/json'
        for k, v in (headers or {}).items():
            for existing in [h for h in hdrs if h.lower() == k.lower()]:
                del hdrs[existing]
            if v is not None:
                hdrs[k] = v
        conn = http.client.HTTPSConnection('127.0.0.1', self.port, timeout=timeout,
                                           context=self.ssl_context())
        try:
            try:
                conn.request(method, path, body=data, headers=hdrs)
            except (BrokenPipeError, ConnectionResetError):
                pass        # nginx may answer (413) before reading all of a big body
            resp = conn.getresponse()
            rbody = resp.read()
            rheaders = {}
            for k, v in resp.getheaders():
                k = k.lower()
                rheaders[k] = rheaders[k] + ', ' + v if k in rheaders else v
            return Response(resp.status, rheaders, rbody, _json_or_none(rbody))
        finally:
            conn.close()

    # ------------------------------------------------------------ users

    def add_user(self, name, password, admin=False):
        """`codumentor user add NAME [--admin]`, password on stdin. Raises
        StackError if the command fails; returns the CompletedProcess."""
        r = self.cli('user', 'add', name, *(['--admin'] if admin else []),
                     input=password + '\n')
        if r.returncode != 0:
            raise StackError('user add %s: exit %d: %s' % (name, r.returncode, r.stderr.strip()))
        return r

    def login(self, username, password):
        """POST /api/auth/login; returns the token (StackError otherwise)."""
        r = self.request('POST', '/api/auth/login',
                         body={'username': username, 'password': password})
        if r.status != 200 or not r.json or 'token' not in r.json:
            raise StackError('login %s: %d %r' % (username, r.status, r.body[:300]))
        return r.json['token']

    def admin(self):
        """The 'admin' user, made once with the CLI and logged in."""
        with self._lock:
            if self._admin is None:
                pw = secrets.token_urlsafe(12)
                self.add_user('admin', pw, admin=True)
                r = self.request('POST', '/api/auth/login',
                                 body={'username': 'admin', 'password': pw})
                if r.status != 200:
                    raise StackError('admin login: %d %r' % (r.status, r.body[:300]))
                u = r.json['user']
                self._admin = User('admin', pw, u['id'], r.json['token'], True)
            return self._admin

    def admin_token(self):
        return self.admin().token

    def create_user(self, name, password, admin=False, token=None):
        """POST /api/users as the admin; returns the Response."""
        body = {'username': name, 'password': password}
        if admin:
            body['is_admin'] = True
        return self.request('POST', '/api/users', body=body,
                            token=token or self.admin_token())

    def new_user(self, name=None, admin=False):
        """A fresh user, created through the API and logged in."""
        name = name or 'u' + secrets.token_hex(4)
        pw = secrets.token_urlsafe(12)
        r = self.create_user(name, pw, admin=admin)
        if r.status != 201:
            raise StackError('create user %s: %d %r' % (name, r.status, r.body[:300]))
        return User(name, pw, r.json['id'], self.login(name, pw), admin)

    # ------------------------------------------------------------ conversations

    def create_conversation(self, token, title=None):
        body = {} if title is None else {'title': title}
        r = self.request('POST', '/api/conversations', body=body, token=token)
        if r.status != 201:
            raise StackError('create conversation: %d %r' % (r.status, r.body[:300]))
        return r.json['id']

    def post_message(self, token, conv_id, content, busy_timeout=15):
        """POST a user message; while a turn of the conversation still runs
        (409) try again, for BUSY_TIMEOUT seconds at most. Returns the last
        Response."""
        deadline = time.monotonic() + busy_timeout
        while True:
            r = self.request('POST', '/api/conversations/%s/messages' % conv_id,
                             body={'content': content}, token=token)
            if r.status != 409 or time.monotonic() >= deadline:
                return r
            time.sleep(0.1)

    # ------------------------------------------------------------ SSE

    def open_stream(self, conv_id, token, last_event_id=None, after=None,
                    timeout=10, path=None):
        """GET /api/conversations/ID/events as a raw stream; see EventStream."""
        if path is None:
            path = '/api/conversations/%s/events' % conv_id
            if after is not None:
                path += '?after=%s' % after
        st = EventStream(self, path, token, last_event_id, timeout)
        with self._lock:
            self.streams.append(st)
        return st

    def open_streams(self, n, conv_id, token, **kw):
        """N streams opened concurrently; raises the first error."""
        res = parallel(n, lambda i: self.open_stream(conv_id, token, **kw))
        for r in res:
            if isinstance(r, BaseException):
                raise r
        return res

    def admin_status(self):
        r = self.request('GET', '/api/admin/status', token=self.admin_token())
        return r.json if r.status == 200 else None

    def open_stream_count(self):
        st = self.admin_status()
        return st.get('streams') if st else None


_nginx_e = None


def _nginx_has_e():
    """Whether this nginx knows -e (1.19.5 and later)."""
    global _nginx_e
    if _nginx_e is None:
        r = subprocess.run([NGINX, '-h'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        _nginx_e = b'-e filename' in r.stdout
    return _nginx_e


def _replace(text, old, new):
    if old not in text:
        raise StackError('conf-examples/nginx.conf: %r not found' % old)
    return text.replace(old, new)


def _force_remove(func, path, exc_info):
    try:
        os.chmod(os.path.dirname(path), 0o700)
        func(path)
    except OSError:
        pass


def is_error(r, status, code, name):
    """Two tests: R (a Response or an EventStream) has STATUS, and its body is
    {"error": {"code": CODE, "message": "<non-empty>"}}."""
    tap.is_(r.status, status, '%s: status %d' % (name, status))
    err = r.json.get('error') if isinstance(r.json, dict) else None
    good = (isinstance(err, dict) and err.get('code') == code
            and isinstance(err.get('message'), str) and err.get('message') != '')
    if not tap.ok(good, '%s: body {"error":{"code":"%s","message":...}}' % (name, code)):
        tap.diag('body: %r' % r.body[:300])
    return good


def is_401(r, name):
    """401 unauthorized with WWW-Authenticate: Bearer."""
    is_error(r, 401, 'unauthorized', name)
    tap.like(r.headers.get('www-authenticate', ''), r'^Bearer\b',
             name + ': WWW-Authenticate: Bearer')
