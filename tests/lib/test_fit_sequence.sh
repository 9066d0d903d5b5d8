#!/bin/sh
# test_fit_sequence.sh — the fitted model's geometry of a sequence variant is that of its
# launch with the tile parameters (lib_fit.c): gemm_splitk_bulk.tir's split-K kernel
# (BM=128, BN=160, SPLIT=4) comes before its store kernel, which declares none of them; the
# geometry read off the store would be the defaults (128 x 128, one split). A table of 9
# shapes folds the fits in; the artifact's meta document keeps each variant's fit_geo.
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
command -v python3 > /dev/null || { echo "no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-fitseq.XXXXXX")
trap 'rm -rf "$T"' EXIT
python3 - "$T/table.json" << 'PY'
import json, sys
shapes = [(128, 4096, 4096), (33, 1000, 16384), (1000, 1000, 1000), (64, 256, 8192), (2048, 2048, 512),
          (256, 512, 2048), (8, 8192, 2048), (512, 128, 4096), (3000, 300, 1024)]
entries = []
for i, (m, n, k) in enumerate(shapes):
    t = {"persistent_64x64": 0.005 + 1e-6 * i, "splitk_64x64_s8": 0.006 + 2e-6 * i,
         "splitk_bulk_128x160_s4": 0.007 + 3e-6 * (i * i % 5)}
    entries.append({"op": "gemm", "shape": {"M": m, "N": n, "K": k}, "times_ms": t, "failed": {}})
json.dump({"device": "fake:h200", "runner": "local", "entries": entries}, open(sys.argv[1], "w"))
PY
"$C" lib build tests/lib/fitseq -o "$T/fitseq.cakelib" --ptx --no-model --table "$T/table.json" > "$T/build.txt" 2>&1 ||
    { echo "FAIL: lib build tests/lib/fitseq"; cat "$T/build.txt"; exit 1; }
got=$(python3 - "$T/fitseq.cakelib" << 'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
n = int.from_bytes(raw[16:24], "little")
meta = json.loads(raw[40:40 + n])
op = next(o for o in meta["ops"] if o["op"] == "gemm")
for v in op["variants"]:
    if v["name"] in ("splitk_bulk_128x160_s4", "splitk_64x64_s8"):
        print(v["name"], ",".join(str(int(x)) for x in v.get("fit_geo", [])[:4]), "coef" if v.get("fit_coef") else "nocoef")
PY
)
want="splitk_64x64_s8 64,64,64,8 coef
splitk_bulk_128x160_s4 128,160,64,4 coef"
if [ "$got" = "$want" ]; then
    echo "ok: the sequences' fit geometry (BM, BN, BK, SPLIT) is their split-K launch's"
else
    echo "FAIL: fit geometry"
    echo "got:  $got"
    echo "want: $want"
    exit 1
fi
