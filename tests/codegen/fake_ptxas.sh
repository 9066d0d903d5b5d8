#!/bin/sh
# fake_ptxas.sh — stands in for ptxas in test_resources.sh (CAKE_PTXAS): prints the
# verbose log of an assembly that spilled, for every entry function of the PTX file it
# is given, and exits 0. FAKE_REGS (default 128: .maxnreg not honoured) is the register
# count it reports; FAKE_C7504=1 adds nvJitLink's note that setmaxnreg was ignored.
for a in "$@"; do case $a in *.ptx) f=$a ;; esac; done
sed -n 's/^\.visible \.entry \([A-Za-z0-9_]*\)(.*/\1/p' "$f" | while read -r k; do
    echo "ptxas info    : Compiling entry function '$k' for 'sm_90a'"
    [ "${FAKE_C7504:-0}" = 1 ] && echo "ptxas info    : (C7504) setmaxnreg ignored; unable to determine register count at entry"
    echo "ptxas info    : Function properties for $k"
    echo "ptxas         .     232 bytes stack frame, 228 bytes spill stores, 228 bytes spill loads"
    echo "ptxas info    : Used ${FAKE_REGS:-128} registers, used 16 barriers"
done
exit 0
