"""apache.py -- Apache httpd 2.4 fronts for the integration tests, beside
cdm.py's nginx: a real Apache (Debian's /usr/sbin/apache2, modules from
/usr/lib/apache2/modules) started in the foreground on a loopback port with
TLS, in the stack's temporary directory, in front of the same FastCGI socket.

    with apache.ApacheStack('proxy_fcgi') as s:     # or 'fcgid'
        tok = s.admin_token()
        st = s.open_stream(cid, tok)                # everything cdm.Stack offers

The site is conf-examples/apache-proxy-fcgi.conf or apache-fcgid.conf itself,
with only the VirtualHost address, the socket path (proxy_fcgi), the program
and configuration paths (fcgid), the certificate paths and the body cap
(LimitRequestBody, FcgidMaxRequestLen) replaced; the main file around it (modules, MPM, logs, pid, mod_fcgid's
server-wide paths) is written here, the way Debian's apache2.conf and
mods-enabled/ would provide it.

Under mod_fcgid the stack does not start the server: the relay does, on the
first request, as the user Apache's children run as (www-data when the test
runs as root). The instance, workspace and socket directories are given to
that user, and the CLI (user add, ...) runs as that user too, so the files it
makes stay the server's.

Front(stack, module) puts an extra Apache in front of any running stack (the
routing test runs nginx, mod_proxy_fcgi and mod_fcgid side by side);
stack.via(port) (see Via) sends a stack's helpers through another front.

Environment: CDM_APACHE (default /usr/sbin/apache2), CDM_APACHE_MODULES
(default /usr/lib/apache2/modules), and cdm.py's.
"""

import functools
import grp
import os
import pwd
import re
import signal
import subprocess
import time

import cdm
import tap

APACHE = os.environ.get('CDM_APACHE') or '/usr/sbin/apache2'
MODULES = os.environ.get('CDM_APACHE_MODULES') or '/usr/lib/apache2/modules'
RUN_USER = 'www-data'

EXAMPLES = {'proxy_fcgi': 'apache-proxy-fcgi.conf', 'fcgid': 'apache-fcgid.conf'}

# The strings of the conf-examples the harness replaces.
EX_VHOST = '<VirtualHost *:443>'
EX_SOCKET = '/run/codumentor/fcgi.sock'
EX_PROGRAM = '/usr/bin/codumentor -c /etc/codumentor/codumentor.yaml relay'
EX_CERT = '/etc/ssl/codumentor/fullchain.pem'
EX_KEY = '/etc/ssl/codumentor/privkey.pem'
# The body cap: LimitRequestBody for mod_proxy_fcgi, FcgidMaxRequestLen
# for mod_fcgid (see the comment there on why not LimitRequestBody).
EX_BODY_RE = {
    'proxy_fcgi': re.compile(r'^(\s*)(LimitRequestBody)\s+\d+\s*$', re.M),
    'fcgid': re.compile(r'^(\s*)(FcgidMaxRequestLen)\s+\d+\s*$', re.M),
}

BASE_MODULES = ['mpm_event', 'authz_core', 'mime', 'ssl', 'socache_shmcb',
                'headers', 'setenvif', 'alias', 'filter', 'deflate']
FRONT_MODULES = {'proxy_fcgi': ['proxy', 'proxy_fcgi'], 'fcgid': ['fcgid']}


def available(module):
    """None when Apache and MODULE can be used here, else why not."""
    if not os.access(APACHE, os.X_OK):
        return 'apache2 not found at %s (set CDM_APACHE)' % APACHE
    for m in BASE_MODULES + FRONT_MODULES[module]:
        if not os.path.exists(os.path.join(MODULES, 'mod_%s.so' % m)):
            return 'mod_%s.so not in %s (apt-get install apache2%s)' % (
                m, MODULES, ' libapache2-mod-fcgid' if m == 'fcgid' else '')
    return None


def _replace(text, old, new, example):
    if old not in text:
        raise cdm.StackError('conf-examples/%s: %r not found' % (example, old))
    return text.replace(old, new)


def _proc_cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().decode('utf-8', 'replace').split('\0')[:-1]
    except OSError:
        return None


