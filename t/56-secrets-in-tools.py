#!/usr/bin/python3
# 56-secrets-in-tools: a secret marked "env": true reaches the user's
# sandboxed command as an environment variable, and when the command prints
# it the value is replaced by [secret:NAME] before it reaches the event
# log, the stored messages or the model: the scripted LLM's recorded
# requests, the database files and the server log never hold it. Needs the
# engine and a working sandbox; skipped otherwise.
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
try:
    import llm   # noqa: E402
except ImportError:
    llm = None

if llm is None:
    tap.skip_all('the engine (t/lib/llm.py) is not part of this tree')

VALUE = 'tok-' + 'Hx7Qp2Vn' * 4

with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**{'tools.shell_always_allow': True})) as s:
    health = s.request('GET', '/api/health').json or {}
    if not (health.get('sandbox') or {}).get('available'):
        tap.skip_all('sandbox unavailable: %s' % (health.get('sandbox') or {}).get('reason'))
    u = s.new_user('envuser')
    r = s.request('PUT', '/api/secrets/MY_TOKEN', body={'value': VALUE, 'env': True}, token=u.token)
    tap.is_(r.status, 204, 'store an env secret')
    cid = s.create_conversation(u.token, 'secrets')
    st = s.open_stream(cid, u.token)
    tid = llm.post(s, u, cid, '[[scenario:secret-echo]] print my token')
    ev = llm.turn_events(st, tid, timeout=60)
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'the turn completes') or tap.diag(llm.types(ev))
    results = llm.of_type(ev, 'tool.result')
    out = results[0].get('output', '') if results else ''
    tap.ok('[secret:MY_TOKEN]\nagain:[secret:MY_TOKEN]:end' in out,
           'the command saw the variable; both occurrences are redacted') or tap.diag(out)
    tap.ok(VALUE not in json.dumps([e.data for e, _ in ev]), 'no value in the turn\'s events')
    reqs = json.dumps(m.requests())
    tap.ok('[secret:MY_TOKEN]' in reqs, 'the model saw the redacted output')
    tap.ok(VALUE not in reqs, 'the model never saw the value')
    r = s.request('GET', '/api/conversations/%s/messages' % cid, token=u.token)
    tap.ok(VALUE.encode() not in r.body, 'no value in the stored messages')
    s.stop_server()
    data = b''
    for suffix in ('', '-wal', '-shm'):
        try:
            with open(s.db_path() + suffix, 'rb') as f:
                data += f.read()
        except FileNotFoundError:
            pass
    tap.ok(VALUE.encode() not in data, 'no value in the database files (event log included)')
    tap.ok(VALUE not in s.server_log() + s.server_output(), 'no value in the server log')

tap.done()
