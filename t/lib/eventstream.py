"""eventstream.py -- a Server-Sent Events client for the integration tests: one
response read straight off a TLS socket to the test's nginx, the chunked
body decoded and parsed into events as the bytes arrive (cdm.Stack's
open_stream() makes them). Standard library only.
"""

import collections
import json
import re
import socket
import ssl
import time


Event = collections.namedtuple('Event', 'id type data')


def json_or_none(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


class StreamEnded(Exception):
    """The response body ended (see EventStream.clean_end)."""


class EventStream:
    """A Server-Sent Events response read straight off a TLS socket.

    The request is written by hand (HTTP/1.1, Connection: close) so nothing
    buffers between nginx and the test: the chunked body is decoded here,
    incrementally, and parsed into events as bytes arrive.

    status, headers (lowercased), body/json (non-200 answers, read whole);
    events read so far are returned by next_event(); ':' comment lines are
    kept in comments as (monotonic time, text).
    """

    def __init__(self, stack, path, token, last_event_id=None, timeout=10):
        self.path = path
        self.comments = []
        self.ended = False        # no more bytes will come
        self.clean_end = False    # ... and the body ended properly
        self._events = collections.deque()
        self._raw = bytearray()   # undecoded bytes from the socket
        self._text = ''           # decoded body not yet parsed into lines
        self._chunk_left = None   # chunked: bytes left in this chunk
        self._mode = None         # 'chunked' | 'length' | 'close'
        self._length_left = 0
        self._block = {}          # SSE fields of the event being read
        self._data = []
        self.sock = None
        self.opened_at = time.monotonic()
        raw = socket.create_connection(('127.0.0.1', stack.port), timeout=timeout)
        try:
            self.sock = stack.ssl_context().wrap_socket(raw)
        except BaseException:
            raw.close()
            raise
        req = ['GET %s HTTP/1.1' % path, 'Host: localhost',
               'Accept: text/event-stream', 'Connection: close']
        if token is not None:
            req.append('Authorization: Bearer %s' % token)
        if last_event_id is not None:
            req.append('Last-Event-ID: %s' % last_event_id)
        self.sock.sendall(('\r\n'.join(req) + '\r\n\r\n').encode())
        self._read_head(time.monotonic() + timeout)
        self.head_seconds = time.monotonic() - self.opened_at
        self.body = b''
        self.json = None
        if self.status != 200:
            self.body = self.read_body(timeout)
            self.json = json_or_none(self.body)
        else:
            self._parse(self._decode())     # events that came with the head

    # -- socket and HTTP framing

    def _recv(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError('%s: nothing more within the time allowed' % self.path)
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError('%s: nothing more within the time allowed' % self.path)
        except (ssl.SSLError, ConnectionResetError) as e:
            data = b''
            self.reset_error = e
        return data

    def _read_head(self, deadline):
        while b'\r\n\r\n' not in self._raw:
            data = self._recv(deadline)
            if not data:
                raise StreamEnded('connection closed before the response head')
            self._raw += data
        head, _, rest = bytes(self._raw).partition(b'\r\n\r\n')
        self._raw = bytearray(rest)
        lines = head.decode('iso-8859-1').split('\r\n')
        self.status_line = lines[0]
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(':')
            k, v = k.strip().lower(), v.strip()
            self.headers[k] = self.headers[k] + ', ' + v if k in self.headers else v
        if 'chunked' in self.headers.get('transfer-encoding', '').lower():
            self._mode = 'chunked'
        elif 'content-length' in self.headers:
            self._mode = 'length'
            self._length_left = int(self.headers['content-length'])
        else:
            self._mode = 'close'

    def _decode(self):
        """Move what can be decoded from _raw to the returned bytes."""
        out = bytearray()
        if self._mode == 'length':
            n = min(self._length_left, len(self._raw))
            out += self._raw[:n]
            del self._raw[:n]
            self._length_left -= n
            if self._length_left == 0:
                self.ended = self.clean_end = True
            return bytes(out)
        if self._mode == 'close':
            out += self._raw
            self._raw.clear()
            return bytes(out)
        while not self.ended:
            if self._chunk_left is None:            # at a chunk-size line
                i = self._raw.find(b'\r\n')
                if i < 0:
                    break
                size = int(bytes(self._raw[:i]).split(b';')[0].strip() or b'0', 16)
                del self._raw[:i + 2]
                self._chunk_left = size
                if size == 0:
                    self._chunk_left = -1           # trailer section follows
            elif self._chunk_left == -1:            # trailers until an empty line
                i = self._raw.find(b'\r\n')
                if i < 0:
                    break
                line = bytes(self._raw[:i])
                del self._raw[:i + 2]
                if line == b'':
                    self.ended = self.clean_end = True
            else:
                n = min(self._chunk_left, len(self._raw))
                out += self._raw[:n]
                del self._raw[:n]
                self._chunk_left -= n
                if self._chunk_left > 0:
                    break
                if len(self._raw) < 2:              # the CRLF after the data
                    self._chunk_left = 0
                    if self._raw[:1] not in (b'', b'\r'):
                        raise ValueError('bad chunk framing')
                    break
                del self._raw[:2]
                self._chunk_left = None
        return bytes(out)

    def _pump(self, deadline):
        """Read once from the socket (or notice its end); parse what came."""
        if self.ended:
            raise StreamEnded('%s: response ended (%s)' % (
                self.path, 'cleanly' if self.clean_end else 'truncated'))
        data = self._recv(deadline)
        if not data:
            self.ended = True
            self.clean_end = self.clean_end or self._mode == 'close'
            self._parse(b'')
            raise StreamEnded('%s: connection closed (%s)' % (
                self.path, 'cleanly' if self.clean_end else 'body truncated'))
        self._raw += data
        self._parse(self._decode())

    def read_body(self, timeout=10):
        """The rest of the body, whole (for short, non-stream answers)."""
        deadline = time.monotonic() + timeout
        buf = bytearray()
        buf += self._decode()
        while not self.ended:
            data = self._recv(deadline)
            if not data:
                self.ended = True
                self.clean_end = self._mode == 'close'
                break
            self._raw += data
            buf += self._decode()
        return bytes(buf)

    # -- SSE

    def _parse(self, data):
        self._text += data.decode('utf-8', 'replace')
        while True:
            m = re.search(r'\r\n|\n|\r', self._text)
            if not m or (m.group() == '\r' and m.end() == len(self._text)):
                break
            line, self._text = self._text[:m.start()], self._text[m.end():]
            self._line(line)

    def _line(self, line):
        if line == '':
            if self._data or 'event' in self._block:
                data = '\n'.join(self._data)
                try:
                    parsed = json.loads(data)
                except ValueError:
                    parsed = data
                eid = self._block.get('id')
                try:
                    eid = int(eid) if eid is not None else None
                except ValueError:
                    pass
                self._events.append(Event(eid, self._block.get('event', 'message'), parsed))
            self._block, self._data = {}, []
            return
        if line.startswith(':'):
            text = line[1:]
            self.comments.append((time.monotonic(), text[1:] if text.startswith(' ') else text))
            return
        field, sep, value = line.partition(':')
        if value.startswith(' '):
            value = value[1:]
        if field == 'data':
            self._data.append(value)
        elif field in ('id', 'event', 'retry'):
            self._block[field] = value

    def next_event(self, timeout=5):
        """The next event as Event(id, type, data); TimeoutError if none
        arrives in TIMEOUT seconds, StreamEnded if the response ends."""
        deadline = time.monotonic() + timeout
        while not self._events:
            self._pump(deadline)
        return self._events.popleft()

    def wait_event(self, pred, timeout=5):
        """Read events until PRED(event) is true; returns (that event, the
        events read before it)."""
        deadline = time.monotonic() + timeout
        skipped = []
        while True:
            ev = self.next_event(max(0.001, deadline - time.monotonic()))
            if pred(ev):
                return ev, skipped
            skipped.append(ev)

    def events_until(self, last_id, timeout=5):
        """Every event up to and including the one with id LAST_ID."""
        ev, before = self.wait_event(lambda e: e.id is not None and e.id >= last_id, timeout)
        return before + [ev]

    def drain(self, quiet=1.0, timeout=15):
        """Events until none arrives for QUIET seconds (or the body ends)."""
        deadline = time.monotonic() + timeout
        got = []
        while time.monotonic() < deadline:
            try:
                got.append(self.next_event(min(quiet, max(0.001, deadline - time.monotonic()))))
            except TimeoutError:
                break
            except StreamEnded:
                break
        return got

    def wait_comment(self, text=None, timeout=5, since=None):
        """The first comment (equal to TEXT if given) that arrived at or
        after SINCE (a time.monotonic() value; default: now). Returns
        (arrival time, text); TimeoutError otherwise. Events read meanwhile
        stay queued for next_event()."""
        since = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout
        while True:
            for t, c in self.comments:
                if t >= since and (text is None or c == text):
                    return t, c
            self._pump(deadline)

    def read_to_end(self, timeout=10):
        """Read (and queue) until the response ends; returns clean_end.
        TimeoutError if it has not ended in TIMEOUT seconds."""
        deadline = time.monotonic() + timeout
        while not self.ended:
            try:
                self._pump(deadline)
            except StreamEnded:
                break
        return self.clean_end

    def pending(self):
        """Events parsed but not yet returned by next_event()."""
        return list(self._events)

    def close(self):
        """Drop the connection abruptly (no TLS close_notify)."""
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None


# ---------------------------------------------------------------- assertions
