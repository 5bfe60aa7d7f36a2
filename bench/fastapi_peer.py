"""fastapi_peer.py -- the comparison stack for bench/http.sh: the two
benchmarked routes of the Codumentor API written the way this kind of product
is usually written, as a FastAPI app served by uvicorn.

    GET /api/health          {"status":"ok","version":...,"sandbox":{...},"warnings":[]}
    GET /api/conversations   Bearer JWT (HS256), then the caller's conversations

It reads the SAME SQLite database (sql/001_init.sql) as the codumentor
instance it is compared with, read-only, and accepts the tokens that instance
issues: the check mirrors src/jwt.c and src/api.c authenticate() -- header
must name HS256 (typ, if present, JWT), HMAC-SHA256 signature compared in
constant time, sub/iat/exp present and integers, exp in the future (nbf/iat
with 60 s leeway), then the user looked up by id (401 if gone), then

    SELECT id,title,model,created_at,updated_at FROM conversations
    WHERE user_id=? ORDER BY updated_at DESC, id LIMIT 1000

Errors have the API's shape: 401 {"error":{"code":"unauthorized",...}} with
WWW-Authenticate: Bearer.

Environment:
    PEER_DB          path of codumentor.db (required)
    PEER_JWT_SECRET  the instance's auth.jwt_secret (required)
    PEER_VERSION     the version string health reports (default "peer")

Run (what bench/http.py does):
    PEER_DB=... PEER_JWT_SECRET=... python3 -m uvicorn --app-dir bench \
        --uds /tmp/peer.sock --workers 2 fastapi_peer:app

Standard library besides FastAPI. The database routes are plain `def`
handlers (FastAPI runs them in its thread pool, as its documentation says to
do for blocking I/O such as sqlite3); each pool thread keeps one read-only
connection, like each codumentor thread keeps its own.
"""

import base64
import binascii
import hashlib
import hmac
import json
import os
import sqlite3
import threading
import time

from fastapi import FastAPI, Header
from fastapi.responses import JSONResponse

DB_PATH = os.environ.get('PEER_DB', '')
SECRET = os.environ.get('PEER_JWT_SECRET', '').encode()
VERSION = os.environ.get('PEER_VERSION', 'peer')
LEEWAY = 60
MAX_TOKEN = 4096

app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

_local = threading.local()


def db():
    conn = getattr(_local, 'conn', None)
    if conn is None:
        conn = sqlite3.connect('file:%s?mode=ro' % DB_PATH, uri=True,
                               check_same_thread=False)
        conn.execute('PRAGMA busy_timeout=5000')
        _local.conn = conn
    return conn


def unauthorized(message='The token is invalid or has expired.'):
    return JSONResponse({'error': {'code': 'unauthorized', 'message': message}},
                        status_code=401, headers={'WWW-Authenticate': 'Bearer'})


def b64url(part):
    s = part.encode('ascii')
    return base64.urlsafe_b64decode(s + b'=' * (-len(s) % 4))


def verify(token, now):
    """The subject (user id) of a valid token, else None."""
    if not token or len(token) > MAX_TOKEN:
        return None
    parts = token.split('.')
    if len(parts) != 3:
        return None
    h, p, sig = parts
    try:
        header = json.loads(b64url(h))
        if not isinstance(header, dict) or header.get('alg') != 'HS256':
            return None
        if 'typ' in header and header['typ'] != 'JWT':
            return None
        mac = b64url(sig)
        good = hmac.new(SECRET, (h + '.' + p).encode('ascii'), hashlib.sha256).digest()
        if not hmac.compare_digest(mac, good):
            return None
        claims = json.loads(b64url(p))
    except (ValueError, UnicodeError, binascii.Error):
        return None
    if not isinstance(claims, dict):
        return None
    sub = claims.get('sub')
    if not isinstance(sub, str) or not sub:
        return None
    ints = {}
    for name in ('iat', 'exp', 'nbf'):
        v = claims.get(name)
        if v is None:
            if name != 'nbf':
                return None
            continue
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return None
        ints[name] = v
    if ints['exp'] <= now:
        return None
    if ints.get('nbf', 0) - now > LEEWAY or ints['iat'] - now > LEEWAY:
        return None
    return sub


def authenticate(authorization):
    """(user row, None) or (None, the 401 response)."""
    if not authorization or authorization[:7].lower() != 'bearer ' or len(authorization) == 7:
        return None, unauthorized('A bearer token is required.')
    sub = verify(authorization[7:], int(time.time()))
    if sub is None:
        return None, unauthorized()
    row = db().execute('SELECT id, username, is_admin, created_at FROM users WHERE id = ?',
                       (sub,)).fetchone()
    if row is None:
        return None, unauthorized()
    return row, None


@app.get('/api/health')
async def health():
    return {'status': 'ok', 'version': VERSION,
            'sandbox': {'available': False,
                        'reason': 'the sandbox helper is not part of this build; '
                                  'execution tools are disabled'},
            'warnings': []}


@app.get('/api/conversations')
def conversations(authorization: str = Header(default=None)):
    user, err = authenticate(authorization)
    if err is not None:
        return err
    rows = db().execute(
        'SELECT id,title,model,created_at,updated_at FROM conversations '
        'WHERE user_id=? ORDER BY updated_at DESC, id LIMIT 1000', (user[0],)).fetchall()
    return {'conversations': [
        {'id': r[0], 'title': r[1], 'model': r[2], 'created_at': r[3], 'updated_at': r[4]}
        for r in rows]}
