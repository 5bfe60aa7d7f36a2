#!/usr/bin/env python3
"""28-fd0: `codumentor api` serves on a listening socket it is handed as fd 0,
as spawn-fcgi, systemd socket activation and mod_fcgid hand it over, instead
of opening its own."""
import os
import socket
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm  # noqa: E402
import tap  # noqa: E402

with cdm.Stack(start=False) as s:
    # The socket is made here, the way spawn-fcgi makes it: bound, 0660,
    # group www-data when root, listening.
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(s.socket_path)
    os.chmod(s.socket_path, 0o660)
    if s.root:
        os.chown(s.socket_path, 0, s.www_gid)
    lsock.listen(64)
    ino = os.stat(s.socket_path).st_ino

    out = open(s.server_out, 'ab')
    env = dict(os.environ)
    env.pop('CODUMENTOR_JWT_SECRET', None)
    s.server = subprocess.Popen([cdm.binary(), '-c', s.config_path, 'api'],
                                stdin=lsock.fileno(), stdout=out,
                                stderr=subprocess.STDOUT, env=env)
    out.close()
    lsock.close()
    s.wait_ready()

    r = s.request('GET', '/api/health')
    tap.is_(r.status, 200, 'health answers through nginx on the inherited socket')
    tap.is_(os.stat(s.socket_path).st_ino, ino,
            'the server kept the socket it was given (did not bind its own)')
    tap.ok(stat.S_IMODE(os.stat(s.socket_path).st_mode) == 0o660,
           'the socket mode is left as the spawner set it')
    tok = s.admin_token()
    r = s.request('POST', '/api/conversations', body={'title': 'fd0'}, token=tok)
    tap.is_(r.status, 201, 'an authenticated request works too')
    tap.ok('passed as fd 0' in s.server_log(), 'the log says which socket it serves')
    tap.is_(s.stop_server(), 0, 'SIGTERM: exit 0')

tap.done()
