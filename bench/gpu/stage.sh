#!/usr/bin/env bash
# Stages everything bench/gpu/run.sh needs, built here, into one folder that travels to the GPU
# machine (the device tool copies /work/main; *.tmp there is git-ignored):
#   DEST/bin/{bench_qwen_mlp,bench_moe,bench_lvc,bench_util.cubin,swiglu.cubin,lvc_util.cubin}
#   DEST/k/qwen_mlp/<kernel>{,_control}.{cubin,map}, DEST/k/moe/..., DEST/k/moe/routing.cubin
#   DEST/py/pipelink (the Python package with its C ABI libraries)
#   DEST/src/bench/{common,qwen_mlp,moe,gpu} (the Python benches and this script's partner)
# Usage: bash bench/gpu/stage.sh BUILD_DIR DEST
set -euo pipefail
B=$1 D=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$D"
mkdir -p "$D/bin" "$D/k/qwen_mlp" "$D/k/moe" "$D/py" "$D/src/bench"
cp "$B"/bench/{bench_qwen_mlp,bench_moe,bench_lvc,bench_util.cubin,swiglu.cubin,lvc_util.cubin} "$D/bin/"
for k in fused fused_medium fused_narrow fused_small gemm gemm_medium gemm_narrow gemm_small fused_sw gemm_sw fused_sw_splitk gemm_sw_splitk \
         fused_small16 gemm_small16; do
  for s in "" _control; do cp "$B/examples/qwen_mlp/$k$s".{cubin,map} "$D/k/qwen_mlp/"; done
done
# session 10: the work-unit objects under every schedule (bench_streamk.py; no controls)
for t in sw medium small; do
  for sc in dp sk sk0 splitk; do
    for kind in gemm fused; do cp "$B/examples/qwen_mlp/${kind}_${t}_${sc}".{cubin,map} "$D/k/qwen_mlp/"; done
  done
done
for k in gate_up down down_store gate_up_dev down_store_dev gate_up64_dev down_store64_dev gate_up_dev_pdl down_store_dev_pdl; do
  for s in "" _control; do cp "$B/examples/moe/$k$s".{cubin,map} "$D/k/moe/"; done
done
# session 9's best layer (bench_torch.py): the gate/up relinked in other tile orders, the panel kernels
for k in gate_up_dev_row_major gate_up64_dev_row_major gate_up_dev_grouped8 gate_up64_dev_grouped8; do
  cp "$B/examples/moe/$k".{cubin,map} "$D/k/moe/"
done
for k in gate_up_dev_row_major_sw down_store_dev_sw gate_up64_dev_row_major_sw down_store64_dev_sw; do
  for s in "" _control; do cp "$B/examples/moe/$k$s".{cubin,map} "$D/k/moe/"; done
done
cp "$B/examples/moe/routing.cubin" "$B/examples/moe/routing_pdl.cubin" "$D/k/moe/"
cp -r "$B/python/pipelink" "$D/py/"
for d in common qwen_mlp moe gpu; do
  mkdir -p "$D/src/bench/$d"
  cp "$root"/bench/$d/*.py "$D/src/bench/$d/" 2>/dev/null || true
  cp "$root"/bench/$d/*.sh "$D/src/bench/$d/" 2>/dev/null || true
done
du -sh "$D"
