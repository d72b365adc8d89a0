#!/usr/bin/env bash
# Runs the MoE expert-layer benchmarks on the GPU: bench_moe (C++: the PipeLink kernels, linked and
# monolithic control, and the whole layer with its routing kernels) and bench_torch.py (Python: the
# same kernels through `import pipelink` and PyTorch's torch._grouped_mm pipeline in the same
# process, one timer, the same weights and inputs). Writes bench/results/moe.{json} and
# moe_torch.{json,md} (and copies them to $OUT when set).
# Usage: bash bench/moe/run.sh [build-dir] [--T 512,4096,16384] [--rounds 20]
set -uo pipefail
cd "$(dirname "$0")/../.."
B=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then B=$1; shift; fi
RES=${RESULTS_DIR:-bench/results}
K=$B/examples/moe
mkdir -p "$RES"
timeout "${BENCH_TIMEOUT:-400}" "$B/bench/bench_moe" --gu "$K/gate_up.cubin" "$K/gate_up.map" --down "$K/down.cubin" "$K/down.map" \
  --down-store "$K/down_store.cubin" "$K/down_store.map" --down-store-control "$K/down_store_control.cubin" "$K/down_store_control.map" \
  --gu-control "$K/gate_up_control.cubin" "$K/gate_up_control.map" --down-control "$K/down_control.cubin" "$K/down_control.map" \
  --routing "$K/routing.cubin" --util "$B/bench/bench_util.cubin" --json "$RES/moe.json" "$@"
rc=$?
PYTHONPATH=$B/python timeout 300 python3 bench/moe/bench_torch.py --kernels "$K" --json "$RES/moe_torch.json" --md "$RES/moe_torch.md" "$@" || rc=1
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/bench/results"
  cp "$RES"/moe.json "$RES"/moe_torch.json "$RES"/moe_torch.md "$OUT/bench/results/" 2>/dev/null
fi
exit $rc
