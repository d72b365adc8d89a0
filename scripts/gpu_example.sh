#!/usr/bin/env bash
# Runs the linked GEMM example and its monolithic control on the GPU (correctness + timing).
# Usage: scripts/gpu_example.sh [build-dir] [out-dir]. Each run is bounded by a timeout so a
# hang cannot wedge the machine.
set -u
B=${1:-build}
OUTDIR=${2:-${OUT:-/tmp}}
G=$B/examples/gemm
rc=0
run() { echo "+ $*"; timeout 120 "$@" || { echo "FAILED (rc=$?): $*"; rc=1; }; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
run $G/run_gemm --linked $G/gemm.cubin $G/gemm.map --control $G/gemm_control.cubin $G/gemm_control.map --M 256 --N 256 --K 512 --iters 20
run $G/run_gemm --linked $G/gemm.cubin $G/gemm.map --control $G/gemm_control.cubin $G/gemm_control.map --M 1024 --N 1024 --K 1024 --iters 30
run $G/run_gemm --linked $G/gemm.cubin $G/gemm.map --control $G/gemm_control.cubin $G/gemm_control.map --M 4096 --N 4096 --K 4096 --iters 30 --json $OUTDIR/gemm_4096.json
if command -v compute-sanitizer >/dev/null; then
  run compute-sanitizer --tool memcheck $G/run_gemm --linked $G/gemm.cubin $G/gemm.map --M 256 --N 256 --K 256 --iters 2
  run compute-sanitizer --tool synccheck $G/run_gemm --linked $G/gemm.cubin $G/gemm.map --M 256 --N 256 --K 256 --iters 2
fi
exit $rc
