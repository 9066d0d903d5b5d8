#!/bin/sh
# test_mcp.sh — an MCP conversation with `cakec mcp` over pipes (mcp_conversation.py).
set -eu
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
exec timeout 120 python3 "$SRC/tests/agent/mcp_conversation.py" "$CAKEC" "$SRC"
