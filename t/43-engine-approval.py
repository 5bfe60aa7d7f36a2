#!/usr/bin/python3
# 43-engine-approval: a shell call parks its turn with approval.required
# until POST …/approvals/{call_id} decides: approve (the command runs in
# the sandbox — or, without one, fails closed saying why), deny (the model
# gets an error result), or nobody within tools.approval_timeout_seconds
# (denied "by timeout"). 200 / 404 unknown call / 409 already decided /
# 400 bad decision / 404 for another user. Rules: deny > ask > allow on the
# argv prefix, never allow for shell syntax; every decision is stored with
# who made it.
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402
from cdm import is_error   # noqa: E402

TIMEOUT = 4


def shell(name, command):
    return {name: {'steps': [
        {'text': 'I will run a command.',
         'tool_calls': [{'id': 'sh_' + name.replace('-', '_'), 'name': 'shell',
                         'arguments': {'command': command}}]},
        {'text': 'Result: ', 'echo_tool': True}]}}


SC = {}
SC.update(shell('approve', 'echo approved > /workspace/ran.txt; cat /workspace/ran.txt'))
SC.update(shell('deny', 'echo denied > /workspace/denied.txt'))
SC.update(shell('timeout', 'echo late > /workspace/late.txt'))
SC.update(shell('rule-deny', 'curl http://example.com/'))
SC.update(shell('rule-allow', 'echo allowed'))
SC.update(shell('rule-meta', 'echo x; rm -rf /workspace'))

CFG = {'tools.approval_timeout_seconds': TIMEOUT,
       'tools.approval_rules': 'deny curl; deny wget; allow echo; allow git status'}


def wait_type(st, t, timeout=15):
    ev, _ = st.wait_event(lambda e: e.type == t, timeout=timeout)
    return ev


def approve(s, u, cid, call, decision='approve'):
    return s.request('POST', '/api/conversations/%s/approvals/%s' % (cid, call),
                     body={'decision': decision}, token=u.token)


