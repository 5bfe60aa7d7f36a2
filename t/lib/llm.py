"""llm.py -- a scripted OpenAI-compatible LLM endpoint for the tests: real
HTTP/1.1 over a real loopback socket, answering POST /v1/chat/completions
with Server-Sent Events exactly as vLLM or llama.cpp's server would, from
scenario files in t/scenarios/*.json.

    with llm.ScriptedLLM() as m:
        with cdm.Stack(config=m.config()) as s:
            ...post '[[scenario:tool-read]] please read a.txt'...
            m.requests()      # every request body the server sent, parsed

Which scenario answers: the newest user message of the request that holds
a marker [[scenario:NAME]] (else the server's default). Which step of it:
the number of assistant messages after the newest user message, so a turn
of several model calls walks the scenario's "steps" in order, statelessly,
and concurrent turns never disturb each other. A step may list "attempts"
(e.g. a 429 and then an answer): the Nth identical request gets attempt N.

A step (all keys optional):
    text          answer text, sent in chunks of chunk_size characters
    tool_calls    [{id, name, arguments (a string, or an object to encode)}]
    split         bytes per tool-call argument fragment (default 7)
    index_zero    true: every call at index 0, told apart only by its id
    repeat_name   true: the name is sent again with every fragment
    delay         seconds between chunks;  first_delay: before the first
    status        an HTTP error status instead (with body, retry_after)
    cut           "abrupt" (socket closed mid-chunk) or "clean" (body ends
                  properly) after cut_after chunks, without finish/[DONE]
    no_done       omit data: [DONE] (finish_reason still sent)
    comments      interleave ": keep-alive" comments and blank lines
    tiny_writes   write the body a few bytes at a time
    echo_tool     append the newest tool message's content to the text
    stamp         each text chunk is "<t=%.6f>" of the time it was sent
    hang          sleep this long before the status line
    finish        finish_reason to send (default stop / tool_calls)

Standard library only.
"""

import json
import os
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, '..', 'scenarios')
MARK = re.compile(r'\[\[scenario:([A-Za-z0-9_.-]+)\]\]')


