#!/bin/bash
# run_fp8.sh — the fp8 and code-quality device session in one call (builds nothing
# heavy there; ~100 s; honours $DEADLINE seconds):
#   1. bitexact  tests/gpu/test_fp8_bitexact.sh: every bf16/f16 pattern and a dense f32
#                sample to e4m3/e5m2 and every fp8 pattern back, cakec's kernels on the
#                GPU against the oracle's rounding, bit for bit (cc builds ir/numfmt.c)
#   2. quant     examples/fp8_quant.tir: run --check at the checker's shapes, at N not a
#                multiple of 8 and N > 8192, and at 16384 x 8192; run --bench there beside
#                torch eager, torch.compile and the device copy of the same bytes
#                (bench/device/fp8_peers.py)
#   3. sass      cuobjdump -sass excerpts of fp8_quant, softmax, layernorm, rmsnorm,
#                before and after (instruction counts and the masked-access code)
#   4. examples  every example: run --bench with the code-generation changes of this
#                branch switched off (CAKE_NO_PREDICATE=1 CAKE_NO_CONTRACT=1
#                CAKE_NO_PACKED=1 CAKE_NO_TREE=1: the "before") and on ("after"), and
#                run --check after (as many as the deadline allows, most telling first)
#   5. sanitize  compute-sanitizer memcheck and racecheck of fp8_quant (when time is left)
#   usage (on the device machine, from the repo root):  bash bench/device/run_fp8.sh
#   expects .carry/ from bench/device/carry.sh. Output under $OUT: fp8_log.txt,
#   fp8_bitexact.json/.txt, quant_*.json, fp8_peers.json, ex_*.json, sass/*.txt,
#   fp8_summary.md (printed last). FP8_STEPS picks steps (default "bitexact quant
#   sass examples sanitize").
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
C=${CAKEC:-.carry/cakec}
export CAKEC=$C
O=${OUT:-/tmp/cake-out}
mkdir -p "$O/sass"
LOG=$O/fp8_log.txt
: > "$LOG"
DEADLINE=${DEADLINE:-100}
STEPS=${FP8_STEPS:-"bitexact quant sass examples sanitize"}
T0=$SECONDS
W=$(mktemp -d "${TMPDIR:-/tmp}/cake-fp8.XXXXXX")
trap 'rm -rf "$W"' EXIT
BEFORE="CAKE_NO_PREDICATE=1 CAKE_NO_CONTRACT=1 CAKE_NO_PACKED=1 CAKE_NO_TREE=1"
say() { echo "$@" | tee -a "$LOG" >&2; }
wants() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
left() { echo $((DEADLINE - (SECONDS - T0) - 4)); }
# to LIMIT OUT CMD...: CMD with stdout+stderr to OUT, killed after LIMIT s (or what is left)
to() {
    local limit=$1 out=$2 l
    shift 2
    l=$(left)
    [ "$l" -lt "$limit" ] && limit=$l
    if [ "$limit" -lt 3 ]; then
        say "skip (out of time): $*"
        echo '{"skipped": "out of time"}' > "$out"
        return 124
    fi
    timeout -k 2 "$limit" "$@" > "$out" 2>&1
    local rc=$?
    say "exit $rc at $((SECONDS - T0)) s: ${*:1:7}"
    return $rc
}
say "cakec: $("$C" --version 2>&1 | head -1); gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1 | head -1)"

if wants bitexact; then
    say "== bitexact (at $((SECONDS - T0)) s)"
    to 40 "$O/fp8_bitexact.txt" sh tests/gpu/test_fp8_bitexact.sh "$O/fp8_bitexact.json"
fi

