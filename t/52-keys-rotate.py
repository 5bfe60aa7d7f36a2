#!/usr/bin/python3
# 52-keys-rotate: `codumentor keys rotate` seals everything under the
# current key at once and counts what it did; a value no configured key
# opens is named, kept, and does not stop the others (exit 1); without a
# jwt_secret there is nothing to rotate to.
import os
import sqlite3
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

A, B, C = 'A-' + 'r0t' * 12, 'B-' + 'r0t' * 12, 'C-' + 'r0t' * 12


def key_ids(s):
    db = sqlite3.connect(s.db_path(), timeout=30)
    try:
        return dict(((u, k, n), kid) for u, k, n, kid in
                    db.execute('SELECT user_id, kind, name, key_id FROM sealed_values'))
    finally:
        db.close()


def counts(out):
    return dict((k.strip(), int(v)) for k, v in
                (line.split(':', 1) for line in out.splitlines() if ':' in line))


with cdm.Stack(config={'auth.jwt_secret': '', 'llm.user_base_urls': 'http://127.0.0.1:9/'}) as s:
    alice, bob = s.new_user('alice'), s.new_user('bob')
    r = s.cli('keys', 'rotate')
    tap.is_(r.returncode, 1, 'no jwt_secret: exit 1')
    tap.like(r.stderr, r'auth\.jwt_secret is not set', '... and says why')
    s.request('PUT', '/api/secrets/PLAIN1', body={'value': 'plain-value-0001'}, token=alice.token)

    s.extra['auth.jwt_secret'] = A
    s.write_config()
    s.restart_server()
    for u in (alice, bob):
        u.token = s.login(u.name, u.password)
    for i in range(3):
        s.request('PUT', '/api/secrets/A%d' % i, body={'value': 'value-under-A-%d' % i}, token=alice.token)
    s.request('PUT', '/api/secrets/BOBS', body={'value': 'value-of-bob-1'}, token=bob.token)
    s.request('PUT', '/api/profiles/mine', body={'base_url': 'http://127.0.0.1:9/v1', 'model': 'm',
                                                 'api_key': 'sk-profile-key-123'}, token=bob.token)
    s.stop_server()

    # rotate to B with A previous, while the server is down
    s.extra['auth.jwt_secret'] = B
    s.extra['auth.previous_jwt_secrets'] = [A]
    s.write_config()
    before = key_ids(s)
    r = s.cli('keys', 'rotate')
    tap.is_(r.returncode, 0, 'keys rotate: exit 0') or tap.diag(r.stderr)
    c = counts(r.stdout)
    tap.is_(c, {'re-encrypted': 5, 'already current': 0, 'plaintext encrypted': 1, 'failed': 0},
            'counts: 4 secrets + 1 profile key re-encrypted, 1 plaintext sealed') or tap.diag(r.stdout)
    after = key_ids(s)
    tap.is_(len(set(after.values())), 1, 'everything under one key id now')
    tap.ok(all(after[k] != before[k] for k in before), 'every key id changed')

    r = s.cli('keys', 'rotate')
    tap.is_(counts(r.stdout), {'re-encrypted': 0, 'already current': 6, 'plaintext encrypted': 0,
                               'failed': 0}, 'a second run finds everything current')

    # one value under a key nobody has: it is named, kept, others go on
    s.extra['auth.jwt_secret'] = C
    s.extra['auth.previous_jwt_secrets'] = []
    s.write_config()
    s.start_server()
    bob.token = s.login(bob.name, bob.password)
    s.request('PUT', '/api/secrets/UNDER_C', body={'value': 'value-under-C-1'}, token=bob.token)
    s.stop_server()
    s.extra['auth.jwt_secret'] = A
    s.extra['auth.previous_jwt_secrets'] = [B]
    s.write_config()
    r = s.cli('keys', 'rotate')
    tap.is_(r.returncode, 1, 'a value that does not open: exit 1')
    tap.is_(counts(r.stdout), {'re-encrypted': 6, 'already current': 0, 'plaintext encrypted': 0,
                               'failed': 1}, 'the others were re-encrypted anyway') or tap.diag(r.stdout)
    tap.like(r.stderr, r"user bob: secret 'UNDER_C' was not re-encrypted: .*neither auth\.jwt_secret",
             'the failure is named, with the reason')
    tap.ok('UNDER_C' in [k[2] for k in key_ids(s)], 'the unreadable value is kept')
    tap.ok('value-under' not in r.stdout + r.stderr + s.server_log(), 'no value printed or logged')

    r = s.cli('keys')
    tap.is_(r.returncode, 2, 'keys without a subcommand: usage, exit 2')

tap.done()
