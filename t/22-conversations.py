#!/usr/bin/python3
# 22-conversations: create, get, list, rename, delete; post and list
# messages; and ownership: another user's conversation is answered exactly
# like one that does not exist, on every route under /api/conversations/{id}.
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import is_error, random_id   # noqa: E402

with cdm.Stack() as s:
    a = s.new_user('anna')
    b = s.new_user('bert')

    def conv(cid, method='GET', body=None, user=a, sub=''):
        return s.request(method, '/api/conversations/%s%s' % (cid, sub), body=body, token=user.token)

    # -- create, get
    r = s.request('POST', '/api/conversations', body={}, token=a.token)
    tap.is_(r.status, 201, 'create without a title: 201')
    c1 = r.json or {}
    tap.is_(c1.get('title'), '', 'title defaults to ""')
    tap.like(c1.get('id'), r'^[A-Za-z0-9_-]{16,}$', 'id is >= 16 base64url characters')
    for k in ('created_at', 'updated_at'):
        tap.like(c1.get(k), r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$', k + ' is RFC 3339 UTC')
    r = conv(c1.get('id'))
    tap.is_(r.status, 200, 'GET the conversation: 200')
    tap.is_((r.json or {}).get('id'), c1.get('id'), 'GET answers the same id')

    time.sleep(1.1)       # updated_at may have one-second resolution
    r = s.request('POST', '/api/conversations', body={'title': 'second'}, token=a.token)
    tap.is_(r.status, 201, 'create with a title: 201')
    c2 = r.json or {}
    tap.is_(c2.get('title'), 'second', 'the title is kept')
    tap.isnt(c2.get('id'), c1.get('id'), 'conversation ids differ')
    time.sleep(1.1)
    c3 = (s.request('POST', '/api/conversations', body={'title': 'third'}, token=a.token).json or {})
    s.create_conversation(b.token, 'bert\'s')

    # -- list: own only, newest first
    r = s.request('GET', '/api/conversations', token=a.token)
    tap.is_(r.status, 200, 'list: 200')
    lst = (r.json or {}).get('conversations') or []
    tap.is_([c.get('id') for c in lst], [c3.get('id'), c2.get('id'), c1.get('id')],
            'list: the caller\'s own three, newest first')
    r = s.request('GET', '/api/conversations', token=b.token)
    tap.is_([c.get('title') for c in (r.json or {}).get('conversations') or []], ['bert\'s'],
            'list: another user sees only their own')

    # -- rename
    r = conv(c1.get('id'), 'PATCH', {'title': 'renamed'})
    tap.is_(r.status, 200, 'PATCH title: 200')
    tap.is_((r.json or {}).get('title'), 'renamed', 'PATCH answers the new title')
    tap.is_((conv(c1.get('id')).json or {}).get('title'), 'renamed', 'GET shows the new title')
    is_error(conv(c1.get('id'), 'PATCH', {'title': 7}), 400, 'bad_request', 'PATCH title not a string')
    r = s.request('GET', '/api/conversations', token=a.token)
    ups = [c.get('updated_at') for c in (r.json or {}).get('conversations') or []]
    tap.is_(ups, sorted(ups, reverse=True), 'list stays ordered by updated_at, newest first')

    # -- delete
    r = conv(c2.get('id'), 'DELETE')
    tap.is_(r.status, 204, 'DELETE: 204')
    tap.is_(r.body, b'', 'DELETE: no body')
    is_error(conv(c2.get('id')), 404, 'not_found', 'GET after DELETE')
    is_error(conv(c2.get('id'), 'DELETE'), 404, 'not_found', 'DELETE again')

    # -- messages
    cid = c1.get('id')
    r = s.post_message(a.token, cid, 'hello, agent')
    tap.is_(r.status, 202, 'POST message: 202')
    m = r.json or {}
    tap.ok(isinstance(m.get('turn_id'), str) and isinstance(m.get('message_id'), str),
           'POST message answers {turn_id, message_id}') or tap.diag(repr(r.body))
    r = conv(cid, sub='/messages')
    tap.is_(r.status, 200, 'GET messages: 200')
    msgs = (r.json or {}).get('messages') or []
    mine = [x for x in msgs if x.get('id') == m.get('message_id')]
    tap.is_(len(mine), 1, 'the posted message is listed once')
    tap.is_([(x.get('role'), x.get('content')) for x in mine], [('user', 'hello, agent')],
            'it has role "user" and the content')
    tap.is_(msgs[:1], mine, 'it is the first message')
    for name, body in [('content missing', {}), ('content a number', {'content': 5}),
                       ('content null', {'content': None})]:
        r = conv(cid, 'POST', body, sub='/messages')
        is_error(r, 400, 'bad_request', 'POST message, ' + name)

    # -- ownership: bert on anna's conversation == bert on no conversation
    before_title = (conv(cid).json or {}).get('title')
    before_count = len((conv(cid, sub='/messages').json or {}).get('messages') or [])
    ghost = random_id()
    x = random_id()
    routes = [
        ('GET', '', None),
        ('PATCH', '', {'title': 'taken over'}),
        ('DELETE', '', None),
        ('GET', '/messages', None),
        ('POST', '/messages', {'content': 'injected'}),
        ('POST', '/turns/%s/cancel' % x, None),
        ('POST', '/turns/%s/cancel' % m.get('turn_id'), None),
        ('POST', '/approvals/%s' % x, {'decision': 'approve'}),
        ('GET', '/events', None),
        ('GET', '/workspace/diff', None),
    ]
    for method, sub, body in routes:
        theirs = conv(cid, method, body, user=b, sub=sub)
        nothing = conv(ghost, method, body, user=b, sub=sub)
        name = '%s /api/conversations/{id}%s' % (method, sub.replace(x, 'X').replace(str(m.get('turn_id')), '{turn}'))
        tap.is_(theirs.status, 404, name + ' of another user: 404')
        tap.is_(theirs.body, nothing.body, name + ': body identical to a nonexistent id\'s')
        tap.is_(nothing.json and nothing.json.get('error', {}).get('code'), 'not_found',
                name + ': error code not_found')
    r = conv(cid)
    tap.is_((r.status, (r.json or {}).get('title')), (200, before_title), 'anna\'s conversation still has its title')
    r = conv(cid, sub='/messages')
    tap.is_(len((r.json or {}).get('messages') or []), before_count, 'and its messages, no more')
tap.done()
