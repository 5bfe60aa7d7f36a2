#!/usr/bin/python3
# 26-lifecycle: what the process leaves on disk (socket 0660, directories
# 0700, files 0600), what it logs (one line per request, never a secret),
# SIGHUP reopens the log for logrotate, and SIGTERM with streams open exits
# 0 in time and loses nothing.
import os
import signal
import stat
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402
from cdm import random_id   # noqa: E402

GRACE = 3


def mode(path):
    try:
        return oct(stat.S_IMODE(os.stat(path).st_mode))
    except OSError as e:
        return e.strerror


# The server makes instance_dir itself, so its mode is the server's doing.
with cdm.Stack(config={'server.shutdown_grace_seconds': GRACE, 'log.level': 'info'},
               make_instance=False) as s:
    inst = s.instance_dir
    tap.is_(mode(s.socket_path), oct(0o660), 'socket is 0660')
    tap.ok(stat.S_ISSOCK(os.stat(s.socket_path).st_mode), 'it is a socket')
    if s.root:
        tap.is_(os.stat(s.socket_path).st_gid, s.www_gid, 'socket group is server.socket_group (www-data)')
    for d in ('', 'data', 'logs'):
        tap.is_(mode(os.path.join(inst, d)), oct(0o700), 'instance/%s is 0700' % d)
    tap.is_(mode(s.db_path()), oct(0o600), 'data/codumentor.db is 0600')
    tap.is_(mode(s.log_path()), oct(0o600), 'logs/codumentor.log is 0600')

    # -- the request log: one line each, no secrets
    pw = 'pw-' + random_id()
    s.add_user('logger', pw)
    tok = s.login('logger', pw)
    marker = 'body-' + random_id()
    cid = s.create_conversation(tok, marker)
    s.post_message(tok, cid, marker)
    ghost = random_id()
    s.request('GET', '/api/conversations/' + ghost, token=tok)
    time.sleep(0.3)
    log = s.server_log()
    lines = [ln for ln in log.splitlines() if ghost in ln]
    tap.is_(len(lines), 1, 'one log line for one request')
    tap.ok(lines and all(w in lines[0] for w in ('GET', '/api/conversations/' + ghost, '404')),
           'it has method, path and status') or tap.diag(repr(lines))
    tap.ok(any('POST' in ln and '/api/auth/login' in ln and '200' in ln for ln in log.splitlines()),
           'the login request is logged')
    tap.ok(tok not in log and tok.split('.')[2] not in log, 'the log never contains the token')
    tap.ok(pw not in log, 'the log never contains the password')
    tap.ok(marker not in log, 'the log never contains a request body')
    tap.ok(s.jwt_secret not in log and s.jwt_secret not in s.server_output(),
           'nor the jwt secret')

    # -- SIGHUP reopens the log (logrotate renames, then signals)
    os.rename(s.log_path(), s.log_path() + '.1')
    s.signal_server(signal.SIGHUP)
    after = random_id()

    def reopened():
        s.request('GET', '/api/conversations/' + after, token=tok)
        return os.path.exists(s.log_path()) and after in s.server_log()
    tap.ok(cdm.wait_for(reopened, 5, interval=0.5), 'after SIGHUP a new log file gets the new request lines')
    tap.is_(mode(s.log_path()), oct(0o600), 'the new log file is 0600')
    with open(s.log_path() + '.1') as f:
        tap.ok(after not in f.read(), 'the renamed file gets nothing more')
    tap.is_(s.request('GET', '/api/health').status, 200, 'the server is still up after SIGHUP')

    # -- SIGTERM with five streams open
    for i in range(3):
        s.post_message(tok, cid, 'kept %d' % i)
    msgs = (s.request('GET', '/api/conversations/%s/messages' % cid, token=tok).json or {}).get('messages')
    streams = s.open_streams(5, cid, tok)
    tap.is_([x.status for x in streams], [200] * 5, 'five streams open')
    t0 = time.monotonic()
    rc = s.stop_server(signal.SIGTERM, timeout=GRACE + 2)
    took = time.monotonic() - t0
    tap.is_(rc, 0, 'SIGTERM with five open streams: exit 0')
    tap.ok(took <= GRACE + 2, 'within shutdown_grace_seconds + 2 s (%.1f s)' % took)
    s.start_server()
    r = s.request('GET', '/api/conversations/' + cid, token=tok)
    tap.is_((r.status, (r.json or {}).get('title')), (200, marker), 'the conversation is there after restart')
    r = s.request('GET', '/api/conversations/%s/messages' % cid, token=tok)
    tap.is_(((r.json or {}).get('messages') or [])[:len(msgs or [])], msgs, 'and all its messages')
    tap.is_(mode(s.socket_path), oct(0o660), 'the new socket is 0660 too')
tap.done()
