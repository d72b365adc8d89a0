#!/usr/bin/env bash
# Copies what bench_lvc needs out of a build directory into one self-contained folder:
#   DEST/bench_lvc, DEST/lvc_util.cubin, DEST/routing.cubin,
#   DEST/k/{gemm,qwen_mlp,moe,transfer}/<kernel>{,_control}.{cubin,map}
# and for lvc_torch.py (the kernels launched on torch tensors):
#   DEST/kt/attention/attn_{a,b}{,_control}.{cubin,map} + select.json,
#   DEST/kt/llama_qwen/{fused_small,gemm_small}{,_control}.{cubin,map},
#   DEST/kt/llama_splitk/{splitk,splitk_k1024,splitk_rope,splitk_rope_pdl}{,_control}.{cubin,map}, DEST/py/pipelink
# Usage: bash bench/linked_vs_control/stage.sh BUILD_DIR DEST
set -euo pipefail
B=$1 D=$2
mkdir -p "$D/k/gemm" "$D/k/qwen_mlp" "$D/k/moe" "$D/k/transfer"
cp "$B/bench/bench_lvc" "$B/bench/lvc_util.cubin" "$B/examples/moe/routing.cubin" "$D/"
n=0
for pair in gemm/gemm qwen_mlp/fused qwen_mlp/fused_medium qwen_mlp/fused_narrow qwen_mlp/fused_small qwen_mlp/gemm \
            qwen_mlp/gemm_medium qwen_mlp/gemm_narrow qwen_mlp/gemm_small moe/gate_up moe/down moe/down_store transfer/transfer; do
  src=$B/examples/$pair
  [ "${pair%%/*}" = transfer ] && src=$B/tests/$pair
  for s in "" _control; do
    for e in cubin map; do cp "$src$s.$e" "$D/k/$pair$s.$e"; done
  done
  n=$((n + 1))
done
echo "stage: $n linked/control pairs in $D/k"
mkdir -p "$D/kt/attention" "$D/kt/llama_qwen" "$D/py"
for k in attn_a attn_b; do
  for s in "" _control; do cp "$B/examples/llama_decode/$k$s".{cubin,map} "$D/kt/attention/"; done
done
cp "$B/examples/llama_decode/select.json" "$D/kt/attention/"
for k in fused_small gemm_small; do
  for s in "" _control; do cp "$B/examples/qwen_mlp/$k$s".{cubin,map} "$D/kt/llama_qwen/"; done
done
mkdir -p "$D/kt/llama_splitk"
for k in splitk splitk_k1024 splitk_rope splitk_rope_pdl; do
  for s in "" _control; do cp "$B/examples/llama_decode/$k$s".{cubin,map} "$D/kt/llama_splitk/"; done
done
cp -r "$B/python/pipelink" "$D/py/"
echo "stage: 6 linked/control pairs for lvc_torch.py in $D/kt"
