#!/bin/sh
# test_diag_agent.sh — the agent commands' own diagnostics (E1101-E1111), as
# JSON with --json and with the exit code 1: one case each (E1104, E1106 and
# the rest of E1105 and E1111 are also in test_tune.sh and test_loopback.sh).
set -u
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
# expect CODE COMMAND...: exit 1 and the first diagnostic of the JSON is CODE
expect() {
    code=$1
    shift
    "$@" --json >"$T/out.json" 2>"$T/err.txt"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "^{\"command\":\"[a-z]*\",\"ok\":false,.*\"diagnostics\":\[{\"code\":\"$code\"" "$T/out.json"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $code: exit $rc: $(cat "$T/out.json") $(cat "$T/err.txt")"
        fail=$((fail + 1))
    fi
}
echo '{' >"$T/bad.json"
echo '{"name": "x", "shapes": ["N=1"]}' >"$T/noref.json"
echo '{"name": "x", "reference": "r.tir", "shapes": []}' >"$T/noshapes.json"
echo '[1' >"$T/lessons.json"
TASK=$SRC/tests/agent/task_vector_add.json
export KEYVAR=not-a-real-key
expect E1101 "$CAKEC" agent "$T/missing.json" --model m --key-env KEYVAR
expect E1101 "$CAKEC" agent "$T/bad.json" --model m --key-env KEYVAR
expect E1102 "$CAKEC" agent "$T/noref.json" --model m --key-env KEYVAR
expect E1102 "$CAKEC" agent "$T/noshapes.json" --model m --key-env KEYVAR
expect E1101 "$CAKEC" mcp --task "$T/bad.json"
expect E1103 "$CAKEC" tune "$SRC/examples/rmsnorm.tir" --space VEC
expect E1103 "$CAKEC" tune "$SRC/examples/rmsnorm.tir"
expect E1107 "$CAKEC" agent "$TASK" --model m --key-env CAKE_NO_SUCH_VARIABLE
expect E1108 "$CAKEC" docs E0801 --docs "$T"
expect E1109 "$CAKEC" docs zzzzqqq
expect E1110 "$CAKEC" lessons "$T/lessons.json"
expect E1110 "$CAKEC" agent "$TASK" --model m --key-env KEYVAR --lessons "$T/lessons.json" --docs "$SRC/docs"
# a closed port: E1105 on every request, then E1111 with the last failure as a note
expect E1111 "$CAKEC" agent "$TASK" --model m --key-env KEYVAR --endpoint http://127.0.0.1:9/v1 \
    --iterations 2 --retries 1 --backoff 0.01 --http-timeout 2 --out "$T/out" --lessons "$T/l.json" \
    --docs "$SRC/docs"
grep -q '"message":"the last failed request: E1105: request to http://127.0.0.1:9/v1 failed after 2 attempts' \
    "$T/out.json" && pass=$((pass + 1)) || { echo "FAIL: no E1105 note: $(cat "$T/out.json")"; fail=$((fail + 1)); }
[ "$(grep -c '"event":"error","code":"E1105"\|"code":"E1105"' "$T/out/trajectory.jsonl")" -eq 2 ] \
    && pass=$((pass + 1)) || { echo "FAIL: trajectory: $(cat "$T/out/trajectory.jsonl")"; fail=$((fail + 1)); }
grep -q "not-a-real-key" "$T/out/trajectory.jsonl" "$T/out/report.json" "$T/out.json" "$T/err.txt" \
    && { echo "FAIL: the key was written"; fail=$((fail + 1)); } || pass=$((pass + 1))
# the text form of one of them
"$CAKEC" docs zzzzqqq 2>"$T/err.txt"
grep -q "^cakec: error\[E1109\]: no documentation section for \`zzzzqqq\`" "$T/err.txt" && pass=$((pass + 1)) \
    || { echo "FAIL: text: $(cat "$T/err.txt")"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
