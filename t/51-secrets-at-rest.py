#!/usr/bin/python3
# 51-secrets-at-rest: what the database holds. A value is sealed (no
# plaintext in the db, -wal or -shm file, a key id beside it); written
# under secret A and read under B with A in previous_jwt_secrets it opens
# and is re-encrypted (its key id changes); under a key nobody configured
# it is reported as unreadable while everything else keeps working; a
# ciphertext copied into another user's row does not open; without a
# jwt_secret rows are marked plaintext and the first read after a secret
# is configured seals them.
import os
import sqlite3
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402


def db_bytes(s):
    """The database, -wal and -shm files, concatenated."""
    out = b''
    for suffix in ('', '-wal', '-shm'):
        try:
            with open(s.db_path() + suffix, 'rb') as f:
                out += f.read()
        except FileNotFoundError:
            pass
    return out


def rows(s, user_id=None):
    db = sqlite3.connect(s.db_path(), timeout=30)
    try:
        q = 'SELECT user_id, kind, name, scheme, key_id, value FROM sealed_values'
        if user_id:
            return db.execute(q + ' WHERE user_id = ? ORDER BY name', (user_id,)).fetchall()
        return db.execute(q + ' ORDER BY user_id, name').fetchall()
    finally:
        db.close()


def entry(s, token, name):
    r = s.request('GET', '/api/secrets', token=token)
    for e in (r.json or {}).get('secrets', []):
        if e['name'] == name:
            return r.status, e
    return r.status, None


def relogin(s, *users):
    for u in users:
        u.token = s.login(u.name, u.password)


def set_keys(s, current, previous):
    s.extra['auth.jwt_secret'] = current
    s.extra['auth.previous_jwt_secrets'] = previous
    s.write_config()
    s.restart_server()


A = 'A-' + 'k3y' * 12
B = 'B-' + 'k3y' * 12
C = 'C-' + 'k3y' * 12

