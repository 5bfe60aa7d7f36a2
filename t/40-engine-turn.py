#!/usr/bin/python3
# 40-engine-turn: a whole turn through nginx against the scripted LLM:
# turn.started, message.delta events that arrive on the stream while the
# model is still answering, in order, the stored assistant message,
# turn.completed; what the server sent (stream, include_usage, tools, the
# history); finish_reason and usage stored with the turn; the next turn —
# also after a restart — sends the whole conversation back.
import os
import sys
import json
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402

TEXT = llm.load_scenario('hello')['steps'][0]['text']

with llm.ScriptedLLM() as m, cdm.Stack(config=m.config()) as s:
    u = s.new_user('talker')
    cid = s.create_conversation(u.token, 'hello')
    st = s.open_stream(cid, u.token)
    tid = llm.post(s, u, cid, '[[scenario:hello]] say hello')
    ev = llm.turn_events(st, tid)
    ts = llm.types(ev)
    tap.is_(ts[0], 'turn.started', 'the turn starts with turn.started') or tap.diag(ts)
    tap.is_(ts[-1], 'turn.completed', 'and ends with turn.completed')
    deltas = llm.of_type(ev, 'message.delta')
    tap.ok(len(deltas) >= 3, 'the answer arrives as several message.delta events (%d)' % len(deltas))
    tap.is_(''.join(d['text'] for d in deltas), TEXT, 'deltas concatenated, in order, are the answer')
    first_delta = [t for e, t in ev if e.type == 'message.delta'][0]
    done = ev[-1][1]
    tap.ok(done - first_delta > 0.1,
           'the first delta arrived %.2f s before the turn ended (live, not at the end)' % (done - first_delta))
    i_created = ts.index('message.created')
    tap.ok(ts.index('message.delta') > ts.index('turn.started') and
           all(t != 'message.delta' for t in ts[i_created:]),
           'deltas come after turn.started and before the assistant message.created')
    amsg = llm.of_type(ev, 'message.created')[0]['message']
    tap.is_((amsg.get('role'), amsg.get('content')), ('assistant', TEXT),
            'message.created carries the assistant message')

    r = s.request('GET', '/api/conversations/%s/messages' % cid, token=u.token)
    msgs = (r.json or {}).get('messages', [])
    tap.is_([(x['role'], x['content']) for x in msgs],
            [('user', '[[scenario:hello]] say hello'), ('assistant', TEXT)],
            'GET messages: the user message and the answer')

    reqs = m.requests()
    tap.is_(len(reqs), 1, 'one request to the model')
    b = reqs[0]['body']
    tap.is_(reqs[0]['path'], '/v1/chat/completions', 'POST {base_url}/chat/completions')
    tap.is_((b.get('stream'), b.get('stream_options')), (True, {'include_usage': True}),
            'stream: true with stream_options.include_usage')
    tap.is_(b.get('model'), 'scripted', 'the profile\'s model')
    names = sorted(t['function']['name'] for t in b.get('tools', []))
    tap.is_(names, ['edit_file', 'list_dir', 'read_file', 'search_files', 'shell', 'write_file'],
            'the tool list with JSON-schema parameters')
    tap.ok(all(t['function']['parameters'].get('type') == 'object' for t in b['tools']),
           'each tool has an object schema')
    tap.is_([x['role'] for x in b['messages']], ['system', 'user'], 'history: system prompt, user message')
    tap.ok(reqs[0]['authorization'] is None, 'no Authorization header without an API key')

    row = llm.db_row(s, 'SELECT status, finish_reason, usage, steps FROM turns WHERE id = ?', (tid,))
    tap.is_(row[:2], ('completed', 'stop'), 'the turn is stored completed with finish_reason stop')
    tap.is_(json.loads(row[2] or 'null'), {'prompt_tokens': 11, 'completion_tokens': 7, 'total_tokens': 18},
            'usage from the usage chunk stored with the turn')
    tap.is_(row[3], 1, 'one model call')

    tid2 = llm.post(s, u, cid, '[[scenario:hello]] again')
    ev2 = llm.turn_events(st, tid2)
    tap.is_(llm.types(ev2)[-1], 'turn.completed', 'a second turn completes')
    b = m.requests()[-1]['body']
    tap.is_([(x['role'], x['content']) for x in b['messages'][1:]],
            [('user', '[[scenario:hello]] say hello'), ('assistant', TEXT),
             ('user', '[[scenario:hello]] again')],
            'the second request carries the whole conversation')

    # The turn keeps going when nobody watches, and after a restart the
    # history is still whole.
    st.close()
    tid3 = llm.post(s, u, cid, '[[scenario:hello]] unwatched')
    tap.ok(cdm.wait_for(lambda: (llm.db_row(s, 'SELECT status FROM turns WHERE id = ?', (tid3,)) or [''])[0]
                        == 'completed', 20), 'a turn nobody watches completes')
    s.restart_server()
    st = s.open_stream(cid, u.token)
    tid4 = llm.post(s, u, cid, '[[scenario:hello]] after restart')
    ev4 = llm.turn_events(st, tid4)
    tap.is_(llm.types(ev4)[-1], 'turn.completed', 'a turn after a restart completes')
    b = m.requests()[-1]['body']
    tap.is_([x['role'] for x in b['messages']],
            ['system'] + ['user', 'assistant'] * 3 + ['user'],
            'and sends the history of all earlier turns')

    # A conversation of another profile name that does not exist fails clearly.
    r = s.request('POST', '/api/conversations', body={'model': 'nonesuch'}, token=u.token)
    cid2 = r.json['id']
    st2 = s.open_stream(cid2, u.token)
    t5 = llm.post(s, u, cid2, '[[scenario:hello]] x')
    ev5 = llm.turn_events(st2, t5)
    tap.is_(llm.types(ev5)[-1], 'turn.failed', 'an unknown model profile: turn.failed')
    tap.like(ev5[-1][0].data.get('error', ''), r"nonesuch", 'naming the profile')
tap.done()
