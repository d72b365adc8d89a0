#!/usr/bin/env bash
# Runs the Qwen3-32B MLP gate/up + SwiGLU benchmark on the GPU: the PipeLink kernels of
# build/examples/qwen_mlp/ (every variant, linked and control; any that are not built are
# skipped) against the best cuBLAS (autotuned cuBLASLt, cublasGemmEx) + SwiGLU, checked per
# element against an fp32 reference, then timed. The PyTorch comparison in the same process is
# bench/qwen_mlp/bench_torch.py (bench/gpu/run.sh runs both).
#
# Usage: bash bench/qwen_mlp/run.sh [build-dir] [more bench_qwen_mlp arguments, e.g. --M 16,4096 --rounds 50]
# Writes bench/results/qwen_mlp.json and bench/results/qwen_mlp.md, and copies both to $OUT if set.
# Exit status: the bench's (0 all checks passed, 1 a check failed, 2 setup error), 124 on timeout.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then B=$1; shift; fi   # a first argument that is not a flag
BENCH=$B/bench/bench_qwen_mlp
K=$B/examples/qwen_mlp
RES=${RESULTS_DIR:-bench/results}   # the GPU test points this elsewhere

if [ ! -x "$BENCH" ] || [ ! -f "$B/bench/swiglu.cubin" ] || [ ! -f "$B/bench/bench_util.cubin" ]; then
  echo "run.sh: $BENCH not built; building it in $B"
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$B" --target bench_qwen_mlp -j"$(nproc)" || exit 2
fi

args=()
# add FLAG... K: the kernel K's cubin and map after FLAG... (or skip it; with REQUIRE_ALL, fail).
add() {
  local k=${*: -1}
  if [ -f "$K/$k.cubin" ] && [ -f "$K/$k.map" ]; then
    args+=("${@:1:$#-1}" "$K/$k.cubin" "$K/$k.map")
  elif [ -n "${REQUIRE_ALL:-}" ]; then
    echo "run.sh: FAIL: $K/$k.cubin or $K/$k.map does not exist (REQUIRE_ALL is set: every kernel must run)"
    exit 2
  else
    echo "run.sh: skipping $k: $K/$k.cubin or $K/$k.map does not exist"
  fi
}
for k in fused fused_control fused_medium fused_medium_control fused_narrow fused_narrow_control fused_small fused_small_control \
         gemm gemm_control gemm_medium gemm_medium_control gemm_narrow gemm_narrow_control gemm_small gemm_small_control \
         fused_sw fused_sw_control gemm_sw gemm_sw_control fused_sw_splitk gemm_sw_splitk \
         fused_small16 fused_small16_control gemm_small16 gemm_small16_control fused_pp_g8 fused_pp_g8_control \
         fused_small16_swap_packed fused_small16_swap_packed_control gemm_small16_swap_packed gemm_small16_swap_packed_control \
         fused_medium_packed fused_medium_packed_control gemm_medium_packed gemm_medium_packed_control \
         gemm_medium_s4 gemm_medium_s4_control fused_medium_swf fused_medium_swf_control \
         fused_medium_swf_packed fused_medium_swf_packed_control gemm_n112 gemm_n112_control gemm_n120 gemm_n120_control \
         fused_n112_swf fused_n112_swf_control fused_n120_swf fused_n120_swf_control \
         gemm_tok144_sk gemm_tok144_sk_control gemm_tok144_splitk gemm_tok144_splitk_control \
         gemm_tok160_sk gemm_tok160_sk_control gemm_tok160_splitk gemm_tok160_splitk_control \
         gemm_tok176_sk gemm_tok176_sk_control gemm_tok176_splitk gemm_tok176_splitk_control \
         fused_tok144_sk fused_tok144_sk_control fused_tok144_splitk fused_tok144_splitk_control \
         fused_tok160_sk fused_tok160_sk_control fused_tok160_splitk fused_tok160_splitk_control \
         fused_tok176_sk fused_tok176_sk_control fused_tok176_splitk fused_tok176_splitk_control \
         gemm_tok208_sk gemm_tok208_sk_control gemm_tok208_splitk gemm_tok208_splitk_control \
         fused_tok208_sk fused_tok208_sk_control fused_tok208_splitk fused_tok208_splitk_control \
         gemm_tok224_sk gemm_tok224_sk_control fused_tok224_sk fused_tok224_sk_control \
         gemm_tok144w_sk gemm_tok144w_sk_control gemm_tok144w_splitk gemm_tok144w_splitk_control \
         fused_tok144w_splitk fused_tok144w_splitk_control \
         gemm_tok144w_splitk_g8 gemm_tok144w_splitk_g8_control fused_tok144w_splitk_g8 fused_tok144w_splitk_g8_control \
         gemm_tok136_sk gemm_tok136_sk_control gemm_tok136_splitk gemm_tok136_splitk_control \
         gemm_tok152_sk gemm_tok152_sk_control gemm_tok152_splitk gemm_tok152_splitk_control \
         fused_tok136_sk fused_tok136_sk_control fused_tok136_splitk fused_tok136_splitk_control \
         fused_tok152_sk fused_tok152_sk_control fused_tok152_splitk fused_tok152_splitk_control \
         gemm_tok168_sk gemm_tok168_sk_control gemm_tok168_splitk gemm_tok168_splitk_control \
         fused_tok168_sk fused_tok168_sk_control fused_tok168_splitk fused_tok168_splitk_control \
         gemm_tok200_sk gemm_tok200_sk_control gemm_tok200_splitk gemm_tok200_splitk_control \
         fused_tok200_sk fused_tok200_sk_control fused_tok200_splitk fused_tok200_splitk_control \
         gemm_tok216_sk gemm_tok216_sk_control fused_tok216_sk fused_tok216_sk_control \
         gemm_tok136_sk5 gemm_tok136_sk5_control gemm_tok136_splitk5 gemm_tok136_splitk5_control \
         gemm_tok152_sk5 gemm_tok152_sk5_control gemm_tok152_splitk5 gemm_tok152_splitk5_control \
         fused_tok136_sk5 fused_tok136_sk5_control fused_tok136_splitk5 fused_tok136_splitk5_control \
         fused_tok152_sk5 fused_tok152_sk5_control fused_tok152_splitk5 fused_tok152_splitk5_control; do
  add "--${k//_/-}" "$k"
