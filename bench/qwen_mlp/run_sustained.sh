#!/usr/bin/env bash
# The selected Qwen kernels, each timed in its own power steady state (bench_qwen_mlp --sustain-ms):
# before every timed region of ~50 ms the contender runs back to back, untimed, for ~300 ms. With
# the full run.sh set that takes ~90 x 0.35 s per round per M, so this runs only the kernels the
# benches select at some M (and fused-pp-g8, selected at M >= 4096 in sessions 12-16; the token
# tiles, selected at 129-224, 257-1024 and, since session 29, at some M up to 2496, none of them a
# default M) against the same baselines. See README.md here, "Two timer regimes".
#
# Usage: bash bench/qwen_mlp/run_sustained.sh [build-dir] [more bench_qwen_mlp arguments]
#   (default --M 1024,2048,4096,8192 --rounds 8; e.g. --M 16,128 for the decode tiles)
# Writes $RESULTS_DIR (default bench/results/sustained)/qwen_mlp.{json,md}.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then B=$1; shift; fi
K=$B/examples/qwen_mlp
RES=${RESULTS_DIR:-bench/results/sustained}
args=()
for k in fused_small16 gemm_small16 fused_medium_swf gemm_medium_s4 gemm_n112 gemm_n120 fused_n112_swf fused_n120_swf \
         fused_sw_splitk gemm_sw_splitk fused_pp_g8 gemm_tok144_sk gemm_tok144_splitk gemm_tok160_sk gemm_tok160_splitk \
         gemm_tok176_sk gemm_tok176_splitk fused_tok144_sk fused_tok144_splitk fused_tok160_sk fused_tok160_splitk \
         fused_tok176_sk fused_tok176_splitk gemm_tok208_sk gemm_tok208_splitk fused_tok208_sk fused_tok208_splitk \
         gemm_tok224_sk fused_tok224_sk gemm_tok144w_splitk fused_tok144w_splitk gemm_tok144w_splitk_g8 \
         fused_tok144w_splitk_g8 gemm_tok136_sk gemm_tok136_splitk gemm_tok152_sk gemm_tok152_splitk \
         fused_tok136_sk fused_tok136_splitk fused_tok152_sk fused_tok152_splitk \
         gemm_tok168_sk gemm_tok168_splitk fused_tok168_sk fused_tok168_splitk gemm_tok200_sk \
         gemm_tok200_splitk fused_tok200_sk fused_tok200_splitk gemm_tok216_sk fused_tok216_sk \
         gemm_tok136_sk5 gemm_tok136_splitk5 gemm_tok152_sk5 gemm_tok152_splitk5 fused_tok136_sk5 fused_tok136_splitk5 \
         fused_tok152_sk5 fused_tok152_splitk5; do
  if [ ! -f "$K/$k.cubin" ] || [ ! -f "$K/$k.map" ]; then
    echo "run_sustained.sh: FAIL: $K/$k.cubin or .map does not exist (build the examples first)"
    exit 2
  fi
  args+=("--${k//_/-}" "$K/$k.cubin" "$K/$k.map")
done
mkdir -p "$RES"
extra=("$@")
[[ " ${extra[*]} " == *" --M "* ]] || extra+=(--M 1024,2048,4096,8192)
[[ " ${extra[*]} " == *" --rounds "* ]] || extra+=(--rounds 8)
echo "+ $B/bench/bench_qwen_mlp --sustain-ms 300 --region-ms 50 ${args[*]} ${extra[*]}"
timeout "${BENCH_TIMEOUT:-540}" "$B/bench/bench_qwen_mlp" --sustain-ms 300 --region-ms 50 "${args[@]}" \
  --json "$RES/qwen_mlp.json" --md "$RES/qwen_mlp.md" "${extra[@]}"
