#!/bin/sh
# test_library.sh — the repository's library (library/manifest.json) in CI: every
# variant checks (`cakec lib check`), the whole library builds into one artifact
# (`cakec lib build`, PTX: the time is printed; issue 13 asks <= 60 s on the 2-core
# machine), every op dispatches at a few shapes of its range (`lib select`), the
# head-dim-64 attention picks that its `when` rules decide are the ones asserted; the
# dispatch plan (lib_domain.c, lib_fit.c) agrees with the plain definition of dispatch at
# thousands of seeded shapes of every op, untuned and with the repository's tuned table
# (cake_selcheck: tests/lib/selcheck.c).
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-library.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
"$C" lib check library > "$T/check.txt" 2>&1 || { cat "$T/check.txt"; echo "FAIL: lib check library"; exit 1; }
echo "ok: every variant of library/ checks"
# a kernel checked at several bindings (a library's variants) reports each note once
if grep 'note\[' "$T/check.txt" | sort | uniq -d | grep -q .; then
    grep 'note\[' "$T/check.txt" | sort | uniq -cd
    echo "FAIL: lib check library repeats a note"
    fail=1
else
    echo "ok: no note repeated ($(grep -c 'note\[' "$T/check.txt") notes)"
fi
t0=$(date +%s)
"$C" lib build library -o "$T/cake.cakelib" --ptx || { echo "FAIL: lib build library"; exit 1; }
echo "ok: lib build library in $(( $(date +%s) - t0 )) s, $(wc -c < "$T/cake.cakelib") bytes"
SEL=${CAKE_BINARY_DIR:-build}/tests/cake_selcheck
if [ -x "$SEL" ]; then
    "$C" lib build "$T/cake.cakelib" --table bench/device/sweep_table_h200.json -o "$T/tuned.cakelib" > /dev/null ||
        { echo "FAIL: lib build --table sweep_table_h200.json"; exit 1; }
    for a in cake tuned; do
        if "$SEL" "$T/$a.cakelib" 2000 > "$T/sel_$a.txt"; then
            echo "$a: $(tail -1 "$T/sel_$a.txt")"
        else
            cat "$T/sel_$a.txt"
            echo "FAIL: the dispatch plan disagrees with its definition ($a.cakelib)"
            fail=1
        fi
    done
else
    echo "FAIL: no $SEL"
    fail=1
fi
# OP SHAPE [VARIANT]: the shape dispatches, and where VARIANT is given it is the pick (the
# head-dim-64 attention picks the manifest's `when` rules decide, not the cost model:
# flash_attn_fwd_pp3 from 176 tiles of 192 rows and S >= 512, causal: 256 tiles and S >= 2048,
# at both sides of each cut)
while read -r op shape want; do
    if ! "$C" lib select "$T/cake.cakelib" --op "$op" --shape "$shape" > "$T/sel.txt"; then
        echo "FAIL: $op $shape has no variant"
        fail=1
        continue
    fi
    got=$(head -1 "$T/sel.txt" | sed 's/.* -> //; s/ (.*//')
    if [ -z "$want" ] || [ "$got" = "$want" ]; then
        echo "ok: $(head -1 "$T/sel.txt")"
    else
        echo "FAIL: $op $shape -> '$got', want $want"
        fail=1
    fi
done << 'SHAPES'
gemm M=1,N=8,K=64
gemm M=128,N=4096,K=4096
gemm M=8192,N=8192,K=8192
gemm_bias_act M=4096,N=4096,K=4096
gemm_fp8 M=4096,N=4096,K=4096
attention_fwd BH=32,S=4096
attention_fwd_d64 BH=16,S=1024
rmsnorm M=16384,N=1024
rmsnorm M=4096,N=8192
layernorm M=16384,N=1024
softmax M=32768,N=1024
softmax M=4096,N=8192
cross_entropy B=4096,V=32000
attention_fwd_gqa_d64 BH=128,BHK=128,S=1024 sm90_pingpong3_192x128
attention_fwd_gqa_d64 BH=256,BHK=256,S=512 sm90_pingpong3_192x128
attention_fwd_gqa_d64 BH=8,BHK=8,S=1537 sm90_pingpong_128x128
attention_fwd_gqa_d64 BH=8,BHK=8,S=2880 sm90_pingpong_128x192
attention_fwd_gqa_d64 BH=32,BHK=32,S=2880 sm90_pingpong3_192x128
attention_fwd_gqa_d64 BH=256,BHK=256,S=256 sm90_pingpong_128x128_short
attention_fwd_gqa_d64 BH=32,BHK=4,S=2881 sm90_pingpong3_192x128
attention_fwd_gqa_d64 BH=16,BHK=16,S=16384 sm90_pingpong3_192x128
attention_fwd_gqa_d64_causal BH=128,BHK=128,S=1024 sm90_pingpong_128x128
attention_fwd_gqa_d64_causal BH=256,BHK=32,S=2048 sm90_pingpong3_192x128
attention_fwd_gqa_d64_causal BH=8,BHK=8,S=4096 sm90_pingpong_128x128_few
attention_fwd_gqa_d64_causal BH=16,BHK=16,S=4096 sm90_pingpong3_192x128
attention_fwd_gqa_d64_causal BH=4,BHK=4,S=8192 sm90_pingpong_128x192
attention_fwd_gqa_d64_causal BH=8,BHK=8,S=8192 sm90_pingpong3_192x128
attention_fwd_gqa_d64_causal BH=16,BHK=16,S=16384 sm90_pingpong3_192x128
SHAPES
exit $fail
