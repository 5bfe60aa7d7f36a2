#!/usr/bin/python3
# 36-sandbox-server: the server and its helper through real nginx. At start
# the server creates exactly one process, codumentor-sandbox, and after that
# none: strace on every thread while requests (including an event stream,
# which starts a thread) are served shows no execve, fork or vfork, and only
# clones of threads. /api/health reports the sandbox available. When the
# helper dies, isolation becomes unavailable with the reason (the server
# cannot restart it); when the server stops, the helper goes with it. With
# isolation disabled the server warns at every start.
import os
import re
import shutil
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import sbx   # noqa: E402
import tap   # noqa: E402

sbx.bwrap_or_skip()
seccomp = {'sandbox.seccomp': 'enforce', 'sandbox.seccomp_dir': sbx.BLOBS} \
    if sbx.blobs_present() else {'sandbox.seccomp': 'off'}


children = sbx.children


with cdm.Stack(config=seccomp) as s:
    r = s.request('GET', '/api/health')
    tap.is_(r.json['sandbox'], {'available': True, 'reason': ''}, 'health: sandbox available')
    pid = s.server_pid
    kids = children(pid)
    tap.is_([c[1] for c in kids], ['codumentor-sand'], 'the server\'s only child is the helper')
    helper = kids[0][0] if kids else None

    if not shutil.which('strace'):
        tap.skip('strace is not installed', 3)
    else:
        trace = s.path('strace.out')
        st = subprocess.Popen(['strace', '-f', '-qq', '-o', trace, '-e',
                               'trace=execve,execveat,fork,vfork,clone,clone3,accept,accept4',
                               '-p', str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.0)     # strace attaches to every thread
        tok = s.admin_token()
        conv = s.request('POST', '/api/conversations', {'title': 'x'}, token=tok).json
        streams = [s.open_stream(conv['id'], tok) for _ in range(3)] \
            if hasattr(s, 'open_stream') else []
        for _ in range(5):
            s.request('GET', '/api/health')
            s.request('GET', '/api/conversations', token=tok)
        for es in streams:
            es.close()
        time.sleep(0.5)
        st.send_signal(signal.SIGINT)
        st.wait(timeout=20)
        with open(trace) as f:
            text = f.read()
        calls = re.findall(r'\b(execve|execveat|fork|vfork|clone3?)\(([^\n]*)', text)
        tap.ok(not [c for c in calls if c[0] in ('execve', 'execveat', 'fork', 'vfork')],
               'serving requests: no execve, fork or vfork')
        accepts = re.findall(r'\baccept4?\(', text)
        tap.ok(accepts, 'the trace works: it saw the workers accept %d connections' % len(accepts))
        bad = [c for c in calls if c[0].startswith('clone') and 'CLONE_THREAD' not in c[1]]
        if not tap.ok(not bad, 'serving requests: every clone is a thread'):
            tap.diag(bad[:5])
        tap.is_([c[1] for c in children(pid)], ['codumentor-sand'],
                'still only the helper as a child')

    os.kill(helper, signal.SIGKILL)
    r = cdm.wait_for(lambda: not s.request('GET', '/api/health').json['sandbox']['available'], 10)
    tap.ok(r, 'helper killed: health says unavailable')
    sb = s.request('GET', '/api/health').json['sandbox']
    tap.like(sb['reason'], r'sandbox helper exited', 'helper killed: with the reason')
    tap.like(s.server_log(), r'error the sandbox helper exited', 'helper killed: logged')

with cdm.Stack(config=seccomp) as s:
    helper = children(s.server_pid)[0][0]
    s.stop_server()
    tap.ok(cdm.wait_for(lambda: not os.path.exists('/proc/%d' % helper) or
                        open('/proc/%d/stat' % helper).read().split(') ')[1][0] == 'Z', 10),
           'the helper ends with the server')

conf = dict(seccomp)
conf['workspace_isolation.enabled'] = False
with cdm.Stack(config=conf) as s:
    tap.like(s.server_log(), r'workspace_isolation.enabled is false: agent shell commands run '
             r'directly on the host', 'isolation disabled: a warning at start')
    r = s.request('GET', '/api/health')
    tap.is_(r.json['sandbox']['available'], True, 'isolation disabled: commands can run (host-direct)')
    s.restart_server()
    tap.is_(len(re.findall(r'workspace_isolation.enabled is false', s.server_log())), 2,
            'isolation disabled: the warning again at the next start')

tap.done()
