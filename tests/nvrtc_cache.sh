#!/usr/bin/env bash
# The NVRTC cache (--cache-dir, src/build_cache.cpp): a second link of the GEMM example reuses the
# generated unit and the conformance probe (-v says "nvrtc (cached)" twice, no NVRTC compile), and
# the cubin is byte-identical with and without the cache, and to the build's cubin. A changed
# device header must miss: with a copy of the include directory (PIPELINK_INCLUDE_DIR), one more
# line in its device.cuh (same path) compiles again.
# Usage: tests/nvrtc_cache.sh BUILD_DIR
set -uo pipefail
B=$(cd "$1" && pwd)
PL=$B/pipelink
root=$(cd "$(dirname "$0")/.." && pwd)
G=$root/examples/gemm
S=$(mktemp -d); trap 'rm -rf "$S"' EXIT
fail=0
link() { "$PL" link "$G/loader/contract.toml" "$G/mma/contract.toml" "$G/mma/contract.toml" "$G/writer/contract.toml" \
           -L "$B/examples/gemm" -v "$@"; }
link -o "$S/a.cubin" --cache-dir "$S/cache" 2>"$S/1.log" || { echo "FAIL: first link"; cat "$S/1.log"; exit 1; }
n=$(ls "$S/cache"/*.ltoir 2>/dev/null | wc -l)
[ "$n" = 2 ] || { echo "FAIL: $n cache entries after one link, expected 2 (generated unit, probe)"; fail=1; }
link -o "$S/b.cubin" --cache-dir "$S/cache" 2>"$S/2.log" || { echo "FAIL: second link"; exit 1; }
[ "$(grep -c '^pipelink: nvrtc (cached)' "$S/2.log")" = 2 ] || { echo "FAIL: the second link did not reuse both"; fail=1; }
grep -q '^pipelink: nvrtc:' "$S/2.log" && { echo "FAIL: the second link ran NVRTC"; fail=1; }
link -o "$S/c.cubin" 2>/dev/null || { echo "FAIL: link without cache"; exit 1; }
cmp -s "$S/a.cubin" "$S/b.cubin" && cmp -s "$S/a.cubin" "$S/c.cubin" || { echo "FAIL: cubins differ with the cache"; fail=1; }
cmp -s "$S/a.cubin" "$B/examples/gemm/gemm.cubin" || { echo "FAIL: differs from the build's gemm.cubin"; fail=1; }
cp -r "$root/include" "$S/inc"
PIPELINK_INCLUDE_DIR=$S/inc link -o "$S/d.cubin" --cache-dir "$S/cache" 2>/dev/null || { echo "FAIL: link with copied headers"; exit 1; }
echo "// changed" >> "$S/inc/pipelink/device.cuh"  # same path, other content
PIPELINK_INCLUDE_DIR=$S/inc link -o "$S/d.cubin" --cache-dir "$S/cache" 2>"$S/3.log" || { echo "FAIL: link with changed header"; exit 1; }
grep -q '^pipelink: nvrtc (cached)' "$S/3.log" && { echo "FAIL: a changed device.cuh hit the cache"; fail=1; }
[ $fail = 0 ] && echo "ok: NVRTC cache reused, cubins identical, a header change misses"
exit $fail
