#!/bin/sh
# test_docs.sh — the docs cannot drift (docs_test.py says how): every `cakec` command
# example of README.md and docs/*.md runs without a crash, and every claim that
# something works or is not supported is executed (tests/docs/claims.tsv).
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
exec python3 "$ROOT/tests/docs/docs_test.py" "$CAKEC" "$ROOT"
