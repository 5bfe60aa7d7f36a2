#!/usr/bin/python3
# 47-engine-trim: when the history outgrows the profile's context window
# (estimated as bytes / 4 tokens, minus max_output_tokens and the tool
# list), the oldest tool outputs are shortened first, then the oldest
# exchanges dropped; the system prompt and the newest user message always
# go, and the history stays valid (no orphan tool messages).
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402

CFG = {'workspace_isolation.enabled': False,
       'llm.profiles.default.context_window': 2200,
       'llm.profiles.default.max_output_tokens': 200,
       'engine.system_prompt': 'SYSTEM PROMPT MARKER'}
BIG = ''.join('line %04d of a big file\n' % i for i in range(130))    # ~3 KB


def tokens(msgs):
    return sum(len(json.dumps(x, separators=(',', ':'))) // 4 + 4 for x in msgs)


with llm.ScriptedLLM() as m, cdm.Stack(config=m.config(**CFG)) as s:
    u = s.new_user('trimmer')
    cid = s.create_conversation(u.token, 'trim')
    os.makedirs(s.path('workspaces', cid, 'upper'), 0o700, exist_ok=True)
    with open(s.path('workspaces', cid, 'upper', 'big.txt'), 'w') as f:
        f.write(BIG)
    st = s.open_stream(cid, u.token)
    for i in range(2):
        tid = llm.post(s, u, cid, '[[scenario:trim-read]] read number %d' % i)
        tap.is_(llm.types(llm.turn_events(st, tid))[-1], 'turn.completed', 'turn %d completes' % (i + 1))
        if i == 0:
            full = [x for x in m.requests()[-1]['body']['messages'] if x['role'] == 'tool']
            tap.is_(full[0]['content'], BIG, 'with room, a tool output goes whole')

    msgs = m.requests()[-1]['body']['messages']
    tools = [x for x in msgs if x['role'] == 'tool']
    tap.is_(len(tools), 2, 'both tool results are still there')
    tap.like(tools[0]['content'], r'removed to fit the context window', 'past the window, the oldest tool output is shortened')
    tap.ok(len(tools[0]['content']) < 400, 'to a short head (%d bytes)' % len(tools[0]['content']))
    tap.is_(tools[1]['content'], BIG, 'the newer one is whole')
    tap.is_(msgs[0], {'role': 'system', 'content': 'SYSTEM PROMPT MARKER'}, 'the system prompt comes first')

    long_q = '[[scenario:hello]] ' + 'a long question ' * 300     # ~4.8 KB
    tid = llm.post(s, u, cid, long_q)
    llm.turn_events(st, tid)
    msgs = m.requests()[-1]['body']['messages']
    users = [x['content'] for x in msgs if x['role'] == 'user']
    tap.is_(msgs[0]['content'], 'SYSTEM PROMPT MARKER', 'the system prompt stays')
    tap.is_(users[-1], long_q, 'the newest user message stays whole')
    tap.ok('read number 0' not in ' '.join(users), 'the oldest exchange was dropped') or tap.diag(users)
    ids = {c['id'] for x in msgs if x.get('tool_calls') for c in x['tool_calls']}
    tap.ok(all(x.get('tool_call_id') in ids for x in msgs if x['role'] == 'tool'),
           'no orphan tool message after dropping')
    tap.ok(msgs[1]['role'] == 'user', 'what remains starts with a user message')
    budget = 2200 - 200 - tokens([{'tools': m.requests()[-1]['body']['tools']}])
    tap.diag('estimated %d tokens for a budget of %d' % (tokens(msgs), budget))
    tap.ok(tokens(msgs) <= budget + 50 or len(users) == 1, 'the history fits the window by the same estimate')
tap.done()