Q=examples/fp8_quant.tir
if wants quant && [ -f $Q ]; then
    say "== quant (at $((SECONDS - T0)) s)"
    to 30 "$O/quant_check_default.json" "$C" run $Q --check --json
    to 20 "$O/quant_check_N10007.json" "$C" run $Q --check --shape M=37,N=10007 --json
    to 20 "$O/quant_check_N12296.json" "$C" run $Q --check --shape M=64,N=12296 --json
    to 20 "$O/quant_check_N8.json" "$C" run $Q --check --shape M=5,N=8 --json
    to 30 "$O/quant_check_big.json" "$C" run $Q --check --shape M=16384,N=8192 --json
    to 20 "$O/quant_bench.json" "$C" run $Q --bench --shape M=16384,N=8192 --json
    to 40 "$O/fp8_peers.json" python3 bench/device/fp8_peers.py 16384 8192
    for v in THREADS=512,ITERS=2 THREADS=1024,ITERS=1 THREADS=128,ITERS=8; do
        [ "$(left)" -lt 45 ] && break
        to 12 "$O/quant_variant_${v//[=,]/_}.json" "$C" run $Q --bench --shape M=16384,N=8192 --set $v --runs 20 --json
    done
fi

if wants sass; then
    say "== sass (at $((SECONDS - T0)) s)"
    for e in fp8_quant softmax layernorm rmsnorm; do
        f=examples/$e.tir
        [ -f "$f" ] || continue
        for mode in before after; do
            if [ $mode = before ]; then env $BEFORE "$C" "$f" --target sm_90a -o "$W/$e.$mode.ptx" 2>> "$LOG"
            else "$C" "$f" --target sm_90a -o "$W/$e.$mode.ptx" 2>> "$LOG"; fi
            ptxas -arch=sm_90a -v "$W/$e.$mode.ptx" -o "$W/$e.$mode.cubin" > "$O/sass/${e}_$mode.ptxas.txt" 2>&1 &&
                cuobjdump -sass "$W/$e.$mode.cubin" > "$W/$e.$mode.sass" 2>&1
            [ -f "$W/$e.$mode.sass" ] || continue
            head -c 100000 "$W/$e.$mode.sass" > "$O/sass/${e}_$mode.sass.txt"
        done
    done
fi

# the examples, most telling first; the list stops when time runs out
EXAMPLES="fp8_quant softmax layernorm rmsnorm cross_entropy vector_add gemm_bias_act flash_attn_fwd gemm_sm90 copy gemm_sm80 gemm_fp8 gemm_sm90_persistent flash_attn_fwd_d64"
if wants examples; then
    say "== examples before/after (at $((SECONDS - T0)) s)"
    for e in $EXAMPLES; do
        f=examples/$e.tir
        [ -f "$f" ] || continue
        [ "$(left)" -lt 25 ] && { say "examples: out of time before $e"; break; }
        to 12 "$O/ex_${e}_before.json" env $BEFORE "$C" run "$f" --bench --runs 20 --json
        to 12 "$O/ex_${e}_after.json" "$C" run "$f" --bench --runs 20 --json
        to 15 "$O/ex_${e}_check.json" "$C" run "$f" --check --json
    done
fi

# compute-sanitizer on the quantizer (a block reduction through shared memory), if time is left
if wants sanitize && [ -f $Q ] && command -v compute-sanitizer > /dev/null; then
    say "== sanitize (at $((SECONDS - T0)) s)"
    for tool in memcheck racecheck; do
        [ "$(left)" -lt 12 ] && break
        to 20 "$O/quant_$tool.txt" compute-sanitizer --tool $tool --error-exitcode 9 \
            "$C" run $Q --check --shape M=4,N=8192
    done
fi

python3 - "$O" << 'PY' > "$O/fp8_summary.md"
import glob, json, os, re, sys
o = sys.argv[1]
def load(p):
    try:
        txt = open(p).read()
        return json.loads(txt[txt.index("{"):])
    except Exception as e:
        return {"error": str(e)[:120]}
print("# fp8 / codegen device summary\n")
b = load(f"{o}/fp8_bitexact.json")
if "cases" in b:
    bad = [c["case"] for c in b["cases"] if not c["ok"]]
    print(f"bit-exact fp8 vs oracle: {'PASS' if b['pass'] else 'FAIL'}: {b['conversions']} conversions, "
          f"{len(b['cases'])} cases{', failing: ' + ', '.join(bad) if bad else ''}")
    nano = sum(c["nan_other_pattern"] for c in b["cases"])
    if nano:
        print(f"  ({nano} NaN inputs gave another NaN pattern than the oracle's canonical one)")
else:
    print("bit-exact fp8: no result (" + open(f"{o}/fp8_bitexact.txt").read()[-300:].replace("\n", " ") + ")"
          if os.path.exists(f"{o}/fp8_bitexact.txt") else "bit-exact fp8: not run")
