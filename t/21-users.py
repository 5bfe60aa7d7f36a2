#!/usr/bin/python3
# 21-users: an admin creates users with POST /api/users; others may not;
# names are unique; bad bodies are 400; user ids are long random strings.
import os
import re
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import is_error   # noqa: E402

ID_RE = r'^[A-Za-z0-9_-]{16,}$'     # base64url, >= 96 bits

with cdm.Stack() as s:
    admin = s.admin()

    r = s.create_user('bob', 'bob-password')
    tap.is_(r.status, 201, 'admin creates bob: 201')
    bob = r.json or {}
    tap.is_((bob.get('username'), bob.get('is_admin')), ('bob', False), 'answer: {username bob, is_admin false}')
    tap.like(bob.get('id'), ID_RE, 'answer: id is >= 16 base64url characters')

    r = s.request('POST', '/api/auth/login', body={'username': 'bob', 'password': 'bob-password'})
    tap.is_(r.status, 200, 'bob can log in')
    bob_tok = (r.json or {}).get('token')
    tap.is_(((r.json or {}).get('user') or {}).get('id'), bob.get('id'), 'login answers bob\'s id')

    r = s.create_user('carol', 'carol-password', admin=True)
    tap.is_(r.status, 201, 'admin creates admin carol: 201')
    carol = r.json or {}
    tap.is_(carol.get('is_admin'), True, 'carol is_admin true')
    tap.like(carol.get('id'), ID_RE, 'carol\'s id is >= 16 base64url characters')
    ids = [admin.id, bob.get('id'), carol.get('id')]
    tap.is_(len(set(ids)), 3, 'user ids differ')
    tap.ok(not any(re.fullmatch(r'\d+', i or '') for i in ids), 'user ids are not numbers')
    carol_tok = s.login('carol', 'carol-password')
    r = s.create_user('dave', 'dave-password', token=carol_tok)
    tap.is_(r.status, 201, 'a new admin can create users too')

    # -- not an admin
    r = s.create_user('eve', 'eve-password', token=bob_tok)
    is_error(r, 403, 'forbidden', 'non-admin POST /api/users')
    r = s.request('POST', '/api/auth/login', body={'username': 'eve', 'password': 'eve-password'})
    tap.is_(r.status, 401, 'the refused user was not created')

    # -- taken name
    r = s.create_user('bob', 'another-password')
    is_error(r, 409, 'conflict', 'duplicate name')
    r = s.request('POST', '/api/auth/login', body={'username': 'bob', 'password': 'bob-password'})
    tap.is_(r.status, 200, 'bob\'s password is unchanged by the refused duplicate')

    # -- bad bodies
    bad = [
        ('missing password', {'username': 'frank'}),
        ('missing username', {'password': 'pw-frank'}),
        ('username not a string', {'username': 42, 'password': 'pw-frank'}),
        ('password not a string', {'username': 'frank', 'password': ['pw']}),
        ('is_admin not a boolean', {'username': 'frank', 'password': 'pw-frank', 'is_admin': 'yes'}),
        ('empty username', {'username': '', 'password': 'pw-frank'}),
        ('empty password', {'username': 'frank', 'password': ''}),
    ]
    for name, body in bad:
        r = s.request('POST', '/api/users', body=body, token=admin.token)
        is_error(r, 400, 'bad_request', 'POST /api/users, ' + name)
    r = s.request('POST', '/api/auth/login', body={'username': 'frank', 'password': 'pw-frank'})
    tap.is_(r.status, 401, 'none of the bad bodies created a user')
tap.done()
