#!/usr/bin/env bash
# The Qwen3-32B gate/up GEMM with and without 2-block clusters (issue 9): every variant checked per
# element against an fp32 cuBLAS reference, then timed against cublasGemmEx in the same process.
#
# Usage: bash bench/cluster/run.sh [build-dir] [more bench_cluster arguments, e.g. --M 2048 --iters 30]
# Writes bench/results/cluster_latest.{json,md} (and copies them to $OUT if set).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then B=$1; shift; fi
K=$B/examples/qwen_mlp
args=()
for k in gemm gemm_grouped gemm_cluster gemm_cluster_nomc gemm_cluster_grouped gemm_cluster_inflight gemm_inflight; do
  [ -f "$K/$k.cubin" ] || { echo "run.sh: $K/$k.cubin missing (cmake --build $B --target qwen_mlp_kernels)"; exit 2; }
  args+=(--kernel "$k" "$K/$k.cubin" "$K/$k.map")
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
timeout 300 "$B/bench/bench_cluster" --util "$B/bench/cluster_util.cubin" "${args[@]}" --M 640,2048,4096,8192 --iters 30 \
  --json bench/results/cluster_latest.json --md bench/results/cluster_latest.md "$@"
rc=$?
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
[ -n "${OUT:-}" ] && cp bench/results/cluster_latest.* "$OUT/" 2>/dev/null
exit $rc
