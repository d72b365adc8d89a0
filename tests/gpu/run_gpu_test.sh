#!/usr/bin/env bash
# GPU test: the linked GEMM example and its monolithic control against a CPU reference.
# Exit 77 (ctest: Skipped) with "skipped: no GPU" when there is no usable GPU.
B=${1:-build}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no GPU"
  exit 77
fi
G=$B/examples/gemm
set -e
for shape in "256 256 512" "1024 1024 1024" "2048 1024 4096"; do
  set -- $shape
  timeout 120 "$G/run_gemm" --linked "$G/gemm.cubin" "$G/gemm.map" --control "$G/gemm_control.cubin" "$G/gemm_control.map" \
    --M "$1" --N "$2" --K "$3" --iters 5
done
