#!/usr/bin/python3
# 45-engine-llm-errors: how the client meets a misbehaving endpoint. 429
# (Retry-After honoured) and 5xx are retried with bounded backoff, then
# succeed or fail with the endpoint's own message; a 4xx fails at once with
# it; a stream cut mid-chunk or ended without finish_reason/[DONE] fails
# saying so; finish_reason without [DONE] is fine; comments and byte-sized
# writes are parsed; an endpoint that goes silent hits the idle timeout; an
# endpoint that is not listening fails clearly; the API key is sent as a
# bearer token and appears in no event or log.
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402

KEY = 'sk-test-9f8e7d6c5b4a'
CFG = {'engine.llm_max_retries': 2, 'engine.llm_idle_timeout_seconds': 2,
       'llm.profiles.default.api_key_env': 'CDM_TEST_LLM_KEY',
       'llm.profiles.dead.base_url': 'http://127.0.0.1:%d/v1' % cdm.free_port(),
       'llm.profiles.dead.model': 'nothing'}
os.environ['CDM_TEST_LLM_KEY'] = KEY


def run(s, u, cid, st, scenario, timeout=40):
    tid = llm.post(s, u, cid, '[[scenario:%s]] go' % scenario)
    t0 = time.monotonic()
    ev = llm.turn_events(st, tid, timeout=timeout)
    return ev, time.monotonic() - t0


with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**CFG)) as s:
    u = s.new_user('errors')
    cid = s.create_conversation(u.token, 'errors')
    st = s.open_stream(cid, u.token)

    ev, took = run(s, u, cid, st, 'retry-429')
    tap.is_(llm.types(ev)[-1], 'turn.completed', '429 then 503 then an answer: completed')
    tap.is_(len(m.requests_for('retry-429')), 3, 'three requests were made')
    tap.ok(took >= 1.9, 'Retry-After: 1 and a backoff were waited (%.1f s)' % took)
    tap.is_(llm.of_type(ev, 'message.created')[0]['message']['content'], 'answered after retries', 'the answer')
    tap.is_(m.requests_for('retry-429')[0]['authorization'], 'Bearer ' + KEY, 'the API key goes as a bearer token')

    ev, took = run(s, u, cid, st, 'error-500')
    tap.is_(llm.types(ev)[-1], 'turn.failed', 'always 500: turn.failed')
    err = ev[-1][0].data.get('error', '')
    tap.like(err, r'HTTP 500: internal kaboom in the model server', 'with the endpoint\'s message')
    tap.like(err, r'after 2 retries', 'after engine.llm_max_retries retries')
    tap.is_(len(m.requests_for('error-500')), 3, 'bounded: 1 + 2 requests')

    ev, took = run(s, u, cid, st, 'error-400')
    tap.is_(llm.types(ev)[-1], 'turn.failed', '400: turn.failed')
    tap.like(ev[-1][0].data.get('error', ''), r"HTTP 400: This model's maximum context length is 8 tokens",
             'with the endpoint\'s message')
    tap.is_(len(m.requests_for('error-400')), 1, 'a 4xx is not retried')

    for name in ('cut-abrupt', 'cut-clean'):
        ev, took = run(s, u, cid, st, name)
        tap.is_(llm.types(ev)[-1], 'turn.failed', '%s: turn.failed' % name)
        tap.like(ev[-1][0].data.get('error', ''), r'ended before it finished', '%s: saying the stream ended early' % name)

    ev, took = run(s, u, cid, st, 'no-done')
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'finish_reason without [DONE]: completed')

    ev, took = run(s, u, cid, st, 'idle', timeout=30)
    tap.is_(llm.types(ev)[-1], 'turn.failed', 'a silent endpoint: turn.failed')
    tap.like(ev[-1][0].data.get('error', ''), r'sent nothing for 2 s', 'by the idle timeout')
    tap.ok(took < 12, 'in about engine.llm_idle_timeout_seconds (%.1f s)' % took)

    r = s.request('POST', '/api/conversations', body={'model': 'dead'}, token=u.token)
    dead = r.json['id']
    st2 = s.open_stream(dead, u.token)
    ev, took = run(s, u, dead, st2, 'hello')
    tap.is_(llm.types(ev)[-1], 'turn.failed', 'nothing listening: turn.failed')
    tap.like(ev[-1][0].data.get('error', ''), r'cannot reach the model endpoint', 'saying so')

    everything = s.server_log() + s.server_output()
    evs = s.open_stream(cid, u.token).drain(quiet=1.0)
    tap.ok(KEY not in everything and KEY not in repr([e.data for e in evs]),
           'the API key is in no event, log line or server output')
tap.done()