print("\n| fp8_quant check | result |\n|---|---|")
for p in sorted(glob.glob(f"{o}/quant_check_*.json")):
    d = load(p)
    ch = d.get("check", [])
    res = ", ".join(f"{c.get('shape')}: {c.get('status')}" for c in ch) or \
          "; ".join(x.get("code", "") + " " + x.get("message", "")[:100] for x in d.get("diagnostics", [])) or str(d)[:100]
    print(f"| {os.path.basename(p)[12:-5]} | {res} |")
q, pe = load(f"{o}/quant_bench.json").get("bench", {}), load(f"{o}/fp8_peers.json")
print("\n| fp8_quant 16384x8192 | ms | GB/s | vs copy |\n|---|---|---|---|")
cp = pe.get("copy", {}).get("gbps")
rows = [("cakec", q.get("median_ms"), (q.get("bytes") or 0) / q["median_ms"] / 1e6 if q.get("median_ms") else None)]
for k in ("torch_eager", "torch_compile"):
    rows.append((k, pe.get(k, {}).get("ms"), pe.get(k, {}).get("gbps")))
rows.append(("device copy (same bytes)", pe.get("copy", {}).get("ms"), cp))
for name, ms, g in rows:
    ratio = f"{g / cp:.3f}" if g and cp else "-"
    print(f"| {name} | {ms if ms is None else f'{ms:.4f}'} | {g if g is None else f'{g:.0f}'} | {ratio} |")
if q:
    print(f"\ncakec fp8_quant: registers {q.get('registers')}, local bytes {q.get('local_bytes')}")
for p in sorted(glob.glob(f"{o}/quant_variant_*.json")):
    b = load(p).get("bench", {})
    if b.get("median_ms"):
        g = b["bytes"] / b["median_ms"] / 1e6
        print(f"variant {os.path.basename(p)[14:-5]}: {b['median_ms']:.4f} ms, {g:.0f} GB/s"
              f"{f', {g / cp:.3f} of copy' if cp else ''}")
print("\n| example | before ms | after ms | after/before | check |\n|---|---|---|---|---|")
for p in sorted(glob.glob(f"{o}/ex_*_after.json")):
    e = os.path.basename(p)[3:-11]
    a = load(p).get("bench", {}).get("median_ms")
    bf = load(f"{o}/ex_{e}_before.json").get("bench", {}).get("median_ms")
    ch = load(f"{o}/ex_{e}_check.json").get("check", [])
    st = "ok" if ch and all(c.get("ok") for c in ch) else ("FAIL" if ch else "-")
    r = f"{a / bf:.3f}" if a and bf else "-"
    print(f"| {e} | {bf if bf is None else f'{bf:.4f}'} | {a if a is None else f'{a:.4f}'} | {r} | {st} |")
for t in ("memcheck", "racecheck"):
    p = f"{o}/quant_{t}.txt"
    if os.path.exists(p):
        s = open(p).read()
        m = re.search(r"ERROR SUMMARY: (\d+) error", s)
        print(f"\ncompute-sanitizer {t} fp8_quant M=4,N=8192: {m.group(0) if m else s[-200:]}")
print("\n| SASS | mode | instrs | FFMA | FMUL+FADD | BRA | predicated LDG/STG | F2FP | local |\n|---|---|---|---|---|---|---|---|---|")
for p in sorted(glob.glob(f"{o}/sass/*.sass.txt")):
    s = open(p).read()
    ins = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)", s)
    ops = [i[1] for i in ins]
    cnt = lambda pre: sum(1 for x in ops if x.startswith(pre))
    pred = sum(1 for i in ins if i[0] and (i[1].startswith("LDG") or i[1].startswith("STG")))
    name = os.path.basename(p)[:-9]
    e, mode = name.rsplit("_", 1)
    print(f"| {e} | {mode} | {len(ops)} | {cnt('FFMA')} | {cnt('FMUL') + cnt('FADD')} | {cnt('BRA')} | {pred} | "
          f"{cnt('F2FP')} | {cnt('LDL') + cnt('STL')} |")
PY
say "done in $((SECONDS - T0)) s"
cat "$O/fp8_summary.md"
