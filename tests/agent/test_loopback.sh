#!/bin/sh
# test_loopback.sh — `cakec agent` against a loopback HTTP server replaying
# recorded replies in both wire formats (loopback_agent.py, loopback.py).
set -eu
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
exec timeout 280 python3 "$SRC/tests/agent/loopback_agent.py" "$CAKEC" "$SRC"
