#!/usr/bin/env bash
# GPU tests: `run_gpu_test.sh BUILD` runs the linked GEMM example and its monolithic control
# against a CPU reference; `run_gpu_test.sh BUILD transfer` runs the generated-transfer test;
# `run_gpu_test.sh BUILD qwen` checks every Qwen3-32B MLP kernel against its fp32 reference.
# Exit 77 (ctest: Skipped) with "skipped: no GPU" when there is no usable GPU.
B=${1:-build}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no GPU"
  exit 77
fi
set -e
if [ "${2:-}" = qwen ]; then
  # Every Qwen3-32B MLP kernel checked against the fp32 reference at three M (poisoned outputs).
  # Every kernel must exist and run: a missing cubin fails the test (REQUIRE_ALL), never a pass.
  REQUIRE_ALL=1 RESULTS_DIR=$(mktemp -d) exec bash bench/qwen_mlp/run.sh "$B" --M 16,256,1024 --iters 2
fi
if [ "${2:-}" = moe ]; then
  # The MoE layer's linked kernels and controls against the CPU reference (poisoned intermediates),
  # both downs: the scatter-add one and down_store + moe_topk_sum.
  K=$B/examples/moe
  exec timeout 120 "$B/bench/bench_moe" --gu "$K/gate_up.cubin" "$K/gate_up.map" --down "$K/down.cubin" "$K/down.map" \
    --down-store "$K/down_store.cubin" "$K/down_store.map" --down-store-control "$K/down_store_control.cubin" "$K/down_store_control.map" \
    --gu-control "$K/gate_up_control.cubin" "$K/gate_up_control.map" --down-control "$K/down_control.cubin" "$K/down_control.map" \
    --routing "$K/routing.cubin" --util "$B/bench/bench_util.cubin" --T 512,4096 --check-only
fi
if [ "${2:-}" = cluster ]; then
  # The 2-block cluster GEMM (multicast of W), its in-flight variants and the one-block GEMM, per
  # element against an fp32 cuBLAS reference, at M where the tile rows are even (2048) and odd
  # (640: the last cluster's second block gets a tile past M, which TMA zero-fills and clips).
  K=$B/examples/qwen_mlp
  args=()
  for k in gemm gemm_cluster gemm_cluster_nomc gemm_grouped gemm_cluster_grouped gemm_inflight gemm_cluster_inflight; do args+=(--kernel "$k" "$K/$k.cubin" "$K/$k.map"); done
  exec timeout 300 "$B/bench/bench_cluster" --util "$B/bench/cluster_util.cubin" "${args[@]}" --M 640,2048 --check-only
fi
if [ "${2:-}" = checked ]; then
  exec timeout 60 "$B/tests/transfer/run_transfer" "$B/tests/transfer/checked.cubin" "$B/tests/transfer/checked.map" --expect-timeout
fi
if [ "${2:-}" = transfer ] || [ "${2:-}" = transfer_64 ] || [ "${2:-}" = transfer_32 ] || [ "${2:-}" = transfer_tma64 ] ||
   [ "${2:-}" = transfer_tma32 ]; then
  exec timeout 60 "$B/tests/transfer/run_transfer" "$B/tests/transfer/$2.cubin" "$B/tests/transfer/$2.map"
fi
G=$B/examples/gemm
for shape in "256 256 512" "1024 1024 1024" "2048 1024 4096"; do
  set -- $shape
  timeout 120 "$G/run_gemm" --linked "$G/gemm.cubin" "$G/gemm.map" --control "$G/gemm_control.cubin" "$G/gemm_control.map" \
    --M "$1" --N "$2" --K "$3" --iters 5
done
