#!/usr/bin/python3
# 41-engine-tools: the tool runtime through a whole turn: parallel tool
# calls split across chunks are assembled and run in order, each with
# tool.call and tool.result events, the results stored as tool messages
# the next model call receives (valid pairing of tool_calls and
# tool_call_id); a server that sends every call at index 0; unknown tools,
# arguments that are not JSON or do not fit the schema, and failed edits
# become error results the model sees; outputs are capped with a marker.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402

# File tools run in the server; with isolation on they need the sandbox
# (fail closed, t/42 checks that), so these run with it off.
CFG = {'workspace_isolation.enabled': False, 'tools.output_cap_bytes': 2048}


def newest(msgs):
    """The messages from the newest user message on."""
    i = max(k for k, x in enumerate(msgs) if x['role'] == 'user')
    return msgs[i:]


def valid_history(msgs):
    """Every assistant tool call is answered by exactly one tool message
    right after it, and every tool message answers one."""
    i = 0
    while i < len(msgs):
        m = msgs[i]
        if m['role'] == 'tool':
            return 'orphan tool message at %d' % i
        if m['role'] == 'assistant' and m.get('tool_calls'):
            ids = [c['id'] for c in m['tool_calls']]
            got = [x.get('tool_call_id') for x in msgs[i + 1:i + 1 + len(ids)]]
            if sorted(got) != sorted(ids) or any(x['role'] != 'tool' for x in msgs[i + 1:i + 1 + len(ids)]):
                return 'calls %r answered by %r' % (ids, got)
            i += len(ids)
        i += 1
    return None


