#!/bin/sh
# run_all.sh CAKEC — reproduces the run-time diagnostics (E095x, E097x) quoted in
# docs/diagnostics.md. Needs a GPU. Prints each command and what cakec says.
C=${1:-build/cakec}
D=$(dirname "$0")
r() { echo "\$ cakec $*"; "$C" "$@" >/tmp/cake_r.out 2>&1; rc=$?; sed "s|$D/||g" /tmp/cake_r.out; echo "[exit $rc]"; }
r run "$D/run_noref.tir" --check
r run "$D/run_ref_thread.tir" --check
r run "$D/run_ref_oob.tir" --check
r run "$D/run_ref_div0.tir" --check
r run "$D/run_no_shape.tir" --check
r run "$D/run_nan.tir" --check
r run "$D/run_copy.tir" --check --shape N=1001
r run "$D/run_copy.tir" --check --reference "$D/run_copy_ref.tir"
r run "$D/run_copy.tir" --kernel nosuch
r run "$D/../oracle/wrong/vadd_wrong_value.tir" --check
r run "$D/../oracle/wrong/vadd_no_tail.tir" --check
