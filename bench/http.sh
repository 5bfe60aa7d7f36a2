#!/bin/sh
# http.sh -- requests/s and latency through nginx (TLS) with wrk:
# codumentor (FastCGI) vs the FastAPI + uvicorn peer, GET /api/health and an
# authenticated GET /api/conversations. Options go to bench/httpbench.py
# (--help); e.g. bench/http.sh --runs 1 --duration 5.
#
# Environment: CDM_BUILDDIR (dir with the codumentor binary; default the
# current directory if it holds one, else /tmp/benchbuild), CDM_NGINX.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for tool in wrk /usr/bin/python3; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "http.sh: $tool not found; run scripts/install-deps --bench" >&2
		exit 1
	}
done
/usr/bin/python3 -c 'import fastapi, uvicorn' 2>/dev/null || {
	echo "http.sh: python3-fastapi/python3-uvicorn missing; run scripts/install-deps --bench" >&2
	exit 1
}
exec timeout 900 /usr/bin/python3 "$here/httpbench.py" "$@"