done
# Timed and checked beside the others, never selected (--probe): the ping-pong GEMM (session 12),
# labelled gemm-sw-pp-g8: its store writes 64-column panels.
add --probe gemm-sw-pp-g8 gemm_pp_g8
# Session 13: the controls that separate the packed twins' effects (the swapped main loop with the
# TMA loader). gemm-medium-s4 (the 128 x 104 GEMM with the TMA loader and 4 stages, as
# gemm-medium-packed has) is a variant above: selected at 64 < M <= 1024 in sessions 15-20, since
# session 21 where its whole rounds beat 128 x 112 / 128 x 120's.
add --probe gemm-small16-swap gemm_small16_swap
add --probe fused-small16-swap fused_small16_swap
# Session 22: the 160-token tile data-parallel (the ablation of the token tiles' stream-k / split-k).
add --probe gemm-tok160 gemm_tok160
if [ ${#args[@]} -eq 0 ]; then
  echo "run.sh: FAIL: no PipeLink kernel found under $K; nothing would run"
  exit 2
fi

mkdir -p "$RES"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
echo "+ $BENCH ${args[*]} --json $RES/qwen_mlp.json --md $RES/qwen_mlp.md $*"
timeout "${BENCH_TIMEOUT:-540}" "$BENCH" "${args[@]}" --json "$RES/qwen_mlp.json" --md "$RES/qwen_mlp.md" "$@"
rc=$?
[ $rc -eq 124 ] && echo "run.sh: timed out after ${BENCH_TIMEOUT:-540} s"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/bench/results"
  for f in "$RES/qwen_mlp.json" "$RES/qwen_mlp.md"; do [ -f "$f" ] && cp "$f" "$OUT/bench/results/"; done
fi
exit $rc
