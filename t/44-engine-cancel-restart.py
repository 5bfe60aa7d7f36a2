#!/usr/bin/python3
# 44-engine-cancel-restart: cancelling a turn while the model streams ends
# it with turn.cancelled within about a second (the transfer is aborted),
# keeps what was already shown, and frees the conversation; cancelling a
# turn parked on an approval likewise. A server stopped mid-turn (SIGTERM
# while the scripted model is slow, or while a turn waits for approval)
# marks the turn failed "interrupted by server restart" at its next start,
# and the conversation goes on with a valid history.
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402


def cancel(s, u, cid, tid):
    return s.request('POST', '/api/conversations/%s/turns/%s/cancel' % (cid, tid), token=u.token)


with llm.ScriptedLLM() as m, cdm.Stack(config=m.config()) as s:
    u = s.new_user('canceller')
    cid = s.create_conversation(u.token, 'cancel')
    st = s.open_stream(cid, u.token)

    # -- cancel mid-stream
    tid = llm.post(s, u, cid, '[[scenario:slow]] talk slowly')
    first, _ = st.wait_event(lambda e: e.type == 'message.delta', timeout=15)
    r = s.post_message(u.token, cid, '[[scenario:hello]] interrupting', busy_timeout=0)
    tap.is_(r.status, 409, 'a second message while the turn runs: 409')
    t0 = time.monotonic()
    r = cancel(s, u, cid, tid)
    tap.is_(r.status, 202, 'cancel: 202')
    ev = llm.turn_events(st, tid, timeout=15)
    took = time.monotonic() - t0
    tap.is_(llm.types(ev)[-1], 'turn.cancelled', 'the turn ends with turn.cancelled')
    tap.ok(took < 2.5, 'within about a second of the cancel (%.2f s)' % took)
    tap.is_(ev[-1][0].data, {'turn_id': tid}, 'turn.cancelled {turn_id}')
    shown = first.data['text'] + ''.join(d['text'] for d in llm.of_type(ev, 'message.delta'))
    created = llm.of_type(ev, 'message.created')
    tap.is_(created[-1]['message']['content'] if created else None, shown,
            'what was already streamed is kept as the assistant message')
    n = len(m.requests())
    time.sleep(1)
    deltas_after = [e for e in st.pending() if e.type == 'message.delta']
    tap.is_(deltas_after, [], 'no delta after turn.cancelled')
    tap.is_(llm.db_row(s, 'SELECT status FROM turns WHERE id = ?', (tid,))[0], 'cancelled', 'stored cancelled')
    r = cancel(s, u, cid, tid)
    tap.is_(r.status, 202, 'cancelling an ended turn again: 202, nothing changes')
    tid2 = llm.post(s, u, cid, '[[scenario:hello]] next')
    ev = llm.turn_events(st, tid2)
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'the conversation goes on')
    tap.is_(len(m.requests()), n + 1, 'with one new model request')
    roles = [x['role'] for x in m.requests()[-1]['body']['messages']]
    tap.is_(roles, ['system', 'user', 'assistant', 'user'], 'its history holds the cancelled exchange')

    # -- cancel while parked on an approval
    tid = llm.post(s, u, cid, '[[scenario:shell-ls]] list')
    st.wait_event(lambda e: e.type == 'approval.required', timeout=15)
    t0 = time.monotonic()
    cancel(s, u, cid, tid)
    ev = llm.turn_events(st, tid, timeout=15)
    took = time.monotonic() - t0
    tap.is_(llm.types(ev)[-1], 'turn.cancelled', 'a turn waiting for approval can be cancelled')
    tap.ok(took < 2.5, 'promptly (%.2f s)' % took)
    tap.ok('tool.result' not in llm.types(ev), 'the call never ran')
    r = s.request('POST', '/api/conversations/%s/approvals/sh1' % cid, body={'decision': 'approve'}, token=u.token)
    tap.is_(r.status, 404, 'approving it afterwards: 404, nothing waits')
    tid = llm.post(s, u, cid, '[[scenario:hello]] after')
    llm.turn_events(st, tid)
    msgs = m.requests()[-1]['body']['messages']
    tool = [x for x in msgs if x['role'] == 'tool']
    tap.ok(tool and tool[-1]['tool_call_id'] == 'sh1' and 'no result' in tool[-1]['content'],
           'the unanswered call gets a placeholder result in the next history')

    # -- restart mid-turn
    tid = llm.post(s, u, cid, '[[scenario:slow]] slowly again')
    ev, _ = st.wait_event(lambda e: e.type == 'message.delta', timeout=15)
    last = ev.id
    t0 = time.monotonic()
    rc = s.stop_server()
    tap.ok(rc is not None and time.monotonic() - t0 < 8,
           'SIGTERM mid-turn: the server stops promptly (%.2f s, exit %r)' % (time.monotonic() - t0, rc))
    s.start_server()
    st = s.open_stream(cid, u.token, last_event_id=last)
    ev = llm.turn_events(st, tid, timeout=15)
    tap.is_(llm.types(ev)[-1], 'turn.failed', 'after the restart the turn is turn.failed')
    tap.is_(ev[-1][0].data.get('error'), 'interrupted by server restart', 'with "interrupted by server restart"')
    tap.is_(llm.db_row(s, 'SELECT status, error FROM turns WHERE id = ?', (tid,)),
            ('failed', 'interrupted by server restart'), 'stored so')

    # -- restart while parked on an approval
    tid = llm.post(s, u, cid, '[[scenario:shell-ls]] list again')
    ev, _ = st.wait_event(lambda e: e.type == 'approval.required', timeout=15)
    call = ev.data['call_id']
    s.restart_server()
    st = s.open_stream(cid, u.token, last_event_id=ev.id)
    ev = llm.turn_events(st, tid, timeout=15)
    tap.is_((llm.types(ev)[-1], ev[-1][0].data.get('error')), ('turn.failed', 'interrupted by server restart'),
            'a turn parked on an approval fails at restart too')
    tap.is_(llm.db_row(s, 'SELECT decision, decided_by FROM tool_calls WHERE call_id = ? ORDER BY created_at DESC',
                       (call,)), ('deny', 'restart'), 'its pending approval is stored denied by "restart"')
    r = s.request('POST', '/api/conversations/%s/approvals/%s' % (cid, call), body={'decision': 'approve'}, token=u.token)
    tap.is_(r.status, 409, 'approving it now: 409')
    tid = llm.post(s, u, cid, '[[scenario:hello]] still there?')
    ev = llm.turn_events(st, tid)
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'the conversation goes on after restarts')
tap.done()