with cdm.Stack(config={'auth.jwt_secret': A}) as s:
    alice, bob = s.new_user('alice'), s.new_user('bob')
    v1 = 'val-' + 'P9z' * 10
    v2 = 'val-' + 'Q8y' * 10
    for name, v in (('ONE', v1), ('TWO', v2)):
        r = s.request('PUT', '/api/secrets/' + name, body={'value': v}, token=alice.token)
        tap.is_(r.status, 204, 'PUT %s' % name)

    # -- sealed at rest
    data = db_bytes(s)
    tap.ok(v1.encode() not in data and v2.encode() not in data,
           'no plaintext in the db, -wal and -shm files while serving')
    before = rows(s, alice.id)
    tap.is_([(r[2], r[3]) for r in before], [('ONE', 'xchacha20poly1305'), ('TWO', 'xchacha20poly1305')],
            'rows are sealed with XChaCha20-Poly1305')
    tap.ok(all(r[4] and len(r[4]) == 16 for r in before), 'each row has a 16-hex key id')
    tap.ok(all(len(r[5]) == 24 + len(v1) + 16 for r in before), 'nonce + ciphertext + tag')
    key_a = before[0][4]

    # -- rotation: B current, A previous
    set_keys(s, B, [A])
    st, e = entry(s, alice.token, 'ONE')
    tap.is_(st, 200, 'after rotation: old tokens still valid (A is previous)')
    tap.ok(e is not None and 'error' not in e, 'a value sealed under A opens under B+A')
    after = rows(s, alice.id)
    tap.ok(all(r[4] != key_a for r in after), 'the read re-encrypted them: key id changed')
    tap.is_(len({r[4] for r in after}), 1, 'both under one (the current) key')
    key_b = after[0][4]
    tap.like(s.server_log(), r"secret 'ONE' re-encrypted", 'the log says which value was re-encrypted')
    data = db_bytes(s)
    tap.ok(v1.encode() not in data and v2.encode() not in data, 'still no plaintext')

    # -- a key nobody configured: C alone
    set_keys(s, C, [])
    relogin(s, alice, bob)
    st, e = entry(s, alice.token, 'ONE')
    tap.is_(st, 200, 'unreadable values do not break the listing')
    tap.ok(e is not None and isinstance(e.get('error'), str) and e['error'],
           'the unreadable value carries an error') or tap.diag(e)
    tap.like(s.server_log(), r"user alice: secret 'ONE' cannot be opened: .*%s" % key_b,
             'the log names the value and its key id')
    tap.is_([r[4] for r in rows(s, alice.id)], [key_b, key_b], 'unreadable values are kept as they are')
    r = s.request('PUT', '/api/secrets/THREE', body={'value': v1 + 'x'}, token=alice.token)
    tap.is_(r.status, 204, 'new values can still be stored')
    st, e = entry(s, alice.token, 'THREE')
    tap.ok(e is not None and 'error' not in e, 'and they open')
    r = s.request('GET', '/api/auth/me', token=bob.token)
    tap.is_(r.status, 200, 'the server keeps serving')

    # -- a ciphertext copied into another user's row
    set_keys(s, B, [])
    relogin(s, alice, bob)
    r = s.request('PUT', '/api/secrets/SHARED', body={'value': 'bobs-own-value-123'}, token=bob.token)
    tap.is_(r.status, 204, 'bob stores SHARED')
    r = s.request('PUT', '/api/secrets/SHARED', body={'value': v2}, token=alice.token)
    tap.is_(r.status, 204, 'alice stores SHARED')
    db = sqlite3.connect(s.db_path(), timeout=30)
    with db:
        db.execute("UPDATE sealed_values SET value = (SELECT value FROM sealed_values "
                   "WHERE user_id = ?1 AND name = 'SHARED'), key_id = (SELECT key_id FROM "
                   "sealed_values WHERE user_id = ?1 AND name = 'SHARED') "
                   "WHERE user_id = ?2 AND name = 'SHARED'", (alice.id, bob.id))
    db.close()
    st, e = entry(s, bob.token, 'SHARED')
    tap.ok(st == 200 and e is not None and e.get('error'), "alice's ciphertext in bob's row does not open")
    tap.like(s.server_log(), r"user bob: secret 'SHARED' cannot be opened: the ciphertext does not authenticate",
             'the log says it does not authenticate')
    st, e = entry(s, alice.token, 'SHARED')
    tap.ok(e is not None and 'error' not in e, "alice's own row still opens")
    log = s.server_log() + s.server_output()
    tap.ok(v1 not in log and v2 not in log, 'no value in the log')

# -- no jwt_secret: plaintext, marked; then a secret seals on first read
with cdm.Stack(config={'auth.jwt_secret': ''}) as s:
    r = s.request('GET', '/api/health')
    tap.ok(any('jwt_secret' in w for w in r.json.get('warnings', [])),
           'health warns that there is no jwt_secret')
    tap.like(s.server_log(), r'\*\*\* auth\.jwt_secret is not set', 'a prominent error at start')
    alice = s.new_user('alice')
    v = 'plain-' + 'W5u' * 10
    r = s.request('PUT', '/api/secrets/P', body={'value': v}, token=alice.token)
    tap.is_(r.status, 204, 'PUT without a jwt_secret works')
    tap.is_([(x[3], x[4]) for x in rows(s, alice.id)], [('plain', None)],
            'the row is marked plaintext, no key id')
    st, e = entry(s, alice.token, 'P')
    tap.ok(e is not None and 'error' not in e, 'and it reads')
    tap.is_(rows(s, alice.id)[0][3], 'plain', 'reading without a key leaves it plain')

    s.extra['auth.jwt_secret'] = A
    s.write_config()
    s.restart_server()
    tap.ok(not any('jwt_secret' in w for w in s.request('GET', '/api/health').json.get('warnings', [])),
           'with a secret: no warning')
    relogin(s, alice)
    st, e = entry(s, alice.token, 'P')
    tap.ok(e is not None and 'error' not in e, 'first read after the secret is set')
    row = rows(s, alice.id)[0]
    tap.is_(row[3], 'xchacha20poly1305', '... sealed the row')
    tap.ok(row[4] and len(row[4]) == 16, '... with a key id')
    tap.like(s.server_log(), r"secret 'P' encrypted under the current key", 'the log says so')
    s.stop_server()
    tap.ok(v.encode() not in db_bytes(s), 'no plaintext left in the db files after sealing')

tap.done()
