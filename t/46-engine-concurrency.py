#!/usr/bin/python3
# 46-engine-concurrency: two users' turns running at the same time never
# mix: each stream carries only its own turn's events with its own text in
# order, each file tool works in its own conversation's workspace, and
# neither user can see the other's events.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import llm   # noqa: E402
import tap   # noqa: E402


def scenario(who):
    text = ' '.join('%s%d' % (who, i) for i in range(40))
    return text, {'steps': [
        {'text': text, 'chunk_size': 5, 'delay': 0.01,
         'tool_calls': [{'id': 'w', 'name': 'write_file',
                         'arguments': {'path': 'mine.txt', 'content': 'owned by %s\n' % who}}]},
        {'tool_calls': [{'id': 'l', 'name': 'list_dir', 'arguments': {}},
                        {'id': 'r', 'name': 'read_file', 'arguments': {'path': 'mine.txt'}}]},
        {'text': 'done ', 'echo_tool': True}]}


TA, SA = scenario('alice')
TB, SB = scenario('bob')

with llm.ScriptedLLM(scenarios={'conc-a': SA, 'conc-b': SB}) as m, \
        cdm.Stack(config=m.config(**{'workspace_isolation.enabled': False})) as s:
    a, b = s.new_user('alice'), s.new_user('bob')
    ca, cb = s.create_conversation(a.token, 'a'), s.create_conversation(b.token, 'b')
    sa, sb = s.open_stream(ca, a.token), s.open_stream(cb, b.token)
    tids = cdm.parallel(2, lambda i: llm.post(s, a, ca, '[[scenario:conc-a]] go') if i == 0
                        else llm.post(s, b, cb, '[[scenario:conc-b]] go'))
    res = cdm.parallel(2, lambda i: llm.turn_events(sa if i == 0 else sb, tids[i], timeout=60))
    for i, (who, text, st, conv) in enumerate((('alice', TA, sa, ca), ('bob', TB, sb, cb))):
        ev = res[i]
        if isinstance(ev, BaseException):
            tap.ok(False, '%s: the turn ended' % who)
            tap.diag(repr(ev))
            continue
        tap.is_(llm.types(ev)[-1], 'turn.completed', '%s: the turn completes' % who)
        deltas = ''.join(d['text'] for d in llm.of_type(ev, 'message.delta'))
        tap.is_(deltas[:len(text)], text, '%s: the deltas are exactly this turn\'s text, in order' % who)
        other = 'bob' if who == 'alice' else 'alice'
        extra = [e for e in st.drain(quiet=0.5)]
        everything = repr([e.data for e, _ in ev]) + repr([e.data for e in extra])
        tap.ok(other not in everything, '%s: nothing of %s on this stream' % (who, other))
        out = {r['call_id']: r.get('output') for r in llm.of_type(ev, 'tool.result')}
        tap.is_(out.get('r'), 'owned by %s\n' % who, '%s: read_file sees its own file' % who)
        tap.is_(out.get('l'), 'mine.txt (%d bytes)\n' % len('owned by %s\n' % who),
                '%s: its workspace holds only its file' % who)
        with open(s.path('workspaces', conv, 'upper', 'mine.txt')) as f:
            tap.is_(f.read(), 'owned by %s\n' % who, '%s: written in its own conversation\'s upper layer' % who)
    r = s.open_stream(ca, b.token)
    tap.is_(r.status, 404, 'bob cannot open alice\'s events')
tap.done()