def load_scenario(name):
    with open(os.path.join(SCENARIOS, name + '.json')) as f:
        return json.load(f)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class ScriptedLLM:
    """The endpoint, in a thread of the test process."""

    def __init__(self, default=None, scenarios=None):
        self.default = default
        self.extra = dict(scenarios or {})   # name -> scenario dict
        self.log = []                        # every request, in order
        self.lock = threading.Lock()
        self.attempts = {}
        self.httpd = None

    # -- life

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        owner = self

        class Handler(_Handler):
            llm = owner
        self.httpd = _Server(('127.0.0.1', 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={'poll_interval': 0.1}, daemon=True)
        self.thread.start()

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    @property
    def base_url(self):
        return 'http://127.0.0.1:%d/v1' % self.port

    def config(self, **extra):
        """Configuration keys pointing the default profile here."""
        cfg = {'llm.profiles.default.base_url': self.base_url,
               'llm.profiles.default.model': 'scripted'}
        cfg.update(extra)
        return cfg

    # -- what the server sent

    def requests(self):
        with self.lock:
            return list(self.log)

    def requests_for(self, marker):
        """Requests whose newest user message carries [[scenario:MARKER]]
        or the plain text MARKER."""
        out = []
        for r in self.requests():
            body = r.get('body') or {}
            users = [m for m in body.get('messages', []) if m.get('role') == 'user']
            if users and marker in (users[-1].get('content') or ''):
                out.append(r)
        return out

    # -- choosing the answer

    def scenario(self, name):
        if name in self.extra:
            return self.extra[name]
        return load_scenario(name)

    def pick(self, body):
        msgs = body.get('messages') or []
        name = self.default
        last_user = None
        for i in range(len(msgs) - 1, -1, -1):
            if msgs[i].get('role') == 'user':
                if last_user is None:
                    last_user = i
                m = MARK.search(msgs[i].get('content') or '')
                if m:
                    name = m.group(1)
                    break
        if name is None:
            return {'status': 400, 'body': {'error': {'message': 'no scenario marker'}}}
        steps = self.scenario(name)['steps']
        after = msgs[last_user + 1:] if last_user is not None else msgs
        n = sum(1 for m in after if m.get('role') == 'assistant')
        step = steps[min(n, len(steps) - 1)]
        if 'attempts' in step:
            key = json.dumps(msgs, sort_keys=True)
            with self.lock:
                k = self.attempts.get(key, 0)
                self.attempts[key] = k + 1
            step = step['attempts'][min(k, len(step['attempts']) - 1)]
        return step


def _chunk(delta=None, finish=None, usage=None, choices=True):
    c = {'id': 'chatcmpl-scripted', 'object': 'chat.completion.chunk',
         'created': int(time.time()), 'model': 'scripted'}
    if choices:
        c['choices'] = [{'index': 0, 'delta': delta or {}, 'finish_reason': finish}]
    else:
        c['choices'] = []
    if usage is not None:
        c['usage'] = usage
    return c


class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    llm = None

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        entry = {'path': self.path, 'time': time.time(),
                 'authorization': self.headers.get('Authorization'),
                 'body': body}
        with self.llm.lock:
            self.llm.log.append(entry)
        if self.path.rstrip('/') != '/v1/chat/completions' or body is None:
            return self.error(404 if body is not None else 400,
                              {'error': {'message': 'unexpected request'}})
        step = self.llm.pick(body)
        if step.get('hang'):
            time.sleep(step['hang'])
        if step.get('status'):
            hdrs = {}
            if 'retry_after' in step:
                hdrs['Retry-After'] = str(step['retry_after'])
            return self.error(step['status'], step.get('body', {'error': {'message': 'scripted error'}}), hdrs)
        try:
            self.stream(step, body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def error(self, status, obj, hdrs=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        for k, v in (hdrs or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    # -- the stream

    def write_chunked(self, data, tiny=False):
        pieces = [data[i:i + 3] for i in range(0, len(data), 3)] if tiny else [data]
        for p in pieces:
            self.wfile.write(b'%x\r\n%s\r\n' % (len(p), p))
            self.wfile.flush()

    def event(self, obj, step):
        data = b'data: ' + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b'\n\n'
        if step.get('comments'):
            data = b': keep-alive\n\n' + data
        self.write_chunked(data, step.get('tiny_writes'))

    def stream(self, step, body):
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Cache-Control', 'no-cache')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        self.wfile.flush()
        delay = float(step.get('delay', 0))
        if step.get('first_delay'):
            time.sleep(step['first_delay'])
        sent = 0
        cut_after = step.get('cut_after', 2)

        def pause():
            if delay:
                time.sleep(delay)

        def maybe_cut():
            if step.get('cut') and sent >= cut_after:
                if step['cut'] == 'abrupt':
                    self.wfile.write(b'40\r\ndata: {"choices":[{"delta":{"content":"tr')
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    self.wfile.write(b'0\r\n\r\n')
                    self.wfile.flush()
                self.close_connection = True
                return True
            return False

        self.event(_chunk({'role': 'assistant', 'content': ''}), step)
        text = step.get('text', '')
        if step.get('echo_tool'):
            tools = [m for m in body.get('messages', []) if m.get('role') == 'tool']
            text += (tools[-1].get('content') or '') if tools else '(no tool result)'
        if step.get('stamp'):
            for _ in range(int(step.get('count', 10))):
                if maybe_cut():
                    return
                self.event(_chunk({'content': '<t=%.6f>' % time.time()}), step)
                sent += 1
                pause()
        else:
            size = int(step.get('chunk_size', 4))
            for i in range(0, len(text), size):
                if maybe_cut():
                    return
                self.event(_chunk({'content': text[i:i + size]}), step)
                sent += 1
                pause()
        calls = step.get('tool_calls') or []
        split = int(step.get('split', 7))
        for n, call in enumerate(calls):
            args = call.get('arguments', {})
            if not isinstance(args, str):
                args = json.dumps(args)
            idx = 0 if step.get('index_zero') else n
            first = {'index': idx, 'type': 'function',
                     'function': {'name': call['name'], 'arguments': ''}}
            if call.get('id') is not None:
                first['id'] = call['id']
            self.event(_chunk({'tool_calls': [first]}), step)
            for i in range(0, len(args), split):
                if maybe_cut():
                    return
                frag = {'index': idx, 'function': {'arguments': args[i:i + split]}}
                if step.get('repeat_name'):
                    frag['function']['name'] = call['name']
                self.event(_chunk({'tool_calls': [frag]}), step)
                sent += 1
                pause()
        if maybe_cut():
            return
        finish = step.get('finish') or ('tool_calls' if calls else 'stop')
        self.event(_chunk({}, finish=finish), step)
        self.event(_chunk(choices=False, usage={'prompt_tokens': 11, 'completion_tokens': 7,
                                                'total_tokens': 18}), step)
        if not step.get('no_done'):
            self.event(b'[DONE]', step)
        self.wfile.write(b'0\r\n\r\n')
        self.wfile.flush()


# ------------------------------------------------------------ test helpers

END_TYPES = ('turn.completed', 'turn.failed', 'turn.cancelled')


def turn_events(stream, turn_id, timeout=30):
    """Read STREAM (a cdm.EventStream) until TURN_ID ends. Returns the list
    of (event, monotonic arrival time) of that turn from turn.started (the
    user's message.created before it is left out) to its end; raises
    TimeoutError with what was seen when it does not end in time."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError('turn %s did not end within %ss; saw %r'
                               % (turn_id, timeout, [e.type for e, _ in seen]))
        ev = stream.next_event(timeout=left)
        now = time.monotonic()
        data = ev.data if isinstance(ev.data, dict) else {}
        tid = data.get('turn_id') or (data.get('message') or {}).get('turn_id')
        if ev.type == 'message.created' and (data.get('message') or {}).get('role') == 'user':
            continue
        if tid == turn_id:
            seen.append((ev, now))
            if ev.type in END_TYPES:
                return seen


def post(stack, user, cid, content):
    """POST a message; returns its turn id (raises on anything but 202)."""
    r = stack.post_message(user.token, cid, content)
    if r.status != 202:
        raise AssertionError('POST message: %d %r' % (r.status, r.body[:300]))
    return r.json['turn_id']


def types(events):
    return [e.type for e, _ in events]


def of_type(events, t):
    return [e.data for e, _ in events if e.type == t]


def db_row(stack, sql, args=()):
    """One row of the server's database, read-only (the server keeps running)."""
    import sqlite3
    con = sqlite3.connect('file:%s?mode=ro' % stack.db_path(), uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchone()
    finally:
        con.close()
