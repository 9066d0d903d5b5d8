#!/bin/sh
# test_heldout.sh — the cost model's calibration cases (bench/cost/cases.tsv) and its
# fit (`cakec calibrate`, docs/cost-model.md §5): every held-out kernel of
# tests/cost/heldout/ verifies, every case costs (exit 0, a verdict), the fit on a
# synthetic measurement (training cases 1.3x their prediction) recovers it and writes
# a constants file with the command, the date and both errors, which `cakec cost`
# reads; the compiled-in calibration is found from another working directory.
# Prints `N passed, N failed`.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
TMP=${TMPDIR:-/tmp}/cake_heldout_test.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT

n=0
for f in "$ROOT"/tests/cost/heldout/*.tir; do
    n=$((n + 1))
    if "$CAKEC" check "$f" > /dev/null 2> "$TMP/err"; then ok; else bad "$f does not verify: $(head -3 "$TMP/err")"; fi
done
[ "$n" -ge 20 ] && ok || bad "only $n held-out kernels (>= 20)"

# every case: cost at its shape; the synthetic measurement for the fit
: > "$TMP/m.jsonl"
cases=0
grep -v '^#' "$ROOT/bench/cost/cases.tsv" | while IFS="$(printf '\t')" read -r split fam file kern set shapes; do
    [ -n "$split" ] || continue
    echo "$shapes" | tr ';' '\n' | while read -r shape; do
        set -- cost "$ROOT/$file" --shape "$shape" --device h200 --json
        [ "$kern" != - ] && set -- "$@" --kernel "$kern"
        [ "$set" != - ] && set -- "$@" --set "$set"
        if ! CAKE_COST_DIR=none "$CAKEC" "$@" > "$TMP/c.json" 2> "$TMP/err"; then
            echo "FAIL: cost $file $set $shape: $(head -3 "$TMP/err")"
            continue
        fi
        python3 - "$TMP/c.json" "$split" "$fam" "$ROOT/$file" "$kern" "$set" "$shape" >> "$TMP/m.jsonl" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["cost"]
split, fam, f, k, st, sh = sys.argv[2:]
assert c["verdict"] in ("model", "measure")
print(json.dumps({"split": split, "family": fam, "file": f, "kernel_arg": k, "set": st, "shape": sh,
                  "meas_ms": c["time_ms"] * (1.3 if split == "train" else 1.0)}))
PY
    done
done > "$TMP/cases.out"
if grep -q FAIL "$TMP/cases.out"; then bad "cases: $(grep FAIL "$TMP/cases.out" | head -3)"; else ok; fi
[ "$(wc -l < "$TMP/m.jsonl")" -ge 120 ] && ok || bad "only $(wc -l < "$TMP/m.jsonl") cases cost"

# the fit
if CAKE_COST_DIR=none "$CAKEC" calibrate "$TMP/m.jsonl" --device h200 -o "$TMP/h200.json" --json > "$TMP/fit.json"; then ok
else bad "calibrate failed: $(head -c 300 "$TMP/fit.json")"; fi
python3 - "$TMP/fit.json" "$TMP/h200.json" > "$TMP/fit.out" 2>&1 <<'PY' && ok || bad "fit: $(cat "$TMP/fit.out")"
import json, sys
fit, k = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for key in ("device", "date", "command", "constants", "calibrated", "train", "heldout"):
    assert key in k, key
assert k["train"]["cases"] >= 20 and k["heldout"]["cases"] >= 60, (k["train"], k["heldout"])
assert k["train"]["median_abs_err"] < 0.1, k["train"]          # the 1.3x is absorbed by the constants
assert k.get("outside", {}).get("cases", 0) >= 15, k.get("outside")   # tests/outside/kernels, apart
assert k.get("fresh", {}).get("cases", 0) >= 20, k.get("fresh")   # new shapes of the held-out kernels
assert len(fit["cases"]) == sum(k[s]["cases"] for s in ("train", "heldout", "outside", "fresh"))
assert all("cost" in c for c in fit["cases"])
PY
# cakec cost reads the fitted file; its families decide the verdict
cp "$TMP/h200.json" "$TMP/dir.json" 2>/dev/null
mkdir -p "$TMP/cal" && cp "$TMP/h200.json" "$TMP/cal/h200.json"
CAKE_COST_DIR="$TMP/cal" "$CAKEC" cost "$ROOT/examples/rmsnorm.tir" --device h200 --json > "$TMP/r.json" &&
    grep -q "cakec calibrate\|calibration: $TMP/cal" "$TMP/r.json" && ok || bad "cost does not read the fitted file"
# from another working directory: the compiled-in calibration
(cd "$TMP" && unset CAKE_COST_DIR && "$CAKEC" cost "$ROOT/examples/rmsnorm.tir" --device h200 --json) > "$TMP/r2.json" &&
    grep -q "compiled in" "$TMP/r2.json" && ok || bad "the compiled-in calibration is not found outside the repository"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