with llm.ScriptedLLM(scenarios=SC) as m, cdm.Stack(config=m.config(**CFG)) as s:
    health = s.request('GET', '/api/health').json or {}
    sandbox = (health.get('sandbox') or {}).get('available')
    u = s.new_user('approver')
    other = s.new_user('stranger')
    cid = s.create_conversation(u.token, 'approvals')
    ws = s.path('workspaces', cid, 'upper')
    st = s.open_stream(cid, u.token)

    # -- approve
    tid = llm.post(s, u, cid, '[[scenario:approve]] go')
    req = wait_type(st, 'approval.required')
    tap.is_(sorted(req.data), ['call_id', 'command', 'name', 'turn_id'], 'approval.required {turn_id, call_id, name, command}')
    tap.is_((req.data.get('turn_id'), req.data.get('call_id'), req.data.get('name')), (tid, 'sh_approve', 'shell'),
            'for this turn and call')
    tap.is_(req.data.get('command'), SC['approve']['steps'][0]['tool_calls'][0]['arguments']['command'],
            'showing the command')
    time.sleep(0.5)
    tap.is_(llm.db_row(s, 'SELECT status FROM turns WHERE id = ?', (tid,))[0], 'running', 'the turn is parked, still running')
    tap.ok(not os.path.exists(os.path.join(ws, 'ran.txt')), 'nothing ran before the approval')
    is_error(approve(s, u, cid, 'sh_approve', 'maybe'), 400, 'bad_request', 'decision "maybe"')
    is_error(s.request('POST', '/api/conversations/%s/approvals/sh_approve' % cid, body={}, token=u.token),
             400, 'bad_request', 'no decision')
    is_error(approve(s, other, cid, 'sh_approve'), 404, 'not_found', 'another user answering')
    is_error(approve(s, u, cid, 'no_such_call'), 404, 'not_found', 'an unknown call id')
    is_error(approve(s, u, cid, '..%2F..'), 404, 'not_found', 'an odd call id')
    r = approve(s, u, cid, 'sh_approve')
    tap.is_(r.status, 200, 'approve: 200')
    is_error(approve(s, u, cid, 'sh_approve', 'deny'), 409, 'conflict', 'deciding again')
    ev = llm.turn_events(st, tid)
    dec = llm.of_type(ev, 'approval.decided')
    tap.is_(dec, [{'turn_id': tid, 'call_id': 'sh_approve', 'decision': 'approve', 'by': u.id}],
            'approval.decided {turn_id, call_id, decision, by: the user id}')
    res = llm.of_type(ev, 'tool.result')[0]
    if sandbox:
        tap.is_((res.get('ok'), res.get('exit_code')), (True, 0), 'approved: the command ran in the sandbox')
        tap.like(res.get('output', ''), r'approved', 'with its output')
        tap.ok(os.path.exists(os.path.join(ws, 'ran.txt')), 'and wrote to the workspace')
    else:
        tap.is_(res.get('ok'), False, 'approved, but no sandbox: the call fails closed')
        tap.like(res.get('error', ''), r'not run: ', 'with the sandbox\'s reason: ' + res.get('error', ''))
        tap.ok(not os.path.exists(os.path.join(ws, 'ran.txt')), 'and nothing ran on the host')
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'the turn completes')
    row = llm.db_row(s, 'SELECT decision, decided_by, needs_approval FROM tool_calls WHERE call_id = ?', ('sh_approve',))
    tap.is_(row, ('approve', u.id, 1), 'the decision is stored with who made it')
    is_error(approve(s, u, cid, 'sh_approve'), 409, 'conflict', 'deciding after the turn ended')

    # -- deny
    tid = llm.post(s, u, cid, '[[scenario:deny]] go')
    wait_type(st, 'approval.required')
    tap.is_(approve(s, u, cid, 'sh_deny', 'deny').status, 200, 'deny: 200')
    ev = llm.turn_events(st, tid)
    tap.is_(llm.of_type(ev, 'approval.decided')[0]['decision'], 'deny', 'approval.decided deny')
    res = llm.of_type(ev, 'tool.result')[0]
    tap.is_(res.get('ok'), False, 'denied: tool.result ok false')
    tap.like(res.get('error', ''), r'user denied', 'saying the user denied it')
    last = m.requests_for('deny')[-1]['body']['messages']
    tap.like(last[-1].get('content', ''), r'^error: .*denied', 'the model sees the denial as the tool error')
    tap.like(llm.of_type(ev, 'message.created')[-1]['message']['content'], r'denied', 'and answers after it')
    tap.ok(not os.path.exists(os.path.join(ws, 'denied.txt')), 'nothing ran')

    # -- timeout
    tid = llm.post(s, u, cid, '[[scenario:timeout]] go')
    t0 = time.monotonic()
    wait_type(st, 'approval.required')
    ev = llm.turn_events(st, tid, timeout=TIMEOUT + 20)
    took = time.monotonic() - t0
    dec = llm.of_type(ev, 'approval.decided')
    tap.is_((dec[0]['decision'], dec[0]['by']) if dec else None, ('deny', 'timeout'), 'nobody answered: denied by "timeout"')
    tap.ok(TIMEOUT - 0.5 <= took < TIMEOUT + 15, 'after about tools.approval_timeout_seconds (%.1f s)' % took)
    tap.like(llm.of_type(ev, 'tool.result')[0].get('error', ''), r'nobody approved it within %d s' % TIMEOUT,
             'the model is told')
    is_error(approve(s, u, cid, 'sh_timeout'), 409, 'conflict', 'approving after the timeout')
    tap.is_(llm.db_row(s, 'SELECT decided_by FROM tool_calls WHERE call_id = ?', ('sh_timeout',))[0], 'timeout',
            'stored as decided by timeout')

    # -- rules
    tid = llm.post(s, u, cid, '[[scenario:rule-deny]] go')
    ev = llm.turn_events(st, tid)
    tap.ok('approval.required' not in llm.types(ev), 'deny rule: nobody is asked')
    tap.is_([(d['decision'], d['by']) for d in llm.of_type(ev, 'approval.decided')], [('deny', 'rule:deny curl')],
            'denied by "rule:deny curl"')
    tap.like(llm.of_type(ev, 'tool.result')[0].get('error', ''), r"rule 'deny curl' denies it", 'the model is told which rule')

    tid = llm.post(s, u, cid, '[[scenario:rule-allow]] go')
    ev = llm.turn_events(st, tid)
    tap.ok('approval.required' not in llm.types(ev), 'allow rule: nobody is asked')
    tap.is_([(d['decision'], d['by']) for d in llm.of_type(ev, 'approval.decided')], [('approve', 'rule:allow echo')],
            'approved by "rule:allow echo"')

    tid = llm.post(s, u, cid, '[[scenario:rule-meta]] go')
    req = wait_type(st, 'approval.required')
    tap.is_(req.data.get('call_id'), 'sh_rule_meta', 'allow rules do not apply to a command with ";": asked')
    approve(s, u, cid, 'sh_rule_meta', 'deny')
    ev = llm.turn_events(st, tid)
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'and the turn goes on after the answer')
tap.done()
