#!/usr/bin/env bash
# Issue 8: swapping the decode attention's core is a relink. Links variant a (kv_loader +
# attn_core_a + attn_writer) and variant b (the same with attn_core_split) from the build's
# objects, and checks: the loader's and writer's object files are the same bytes before and after
# both links (nothing rebuilds them), both links read them (the map's conformance lines), the
# links are deterministic (equal to the build's cubins), and the two kernels differ; variant b's
# --pdl link keeps the loader's own dependency wait.
# Usage: tests/llama_swap.sh BUILD_DIR
set -euo pipefail
B=$(cd "$1" && pwd)
S=$(cd "$(dirname "$0")/.." && pwd)
O=$B/examples/llama_decode
D=$S/examples/llama_decode/components
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for f in kv_loader.o attn_writer.o attn_core_a.o attn_core_split.o; do
  [ -f "$O/$f" ] || { echo "missing $O/$f (build the llama_decode_kernels target)"; exit 1; }
done
before=$(cd "$O" && md5sum kv_loader.o attn_writer.o)
"$B/pipelink" link "$D/kv_loader/contract.toml" "$D/attn_core_a/contract.toml" "$D/attn_writer/contract.toml" \
  -L "$O" -o "$T/a.cubin" --map "$T/a.map"
"$B/pipelink" link "$D/kv_loader/contract.toml" "$D/attn_core_split/contract.toml" "$D/attn_writer/contract.toml" \
  -L "$O" -o "$T/b.cubin" --map "$T/b.map"
after=$(cd "$O" && md5sum kv_loader.o attn_writer.o)
echo "$after"
[ "$before" = "$after" ] || { echo "FAIL: the loader's or writer's object changed"; exit 1; }
for v in a b; do
  grep -q "kv_loader: .*records agree" "$T/$v.map" || { echo "FAIL: link $v did not read kv_loader"; exit 1; }
  grep -q "attn_writer: .*records agree" "$T/$v.map" || { echo "FAIL: link $v did not read attn_writer"; exit 1; }
  cmp -s "$T/$v.cubin" "$O/attn_$v.cubin" || { echo "FAIL: link $v differs from the build's attn_$v.cubin"; exit 1; }
done
grep -q "attn_core_a: .*records agree" "$T/a.map" && grep -q "attn_core_split: .*records agree" "$T/b.map" \
  || { echo "FAIL: the cores"; exit 1; }
! cmp -s "$T/a.cubin" "$T/b.cubin" || { echo "FAIL: the two variants are the same kernel"; exit 1; }
# With --pdl the loader waits for the previous kernel itself (pdl_wait = "own": the key tiles that
# no earlier kernel writes are requested before its wait); the linker accepts that only if the
# object executes griddepcontrol.wait. The link equals the build's.
"$B/pipelink" link "$D/kv_loader/contract.toml" "$D/attn_core_split/contract.toml" "$D/attn_writer/contract.toml" \
  -L "$O" --pdl -o "$T/b_pdl.cubin" --map "$T/b_pdl.map"
grep -q "kv_loader .*(pdl_wait own)" "$T/b_pdl.map" || { echo "FAIL: the --pdl link's kv_loader does not wait itself"; exit 1; }
cmp -s "$T/b_pdl.cubin" "$O/attn_b_pdl.cubin" || { echo "FAIL: the --pdl link differs from the build's attn_b_pdl.cubin"; exit 1; }
echo "ok: variant a and b share kv_loader.o and attn_writer.o byte for byte; only the core's contract differs"
