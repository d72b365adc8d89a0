#!/usr/bin/env bash
# On a GPU machine: build (no fuzz target), run every GPU test, and check that loading a linked
# kernel makes no failing CUDA API call (compute-sanitizer). Logs go to $OUT (or /tmp) as gpu_tests.log.
set -uo pipefail
cd "$(dirname "$0")/.."
LOG=${OUT:-/tmp}/gpu_tests.log
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
  export PATH=/usr/local/cuda/bin:$PATH
  # A build carried from the CPU machine is used as it is (the GPU machine may lack the
  # header-only libraries and GoogleTest); otherwise build here.
  if [ ! -f build/CMakeCache.txt ]; then
    t0=$(date +%s)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPIPELINK_FUZZ=OFF >/dev/null && cmake --build build -j"$(nproc)" 2>&1 | grep -E "error|warning" | head -20
    echo "build: $(( $(date +%s) - t0 )) s"
  fi
  (cd build && ctest -L gpu --output-on-failure --timeout 600)
  echo "ctest -L gpu exit: $?"
  G=build/examples/gemm
  if command -v compute-sanitizer >/dev/null; then
    compute-sanitizer --tool memcheck --show-backtrace no "$G/run_gemm" --linked "$G/gemm.cubin" "$G/gemm.map" --M 256 --N 256 --K 256 --iters 2 2>&1 | tail -6
    echo "-- a cubin with another link's map must be refused:"
    "$G/run_gemm" --linked "$G/gemm.cubin" build/examples/qwen_mlp/fused.map --M 256 --N 256 --K 256 --iters 1 2>&1 | tail -2
  fi
} 2>&1 | tee "$LOG"