def processes(config_path, command):
    """Pids of `codumentor ... -c CONFIG_PATH ... COMMAND` processes (the
    resident server is 'api', mod_fcgid's processes are 'relay'); zombies
    excluded."""
    out = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        argv = _proc_cmdline(int(name))
        if not argv or argv[-1] != command or config_path not in argv:
            continue
        if os.path.basename(argv[0]) != 'codumentor':
            continue
        try:
            with open('/proc/%s/stat' % name) as f:
                if f.read().rpartition(')')[2].split()[0] in ('Z', 'X'):
                    continue
        except OSError:
            continue
        out.append(int(name))
    return sorted(out)


class Front:
    """An Apache instance in STACK.base/apache-MODULE/ in front of the
    stack's socket. start() / stop(); port, error_log()."""

    def __init__(self, stack, module, max_body=None):
        if module not in EXAMPLES:
            raise ValueError('module: proxy_fcgi or fcgid')
        self.stack, self.module = stack, module
        self.max_body = max_body
        self.dir = stack.path('apache-' + module)
        self.proc = None
        self.port = None

    def example_path(self):
        return os.path.join(cdm.SRCDIR, 'conf-examples', EXAMPLES[self.module])

    def write_config(self):
        s, d, ex = self.stack, self.dir, EXAMPLES[self.module]
        os.makedirs(os.path.join(d, 'run'), exist_ok=True)
        os.chmod(d, 0o755)
        if not getattr(s, 'cert', None):
            s.make_cert()
        with open(self.example_path()) as f:
            site = f.read()
        self.port = cdm.free_port()
        site = _replace(site, EX_VHOST, '<VirtualHost 127.0.0.1:%d>' % self.port, ex)
        if self.module == 'fcgid':
            site = _replace(site, EX_PROGRAM, '%s -c %s relay' % (cdm.binary(), s.config_path), ex)
        else:
            site = _replace(site, EX_SOCKET, s.socket_path, ex)
        site = _replace(site, EX_CERT, s.cert, ex)
        site = _replace(site, EX_KEY, s.key, ex)
        body = self.max_body
        if body is None and 'server.max_body_bytes' in s.extra:
            body = s.extra['server.max_body_bytes']
        if body is not None:
            rx = EX_BODY_RE[self.module]
            if not rx.search(site):
                raise cdm.StackError('conf-examples/%s: no %s line' % (ex, rx.pattern))
            site = rx.sub(lambda m: '%s%s %d' % (m.group(1), m.group(2), int(body)), site)
        with open(os.path.join(d, 'site.conf'), 'w') as f:
            f.write(site)
        mods = BASE_MODULES + FRONT_MODULES[self.module]
        main = ['# written by t/lib/apache.py around conf-examples/' + ex,
                'ServerRoot "%s"' % d,
                'ServerName localhost',
                'PidFile "%s/apache2.pid"' % d,
                'DefaultRuntimeDir "%s/run"' % d,
                'Mutex file:%s/run default' % d,
                'ErrorLog "%s/error.log"' % d,
                'LogLevel warn',
                'LogFormat "%h %t \\"%r\\" %>s %b %D" cdm',
                'CustomLog "%s/access.log" cdm' % d]
        if os.geteuid() == 0:
            main += ['User %s' % RUN_USER, 'Group %s' % RUN_USER]
        main += ['LoadModule %s_module "%s/mod_%s.so"' % (m, MODULES, m) for m in mods]
        main += [
            # Room for the tests' concurrent streams: each holds a thread.
            'StartServers 2', 'ServerLimit 4', 'ThreadsPerChild 64',
            'MaxRequestWorkers 256', 'Timeout 60',
            'TypesConfig /etc/mime.types',
            'SSLSessionCache "shmcb:%s/run/ssl_scache(512000)"' % d,
            # Compression is on for what the API sends, as an operator might
            # have it: the example's exclusion is what keeps streams plain.
            'AddOutputFilterByType DEFLATE application/json text/event-stream',
            'Listen 127.0.0.1:%d' % self.port,
        ]
        if self.module == 'fcgid':
            # Debian's mods-available/fcgid.conf has these under /var/lib.
            main += ['FcgidIPCDir "%s/fcgid"' % d,
                     'FcgidProcessTableFile "%s/fcgid/shm"' % d,
                     'FcgidConnectTimeout 20']
        main.append('Include "%s/site.conf"' % d)
        self.conf = os.path.join(d, 'apache2.conf')
        with open(self.conf, 'w') as f:
            f.write('\n'.join(main) + '\n')

    def cmd(self, *extra):
        return [APACHE, '-d', self.dir, '-f', self.conf] + list(extra)

    def config_test(self):
        r = subprocess.run(self.cmd('-t'), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30, env=self._env())
        return r.returncode, r.stdout.decode(errors='replace')

    def _env(self):
        env = dict(os.environ)
        env.pop('CODUMENTOR_JWT_SECRET', None)
        env['LANG'] = 'C'
        return env

    def start(self):
        why = available(self.module)
        if why:
            tap.skip_all(why)
        self.write_config()
        rc, out = self.config_test()
        if rc != 0:
            raise cdm.StackError('apache2 -t failed: ' + out)
        self.proc = subprocess.Popen(
            self.cmd('-DFOREGROUND'), stdin=subprocess.DEVNULL,
            stdout=open(os.path.join(self.dir, 'apache.out'), 'wb'),
            stderr=subprocess.STDOUT, env=self._env(), preexec_fn=cdm._pdeathsig)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise cdm.StackError('apache2 exited with %d: %s' % (
                    self.proc.returncode, cdm.tail(self.error_log_path(), 10)))
            try:
                cdm.socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise cdm.StackError('apache2 is not listening on port %d' % self.port)

    def stop(self):
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def error_log_path(self):
        return os.path.join(self.dir, 'error.log')

    def error_log(self):
        try:
            with open(self.error_log_path(), 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except OSError:
            return ''

    def relay_pids(self):
        """mod_fcgid's relay processes for this stack's configuration."""
        return processes(self.stack.config_path, 'relay')

    def diag(self):
        tap.diag('--- apache (%s) error log, last lines:' % self.module)
        tap.diag(cdm.tail(self.error_log_path(), 25))


class Via:
    """STACK's helpers (request, open_stream, login, ...) sent through
    another front listening on PORT; everything else is the stack's."""

    _OWN = ('admin', 'admin_token', 'add_user', 'cli', 'cleanup')

    def __init__(self, stack, port):
        self._stack, self.port = stack, port

    def __getattr__(self, name):
        attr = getattr(type(self._stack), name, None)
        if callable(attr) and name not in self._OWN:
            return functools.partial(attr, self)
        return getattr(self._stack, name)


class ApacheStack(cdm.Stack):
    """cdm.Stack with Apache (module 'proxy_fcgi' or 'fcgid') in front
    instead of nginx. With 'fcgid' the server is not started here (start is
    ignored): the relay starts it on the first request."""

    def __init__(self, module, config=None, start=True, max_body=None, **kw):
        super().__init__(config=config, nginx=False, start=start and module != 'fcgid', **kw)
        self.module = module
        self.front = None
        self.max_body = max_body
        self.service_user = None

    def setup(self):
        why = available(self.module)
        if why:
            tap.skip_all(why)
        super().setup()
        if self.module == 'fcgid' and self.root:
            give_to(self, RUN_USER)
            self.service_user = RUN_USER
        self.make_cert()
        self.front = Front(self, self.module, self.max_body)
        self.front.start()
        self.port = self.front.port

    def write_config(self):
        super().write_config()
        if self.service_user:
            os.chmod(self.config_path, 0o640)
            os.chown(self.config_path, 0, grp.getgrnam(self.service_user).gr_gid)

    def cli(self, *args, input=None, timeout=30, config=True):
        if not self.service_user:
            return super().cli(*args, input=input, timeout=timeout, config=config)
        cmd = [cdm.binary()] + (['-c', self.config_path] if config else []) + list(args)
        env = dict(os.environ)
        env.pop('CODUMENTOR_JWT_SECRET', None)
        return subprocess.run(cmd, input=input, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout,
                              env=env, user=self.service_user,
                              group=self.service_user, extra_groups=[], cwd='/')

    def wait_ready(self, timeout=10):
        deadline = time.monotonic() + timeout
        last = 'no answer'
        while time.monotonic() < deadline:
            if self.server is not None and self.server.poll() is not None:
                raise cdm.StackError('server exited with %d at start' % self.server.returncode)
            try:
                r = self.request('GET', '/api/health', timeout=2)
                if r.status == 200:
                    return
                last = 'GET /api/health: %d %r' % (r.status, r.body[:200])
            except (OSError, cdm.http.client.HTTPException) as e:
                last = 'GET /api/health: %s' % e
            time.sleep(0.1)
        raise cdm.StackError('not ready through Apache after %ss: %s' % (timeout, last))

    def resident_pids(self):
        """The `codumentor api` processes serving this stack's configuration
        (the relay's, or the one start_server() started)."""
        return processes(self.config_path, 'api')

    def kill_resident(self, sig=signal.SIGKILL, timeout=10):
        """Signal every resident server of this stack and wait until they
        are gone; returns the pids signalled."""
        pids = self.resident_pids()
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if self.server is not None and self.server.pid in pids:
            self.server.wait(timeout)
            self.server = None
        cdm.wait_for(lambda: not set(pids) & set(self.resident_pids()), timeout)
        return pids

    def _diag_tails(self):
        super()._diag_tails()
        if self.front is not None:
            self.front.diag()

    def cleanup(self):
        if self.front is not None:
            self.front.stop()
        if self.base:
            for pid in self.resident_pids():
                if self.server is None or pid != self.server.pid:
                    _terminate(pid)
        super().cleanup()


def give_to(stack, user):
    """The server will run as USER (a relay or spawn-fcgi starts it): the
    stack's instance, workspace and socket directories become USER's, as
    they would be on such a host, and the configuration readable by USER's
    group only. Skips the test if USER cannot run the binary."""
    pw = pwd.getpwnam(user)
    gid = grp.getgrnam(user).gr_gid
    if not _user_can_exec(user, cdm.binary()):
        tap.skip_all('%s cannot run %s (build in a directory it can reach)' % (user, cdm.binary()))
    for d in ('instance', 'workspaces', 'run'):
        for root, dirs, files in os.walk(stack.path(d)):
            for n in [root] + [os.path.join(root, x) for x in dirs + files]:
                os.chown(n, pw.pw_uid, gid)
    os.chmod(stack.run_dir, 0o750)
    os.chmod(stack.config_path, 0o640)
    os.chown(stack.config_path, 0, gid)


def _user_can_exec(user, path):
    r = subprocess.run(['/usr/bin/test', '-x', path], user=user, extra_groups=[])
    return r.returncode == 0


def _terminate(pid, timeout=10):
    """SIGTERM, then SIGKILL after TIMEOUT seconds: a process we did not start
    as a child (the relay starts the server detached)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not cdm.wait_for(lambda: not os.path.exists('/proc/%d/cmdline' % pid)
                        or pid not in _live(pid), timeout):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _live(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return [] if f.read().rpartition(')')[2].split()[0] in ('Z', 'X') else [pid]
    except OSError:
        return []


# ---------------------------------------------------------------- checks

def created(mid):
    """Matches the message.created event of message MID."""
    return lambda e: (e.type == 'message.created' and isinstance(e.data, dict)
                      and (e.data.get('message') or {}).get('id') == mid)


def raw_get(stack, path, headers, timeout=15):
    """GET PATH with HEADERS; returns (status, lowercased headers, the first
    body bytes) without waiting for the body to end."""
    conn = cdm.http.client.HTTPSConnection('127.0.0.1', stack.port, timeout=timeout,
                                           context=stack.ssl_context())
    try:
        conn.request('GET', path, headers=dict({'Host': 'localhost'}, **headers))
        resp = conn.getresponse()
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        return resp.status, hdrs, resp.read1(4096)
    finally:
        conn.close()


def check_streaming(s, label, n_streams=20, on_freed=None):
    """What every front must do with event streams (TAP tests, prefixed
    with LABEL): a login, a conversation, a message, its event arriving on
    the open stream before the stream ends; Last-Event-ID resume; no
    compression of the stream; N_STREAMS concurrent streams all receiving
    one published event; and clients that go away freeing their streams
    (GET /api/admin/status "streams" back to 0). ON_FREED(s) runs after
    that, for the front's own checks."""
    u = s.new_user()
    tap.ok(u.token, '%s: login through Apache' % label)
    cid = s.create_conversation(u.token, 'through ' + label)

    st = s.open_stream(cid, u.token, timeout=30)
    tap.is_(st.status, 200, '%s: events: 200' % label)
    tap.like(st.headers.get('content-type', ''), r'^text/event-stream\b',
             '%s: Content-Type: text/event-stream' % label)
    r = s.post_message(u.token, cid, 'hello through ' + label)
    tap.is_(r.status, 202, '%s: POST message: 202' % label)
    mid = (r.json or {}).get('message_id')
    first = None
    try:
        first, _ = st.wait_event(created(mid), timeout=10)
        tap.ok(not st.ended, '%s: the first event arrives while the stream is open (no buffering)' % label)
    except (TimeoutError, cdm.StreamEnded) as e:
        tap.ok(False, '%s: the first event arrives while the stream is open (no buffering)' % label)
        tap.diag(str(e))
    for text in ('two', 'three'):
        s.post_message(u.token, cid, text)
    seen = ([first] if first else []) + st.drain(quiet=1.5)
    st.close()

    # -- resume
    if first is not None:
        want = [e for e in seen if e.id > first.id]
        res = s.open_stream(cid, u.token, last_event_id=first.id, timeout=30)
        got = res.drain(quiet=1.5)
        res.close()
        tap.ok(len(want) >= 2, '%s: later messages made events' % label) or tap.diag(repr(seen))
        tap.is_([e.id for e in got], [e.id for e in want],
                '%s: Last-Event-ID: exactly the events after it, in order' % label)
    else:
        tap.ok(False, '%s: Last-Event-ID resume (no first event)' % label)

    # -- compression stays off for the stream only
    status, hdrs, _ = raw_get(s, '/api/conversations/%s/events?after=0' % cid, {
        'Authorization': 'Bearer ' + u.token, 'Accept-Encoding': 'gzip',
        'Accept': 'text/event-stream'})
    tap.ok(status == 200 and 'content-encoding' not in hdrs,
           '%s: the stream is not compressed, even when the client accepts gzip' % label) \
        or tap.diag('%d %r' % (status, hdrs))
    status, hdrs, _ = raw_get(s, '/api/conversations/%s/messages' % cid, {
        'Authorization': 'Bearer ' + u.token, 'Accept-Encoding': 'gzip'})
    tap.is_((status, hdrs.get('content-encoding')), (200, 'gzip'),
            '%s: (while JSON answers are: the exclusion is what keeps streams plain)' % label)

    # -- concurrent streams, one event for all
    try:
        # Replay nothing: only what is published from now on.
        last = max([e.id for e in seen if isinstance(e.id, int)] or [0])
        streams = s.open_streams(n_streams, cid, u.token, after=last, timeout=60)
    except Exception as e:
        tap.ok(False, '%s: %d concurrent streams open' % (label, n_streams))
        tap.diag('%s: %s' % (type(e).__name__, e))
        return
    tap.is_([x.status for x in streams], [200] * n_streams,
            '%s: %d concurrent streams open' % (label, n_streams))
    tap.ok(cdm.wait_for(lambda: (s.open_stream_count() or 0) >= n_streams, 15),
           '%s: the server counts them' % label)
    r = s.post_message(u.token, cid, 'to everyone')
    mid = (r.json or {}).get('message_id')

    def receive(i):
        ev, _ = streams[i].wait_event(created(mid), timeout=20)
        return ev.id
    res = cdm.parallel(n_streams, receive, timeout=40)
    ok = [x for x in res if isinstance(x, int)]
    tap.is_(len(ok), n_streams, '%s: all %d streams received the published event' % (label, n_streams)) \
        or tap.diag(repr([x for x in res if not isinstance(x, int)][:3]))
    tap.is_(len(set(ok)), 1, '%s: with the same id' % label)

    # -- clients that go away free their streams
    for x in streams:
        x.close()
    s.streams = []
    freed = cdm.wait_for(lambda: s.open_stream_count() == 0, 3 * s.heartbeat + 20, 0.5)
    tap.ok(freed, '%s: clients gone: admin status "streams" back to 0' % label) \
        or tap.diag('streams: %r' % s.open_stream_count())
    if on_freed:
        on_freed(s)