with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**CFG)) as s:
    u = s.new_user('toolsmith')
    cid = s.create_conversation(u.token, 'tools')
    st = s.open_stream(cid, u.token)
    tid = llm.post(s, u, cid, '[[scenario:tools-files]] write and read')
    ev = llm.turn_events(st, tid)
    ts = llm.types(ev)
    tap.is_(ts[-1], 'turn.completed', 'the turn completes') or tap.diag(ts)
    calls = llm.of_type(ev, 'tool.call')
    results = llm.of_type(ev, 'tool.result')
    tap.is_([c['name'] for c in calls], ['write_file', 'read_file', 'list_dir'],
            'tool.call for each call, in order')
    tap.is_([c['call_id'] for c in calls], ['call_w1', 'call_r1', 'call_l1'], 'with the model\'s call ids')
    tap.is_(calls[0]['arguments'], '{"path": "notes/a.txt", "content": "alpha\\nbeta\\ngamma\\n"}',
            'arguments assembled from fragments, as the model sent them')
    tap.is_([r['ok'] for r in results], [True, True, True], 'every result ok') or tap.diag(results)
    tap.is_(results[1]['output'], 'beta\ngamma\n', 'read_file with start_line..end_line')
    tap.like(results[2]['output'], r'^a\.txt \(17 bytes\)\n$', 'list_dir shows the written file')
    order = [(e.type, (e.data.get('call_id'))) for e, _ in ev if e.type.startswith('tool.')]
    tap.is_(order, [('tool.call', 'call_w1'), ('tool.result', 'call_w1'), ('tool.call', 'call_r1'),
                    ('tool.result', 'call_r1'), ('tool.call', 'call_l1'), ('tool.result', 'call_l1')],
            'each result follows its call')
    upper = s.path('workspaces', cid, 'upper', 'notes', 'a.txt')
    tap.ok(os.path.isfile(upper), 'the file was written to the upper layer')
    reqs = m.requests_for('tools-files')
    tap.is_(len(reqs), 3, 'three model calls')
    last = reqs[-1]['body']['messages']
    tap.is_(valid_history(last), None, 'the last request has a valid history (tool_calls paired with tool_call_id)')
    tap.is_([x['role'] for x in last], ['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'tool'],
            'system, user, assistant+call, result, assistant+2 calls, 2 results')
    tap.is_(last[2].get('content'), 'Let me write it.', 'assistant text kept with its tool call')
    final = llm.of_type(ev, 'message.created')[-1]['message']
    tap.like(final['content'], r'a\.txt \(17 bytes\)', 'the final answer quotes the last tool result the model saw')
    r = s.request('GET', '/api/conversations/%s/messages' % cid, token=u.token)
    msgs = r.json['messages']
    tap.is_([x['role'] for x in msgs], ['user', 'assistant', 'tool', 'assistant', 'tool', 'tool', 'assistant'],
            'GET messages lists the whole exchange')
    tap.is_([x.get('tool_call_id') for x in msgs if x['role'] == 'tool'], ['call_w1', 'call_r1', 'call_l1'],
            'tool messages carry tool_call_id')
    tap.is_(msgs[1]['tool_calls'][0]['function']['name'], 'write_file', 'assistant messages carry tool_calls')

    # -- every call at index 0, names repeated
    tid = llm.post(s, u, cid, '[[scenario:tools-index0]] zeta')
    ev = llm.turn_events(st, tid)
    calls = llm.of_type(ev, 'tool.call')
    tap.is_([(c['call_id'], c['name']) for c in calls], [('z1', 'write_file'), ('z2', 'search_files')],
            'calls all at index 0 told apart by id; repeated names not doubled')
    res = llm.of_type(ev, 'tool.result')
    tap.is_(res[1]['output'] if len(res) > 1 else None, 'z.txt:1: zeta zeta\n', 'search_files finds the line')

    # -- bad calls
    tid = llm.post(s, u, cid, '[[scenario:tools-bad]] bad')
    ev = llm.turn_events(st, tid)
    tap.is_(llm.types(ev)[-1], 'turn.completed', 'bad calls do not fail the turn')
    res = {r['call_id']: r for r in llm.of_type(ev, 'tool.result')}
    expect = [
        ('b1', r"no tool named 'launch_rockets'", 'unknown tool'),
        ('b2', r'not valid JSON', 'arguments that are not JSON'),
        ('b3', r"'path' must be a string, not an integer", 'wrong argument type'),
        ('b4', r"unknown argument 'mode'", 'an argument the schema does not have'),
        ('b5', r"'content' is required", 'a missing required argument'),
        ('b7', r'occurs 2 times', 'edit_file with an ambiguous match'),
        ('b8', r'does not occur', 'edit_file with no match'),
    ]
    for cid_, rx, name in expect:
        r = res.get(cid_, {})
        tap.ok(r.get('ok') is False and 'error' in r, name + ': ok false with an error')
        tap.like(r.get('error', ''), rx, name + ': says why')
    tap.is_(res.get('b9', {}).get('ok'), True, 'a unique edit succeeds')
    tap.is_(res.get('b10', {}).get('output'), 'y\n', 'and only that file content changed')
    last = m.requests_for('tools-bad')[-1]['body']['messages']
    tools = [x for x in newest(last) if x['role'] == 'tool']
    tap.ok(tools and tools[0]['content'].startswith('error: '), 'the model sees the error as the tool result')
    tap.is_(valid_history(last), None, 'history stays valid after bad calls')
    bad_json = [c for x in last if x.get('tool_calls') for c in x['tool_calls'] if c['id'] == 'b2']
    tap.is_(bad_json[0]['function']['arguments'] if bad_json else None, '{}',
            'arguments that were not JSON go back to the model as {}')

    # -- output cap
    with open(s.path('workspaces', cid, 'upper', 'big.txt'), 'w') as f:
        f.write('0123456789' * 1000)
    tid = llm.post(s, u, cid, '[[scenario:big-output]] big')
    ev = llm.turn_events(st, tid)
    out = (llm.of_type(ev, 'tool.result') or [{}])[0].get('output', '')
    tap.ok(out.startswith('0123456789') and len(out) < 2200, 'a large output is cut at tools.output_cap_bytes (%d)' % len(out))
    tap.like(out, r'\[output truncated: the first 2048 of 10000 bytes are shown', 'with a visible marker')
    tool = [x for x in newest(m.requests_for('big-output')[-1]['body']['messages']) if x['role'] == 'tool'][0]
    tap.is_(tool['content'], out, 'the model gets the capped output too')
tap.done()
