#!/bin/sh
# memory.sh -- resident memory of `codumentor api`: idle after start, after
# some requests (bench/memory.py), and per open SSE stream (bench/sse.py with
# 500 streams, opened and closed 3 times to tell retention from a leak).
# Usage: bench/memory.sh [STREAMS]    (default 500)
# Environment: CDM_BUILDDIR (dir with the codumentor binary), CDM_NGINX.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-500}
timeout 300 /usr/bin/python3 "$here/memory.py"
echo
timeout 600 /usr/bin/python3 "$here/sse.py" --streams "$n" --events 0 --cycles 3
