#!/bin/bash
# variants.sh — times compile-time variants (--set) of the norm and copy kernels
# at their acceptance shapes, to pick the defaults. Prints one line per variant.
set -u
C=${CAKEC:-.carry/cakec}
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
line() { # file shape set
    local r
    r=$($C run "$1" --bench --shape "$2" ${3:+--set "$3"} --runs 30 --json 2>/dev/null |
        python3 -c 'import json,sys; b=json.load(sys.stdin).get("bench") or {}; print("%.4f ms %.0f GB/s regs %s" % (b.get("median_ms",0), b.get("gbps",0), b.get("registers")))')
    echo "$1 $2 ${3:--} : $r"
}
python3 -c 'import torch; from triton.testing import do_bench as b; a=torch.rand(1<<28,device="cuda"); c=torch.empty_like(a); t=b(lambda: c.copy_(a), return_mode="median"); print("torch copy %.1f GB/s" % (2*4*(1<<28)/t/1e6))'
line examples/copy.tir N=268435456 ""
line examples/copy.tir N=268435456 UNROLL=8
line examples/copy.tir N=268435456 UNROLL=2,THREADS=512
for s in "" THREADS=128 THREADS=512,ITERS=2 THREADS=128,ITERS=8; do
    line examples/layernorm.tir M=32768,N=4096 "$s"
    line examples/rmsnorm.tir M=32768,N=4096 "$s"
done
line examples/layernorm.tir M=32768,N=8192 THREADS=512,ITERS=2
line examples/rmsnorm.tir M=32768,N=8192 THREADS=512,ITERS=2
$C run tests/oracle/wrong/vadd_wrong_value.tir --check > /dev/null 2>&1; echo "wrong value: exit $? (expect 1)"
$C run examples/copy.tir --check 2>&1 | tail -3
