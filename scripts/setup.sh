#!/bin/sh
# setup.sh — the first command on a fresh Debian 12 machine: installs the
# packages that are missing, builds cakec and the tests, and runs the demo.
#
#   scripts/setup.sh             install, build (build/), demo
#   scripts/setup.sh --install   only install the missing packages (.ci/run)
#
# Packages: the LLVM 19 C API with NVPTX and AMDGPU (llvm-19-dev, which brings
# libffi-dev, libxml2-dev, libz3-dev and libncurses-dev), ld.lld for AMDGPU code
# objects (lld-19), clang-19 with its sanitizer and libFuzzer runtimes
# (libclang-rt-19-dev) for the ASan/UBSan build and the fuzzer, cJSON, libcurl,
# cmocka for the unit tests, python3 (its standard library only) for the agent
# tests' loopback HTTP server and MCP client, python3-dev for the Python module
# (`import cake`, docs/python.md), and zlib/zstd for linking LLVM statically
# (-DCAKE_STATIC_LLVM=ON), and Slurm (slurm-wlm) for the test of the Slurm tuning
# runner (tests/agent/test_slurm.sh, which starts a one-node cluster of its own with
# auth/none: no munge daemon needed). The CUDA toolkit is optional: with it, cuda.h and
# ptxas are used; without it, GPU and ptxas tests skip.
set -eu
cd "$(dirname "$0")/.."

PACKAGES="cmake make gcc pkg-config llvm-19-dev lld-19 clang-19 libclang-rt-19-dev
          libcjson-dev libcurl4-openssl-dev libcmocka-dev libzstd-dev zlib1g-dev python3
          python3-dev slurm-wlm"

install_missing() {
    missing=""
    for p in $PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    if [ -z "$missing" ]; then
        echo "setup: all packages are installed"
        return 0
    fi
    echo "setup: installing:$missing"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

install_missing
[ "${1:-}" = "--install" ] && exit 0
failed=0

echo "== build (build/)"
PY=$(command -v python3)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$PY" >/dev/null
cmake --build build -j "$(nproc)"
CAKEC=build/cakec

# `import cake` from any folder, for the python3 on PATH: a cake.pth in its user
# site-packages (or its own site-packages inside a virtual environment) names
# build/python, where the build puts the package
echo
echo "== the Python module for $PY"
if [ -f build/python/cake/_cake.abi3.so ]; then
    site=$("$PY" -c 'import site, sysconfig
print(site.getusersitepackages() if site.ENABLE_USER_SITE else sysconfig.get_paths()["purelib"])')
    mkdir -p "$site"
    echo "$(pwd)/build/python" > "$site/cake.pth"
    echo "wrote $site/cake.pth"
    (cd / && "$PY" -c 'import cake; print("import cake: ok, version", cake.version)') ||
        failed=1
else
    echo "no build/python/cake/_cake.abi3.so (python3-dev missing?)"
fi

echo
echo "== cakec check on every example"
for f in examples/*.tir; do
    if "$CAKEC" check "$f"; then
        echo "ok    $f"
    else
        echo "FAIL  $f"
        failed=1
    fi
done

# A broken input with a note (where the name was declared) and a help line.
BROKEN=tests/diag/names/assign_to_let.tir
echo
echo "== the diagnostics of a broken file, as text (stderr): $BROKEN"
"$CAKEC" check "$BROKEN" || echo "(exit $?: the input is wrong)"
echo
echo "== the same as JSON (stdout)"
"$CAKEC" check --json "$BROKEN" || echo "(exit $?)"

# ---- DEMO: code generation, and a checked, timed run where there is a GPU ----
# (the cost model, `cakec cost`, is a later stage)
echo
echo "== rmsnorm compiled to PTX for sm_90a (the key instructions)"
"$CAKEC" examples/rmsnorm.tir --target sm_90a --emit ptx -o build/rmsnorm.ptx &&
    grep -oE "^\.(version|target) [a-z0-9_.]+|\.reqntid [0-9]+|(ld\.global\.nc|st\.global)\.v4\.[a-z0-9]+|shfl\.sync\.bfly\.b32|rsqrt\.approx\.[a-z0-9.]+|bar\.sync" \
        build/rmsnorm.ptx | sort | uniq -c
if command -v ptxas >/dev/null 2>&1; then
    ptxas -arch=sm_90a build/rmsnorm.ptx -o /dev/null && echo "ptxas -arch=sm_90a: ok"
fi
echo
echo "== rmsnorm for gfx942: an AMDGPU code object"
"$CAKEC" examples/rmsnorm.tir --target gfx942 --emit hsaco -o build/rmsnorm.hsaco &&
    ls -l build/rmsnorm.hsaco
echo
echo "== a checked, timed run (needs a GPU: without one, cakec says so and exits 3)"
"$CAKEC" run examples/rmsnorm.tir --check --bench ||
    echo "(exit $?)"
# -------------------------------------------------------------------------------

echo
echo "setup done: run scripts/test.sh for every test"
exit $failed
