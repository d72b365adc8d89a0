#!/usr/bin/env bash
# Copies what a GPU run of the llama_decode example and bench needs into one directory (no build
# there): the Python package with its libraries, the linked kernels (attention; qwen_mlp's
# fused_small and gemm_small for the linked rest; the split-K GEMM; their --pdl links), the plain
# rest.cubin (and rest_pdl.cubin) and the selection tables, the scripts.
# Usage: [BUILD=build] bash examples/llama_decode/stage.sh DEST [CHECKED_KERNEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
dest=$1
rm -rf "$dest"
mkdir -p "$dest/py" "$dest/kernels"
cp -r "$build"/python/pipelink "$dest/py/"
cp "$build"/examples/llama_decode/attn_{a,b}.{cubin,map} "$build"/examples/llama_decode/select.json \
   "$build"/examples/llama_decode/rest.cubin "$dest/kernels/"
cp "$build"/examples/qwen_mlp/{fused_small,gemm_small}.{cubin,map} "$dest/kernels/"
# programmatic dependent launch (decode.LinkedStep(pdl=True)): the --pdl links, rest_pdl.cubin, select_pdl.json
cp "$build"/examples/llama_decode/{attn_a_pdl,attn_b_pdl,attn_bo_pdl,fused_small_pdl,gemm_small_pdl}.{cubin,map} \
   "$build"/examples/llama_decode/{rest_pdl.cubin,select_pdl.json,select_o_pdl.json} "$dest/kernels/"
cp "$build"/examples/llama_decode/attn_bo_{late,nomv}_pdl.{cubin,map} "$dest/kernels/"   # timing experiments (attn_o_writer_*.toml)
cp examples/llama_decode/decode.py bench/llama_decode/bench.py bench/llama_decode/rule_check.py bench/llama_decode/breakdown.py bench/llama_decode/ablate.py bench/llama_decode/attn_compare.py bench/llama_decode/attn_micro.py bench/llama_decode/step_variants.py bench/llama_decode/attn_bits.py bench/llama_decode/torch_variants.py bench/llama_decode/attn_once.py bench/llama_decode/mlp_once.py "$dest/"
cp examples/llama_decode/select_revised{,_pdl}.json "$dest/kernels/"   # the revised rule (rule_check.py, bench.py's revised_sk)
# the linked split-K GEMM for the QKV, O and down projections (decode.LinkedStep(proj="linked"))
cp "$build"/examples/llama_decode/{splitk,splitk_k1024,splitk_pdl,splitk_k1024_pdl}.{cubin,map} "$dest/kernels/"
# the gate/up + SwiGLU in 64 x 64 tiles (decode.LinkedStep(gemms="linked64")), plain and --pdl
cp "$build"/examples/llama_decode/{fused_small64,fused_small64_pdl}.{cubin,map} "$dest/kernels/"
# two blocks per SM (decode.LinkedStep(blocks_per_sm=2)): the --blocks-per-sm 2 links, rest_pdl_tf.cubin
cp "$build"/examples/llama_decode/{splitk_2pb_pdl,splitk_k1024_2pb_pdl,fused_small64_2pb_pdl}.{cubin,map} \
   "$build"/examples/llama_decode/rest_pdl_tf.cubin "$dest/kernels/"
# the fused MLP (decode.LinkedStep(mlp="fused"))
cp "$build"/examples/llama_decode/{mlp,mlp_pdl,mlp_g6d5_pdl,mlp_g8d2_pdl}.{cubin,map} "$dest/kernels/"
# --pdl-early-trigger links (decode.LinkedStep(early_trigger=True), select_et_pdl.json)
cp "$build"/examples/llama_decode/{attn_a,attn_b,gemm_small,fused_small64,splitk,splitk_k1024,splitk_rope}_pdl_et.{cubin,map} \
   "$build"/examples/llama_decode/select_et_pdl.json "$dest/kernels/"
# the QKV GEMM with RoPE and the cache append in its reduction (decode.LinkedStep(rope="fused"))
cp "$build"/examples/llama_decode/{splitk_rope,splitk_rope_pdl,splitk_k256,splitk_k256_pdl,splitk_rope_k256,splitk_rope_k256_pdl}.{cubin,map} "$dest/kernels/"
# longer K chunks (decode.LinkedStep(qkv_k_chunk=1024, down_k_chunk=2048))
cp "$build"/examples/llama_decode/{splitk_rope_k1024_pdl,splitk_k2048_pdl}.{cubin,map} "$dest/kernels/"
# --min-registers links (decode.LinkedStep(min_registers=True))
cp "$build"/examples/llama_decode/{splitk_rope,splitk_rope_s6,splitk_rope_s8,splitk_rope_k256,splitk,splitk_k1024,splitk_k2048,fused_small64,mlp_g6d5,mlp_g3d2,mlp_g2d4,mlp_g4d3,splitk_2pb,splitk_s4_2pb}_mr_pdl.{cubin,map} "$dest/kernels/"
# L2 prefetch of a later kernel's bytes (decode.LinkedStep(l2_prefetch=...))
cp "$build"/examples/llama_decode/{splitk_rope_pf,mlp_g6d5_pf}_mr_pdl.{cubin,map} "$dest/kernels/"
# the fused MLP with one weight ring (decode.LinkedStep(mlp="fused_u"))
cp "$build"/examples/llama_decode/mlp_u_mr_pdl.{cubin,map} "$dest/kernels/"
if [ $# -ge 2 ]; then
  mkdir -p "$dest/kernels_checked"
  cp "$2"/attn_{a,b}.{cubin,map} "$2"/select.json "$dest/kernels_checked/"
fi
du -sh "$dest"
