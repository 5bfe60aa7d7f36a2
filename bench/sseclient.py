"""sseclient.py -- the benchmarks' streaming HTTP client: many responses
read at once by one selector loop in one thread, timestamped by the kernel.

Non-blocking sockets, TLS through ssl.MemoryBIO (or plain HTTP when the
context is None), at most PARALLEL connections being opened at a time.
Each socket has SO_TIMESTAMPNS on and is read one TLS record per recvmsg()
where possible, so every piece of plaintext handed on comes with the
kernel's receive time (time.time() clock) of the record that completed it:
the client's own Python time -- decrypting, de-chunking, parsing, waiting
for its turn in the loop -- is not counted as the server's. With plain
HTTP there are no records; each recvmsg() is its own piece.

What to do with the body is the subclass's: Streams.on_body(c, ts, now) is
called with the new de-chunked bytes appended to c.body, ts the kernel
receive time, now the time.time() the client got round to them;
Streams.on_end(c) when a chunked body ends. Used by bench/sse.py and
bench/relay.py.
"""

import collections
import errno
import os
import re
import selectors
import socket
import ssl
import struct
import time

SO_TIMESTAMPNS = getattr(socket, 'SO_TIMESTAMPNS', 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
TS_SPACE = socket.CMSG_SPACE(16)
_ts_keeper = None


def _enable_timestamps():
    """The kernel turns receive timestamping on for the whole stack some
    time after the first socket asks (a deferred static key), so packets
    of the first moments would come without one: ask once with a socket
    kept open for the life of the process, and give the kernel a moment."""
    global _ts_keeper
    if _ts_keeper is None:
        _ts_keeper = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        _ts_keeper.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        time.sleep(0.1)


def get_request(path, token):
    """An SSE GET with a bearer token, for Streams(request=...)."""
    return ('GET %s HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n'
            'Authorization: Bearer %s\r\nConnection: close\r\n\r\n' % (path, token)).encode()


class Conn:
    __slots__ = ('i', 'sock', 'state', 'ssl', 'inb', 'outb', 'pending', 'rec',
                 'need', 'plain', 'chunk_left', 'body', 'status', 'error', 'arrivals',
                 'seen_at', 'ts_ok', 'opened', 'head_at', 'app')

    def __init__(self, i):
        self.i = i
        self.sock = None
        self.ssl = None
        self.state = 'new'
        self.pending = b''          # bytes not yet sent
        self.rec = bytearray()      # the TLS record being read
        self.need = 5               # bytes still wanted for it
        self.plain = bytearray()    # decrypted, not yet parsed
        self.chunk_left = None
        self.body = bytearray()     # de-chunked body not yet consumed by on_body
        self.status = None
        self.error = None
        self.arrivals = {}          # key -> kernel receive time (time.time() clock)
        self.seen_at = {}           # key -> time.time() when the client decoded it
        self.ts_ok = True
        self.app = None             # the subclass's per-connection state


class Streams:
    """N streaming responses from 127.0.0.1:PORT. REQUEST: the request
    bytes, or a function of the Conn returning them. CTX: an SSLContext,
    or None for plain HTTP."""

    def __init__(self, port, ctx, parallel, request):
        self.port, self.ctx, self.parallel = port, ctx, parallel
        self.request = request
        self.sel = selectors.DefaultSelector()
        self.conns = []
        self.in_flight = 0
        self.todo = collections.deque()
        self.connected = 0
        self.failed = 0
        self.errors = collections.Counter()
        self.no_ts = 0
        _enable_timestamps()

    # -- what the subclass decides

    def on_body(self, c, ts, now):
        pass

    def on_end(self, c):
        self._fail(c, 'stream ended by the server')

    # -- opening

    def open(self, n):
        self.conns = [Conn(i) for i in range(n)]
        self.todo.extend(self.conns)
        self._start_more()

    def _start_more(self):
        while self.todo and self.in_flight < self.parallel:
            c = self.todo.popleft()
            self.in_flight += 1
            c.opened = time.monotonic()
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            except OSError as e:
                self._fail(c, 'socket(): %s' % e.strerror)
                continue
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.setblocking(False)
            c.sock = s
            rc = s.connect_ex(('127.0.0.1', self.port))
            if rc not in (0, errno.EINPROGRESS):
                self._fail(c, 'connect: %s' % os.strerror(rc))
                continue
            c.state = 'connecting'
            self.sel.register(s, selectors.EVENT_WRITE, c)

    def _req(self, c):
        return self.request(c) if callable(self.request) else self.request

    def _fail(self, c, why):
        if c.state in ('failed', 'closed', 'done'):
            return
        was_open = c.state == 'open'
        c.state = 'failed'
        c.error = why
        self.errors[re.sub(r'\d+', 'N', why)[:120]] += 1
        if was_open:
            self.connected -= 1
        else:
            self.in_flight -= 1
        self.failed += 1
        self._drop(c)
        self._start_more()

    def finish(self, c):
        """C's response is complete: close it without counting a failure."""
        if c.state != 'open':
            return
        c.state = 'done'
        self._drop(c)

    def _drop(self, c):
        if c.sock is not None:
            try:
                self.sel.unregister(c.sock)
            except (KeyError, ValueError):
                pass
            c.sock.close()
            c.sock = None

    # -- I/O

    def _flush(self, c):
        if c.ssl is not None:
            c.pending += c.outb.read()
        while c.pending:
            try:
                n = c.sock.send(c.pending)
            except BlockingIOError:
                break
            c.pending = c.pending[n:]
        want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.pending else 0)
        self.sel.modify(c.sock, want, c)

    def _handshake(self, c):
        try:
            c.ssl.do_handshake()
        except ssl.SSLWantReadError:
            self._flush(c)
            return
        except ssl.SSLError as e:
            self._fail(c, 'TLS: %s' % e.reason)
            return
        c.state = 'head'
        c.ssl.write(self._req(c))
        self._flush(c)

    def _recv(self, c, size):
        """One recvmsg(): (data, kernel receive time), or None when there is
        nothing (more) to read now or the connection failed."""
        try:
            data, anc, _, _ = c.sock.recvmsg(size, TS_SPACE)
        except BlockingIOError:
            return None
        except ConnectionError as e:
            self._fail(c, 'recv: %s' % e.strerror)
            return None
        if not data:
            self._fail(c, 'closed by the server (state %s)' % c.state)
            return None
        ts = None
        for level, typ, cd in anc:
            if level == socket.SOL_SOCKET and typ == SCM_TIMESTAMPNS and len(cd) >= 16:
                sec, nsec = struct.unpack('qq', cd[:16])
                ts = sec + nsec * 1e-9
        if ts is None:
            ts = time.time()
            self.no_ts += 1
        return data, ts

    def _read_records(self, c):
        """Read whole TLS records, one recvmsg() each where possible; feed
        each to the TLS object with its kernel receive time."""
        while c.sock is not None:
            if c.ssl is None:
                got = self._recv(c, 65536)
                if got is None:
                    return
                c.plain += got[0]
                self._parse(c, got[1])
                continue
            got = self._recv(c, c.need)
            if got is None:
                return
            data, ts = got
            c.rec += data
            c.need -= len(data)
            if c.need > 0:
                continue
            if len(c.rec) == 5:                 # a record header: now its body
                c.need = struct.unpack('!H', bytes(c.rec[3:5]))[0]
                if c.need > 0:
                    continue
            c.inb.write(bytes(c.rec))
            c.rec.clear()
            c.need = 5
            if c.state == 'handshake':
                self._handshake(c)
                continue
            self._decrypt(c, ts)

    def _decrypt(self, c, ts):
        while True:
            try:
                p = c.ssl.read(65536)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                self._fail(c, 'TLS closed by the server (state %s)' % c.state)
                return
            except ssl.SSLError as e:
                self._fail(c, 'TLS: %s' % e.reason)
                return
            if not p:
                break
            c.plain += p
        if c.pending or c.outb.pending:
            self._flush(c)
        self._parse(c, ts)

    def _parse(self, c, ts):
        if c.state == 'head':
            i = c.plain.find(b'\r\n\r\n')
            if i < 0:
                return
            head = bytes(c.plain[:i]).decode('iso-8859-1')
            del c.plain[:i + 4]
            try:
                c.status = int(head.split('\r\n', 1)[0].split()[1])
            except (IndexError, ValueError):
                self._fail(c, 'bad response head %r' % head[:60])
                return
            if c.status != 200:
                self._fail(c, 'HTTP %d %s' % (c.status, bytes(c.plain[:120]).decode('utf-8', 'replace')))
                return
            if 'chunked' not in head.lower():
                c.chunk_left = -2           # not chunked: body as is
            c.state = 'open'
            c.head_at = time.monotonic()
            self.in_flight -= 1
            self.connected += 1
            self._start_more()
        if c.state == 'open':
            self._body(c, ts)

    def _body(self, c, ts):
        ended = False
        if c.chunk_left == -2:
            c.body += c.plain
            c.plain.clear()
        else:
            while c.plain:
                if c.chunk_left is None:
                    i = c.plain.find(b'\r\n')
                    if i < 0:
                        break
                    size = int(bytes(c.plain[:i]).split(b';')[0] or b'0', 16)
                    del c.plain[:i + 2]
                    if size == 0:
                        ended = True
                        break
                    c.chunk_left = size
                else:
                    n = min(c.chunk_left, len(c.plain))
                    c.body += c.plain[:n]
                    del c.plain[:n]
                    c.chunk_left -= n
                    if c.chunk_left == 0:
                        if len(c.plain) < 2:
                            c.chunk_left = 0
                            break
                        del c.plain[:2]
                        c.chunk_left = None
                if c.chunk_left == 0 and len(c.plain) >= 2:
                    del c.plain[:2]
                    c.chunk_left = None
        self.on_body(c, ts, time.time())
        if ended:
            self.on_end(c)

    def poll(self, timeout):
        for key, ev in self.sel.select(timeout):
            c = key.data
            if c.sock is None:
                continue
            if c.state == 'connecting':
                err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    self._fail(c, 'connect: %s' % os.strerror(err))
                    continue
                if self.ctx is None:
                    c.state = 'head'
                    c.pending = self._req(c)
                    self._flush(c)
                    continue
                c.inb, c.outb = ssl.MemoryBIO(), ssl.MemoryBIO()
                c.ssl = self.ctx.wrap_bio(c.inb, c.outb, server_hostname=None)
                c.state = 'handshake'
                self._handshake(c)
                continue
            if ev & selectors.EVENT_WRITE and c.pending:
                self._flush(c)
            if ev & selectors.EVENT_READ and c.sock is not None:
                self._read_records(c)

    def run_until(self, pred, deadline):
        while time.monotonic() < deadline and not pred():
            self.poll(min(0.05, max(0, deadline - time.monotonic())))

    def close_all(self):
        for c in self.conns:
            if c.sock is not None:
                self._drop(c)
                c.state = 'closed'


def sse_events(c):
    """Take the complete Server-Sent Events off the front of c.body: a list
    of dicts of their fields ('event', 'id', 'data' joined by newlines);
    comment-only blocks are left out."""
    out = []
    while True:
        i = c.body.find(b'\n\n')
        if i < 0:
            return out
        block = bytes(c.body[:i]).decode('utf-8', 'replace')
        del c.body[:i + 2]
        ev, data = {}, []
        for line in block.split('\n'):
            if not line or line.startswith(':'):
                continue
            k, _, v = line.partition(':')
            v = v[1:] if v.startswith(' ') else v
            if k == 'data':
                data.append(v)
            else:
                ev[k] = v
        if data:
            ev['data'] = '\n'.join(data)
        if ev:
            out.append(ev)
