#!/usr/bin/env bash
# Runs the MoE expert-layer benchmark on the GPU: the PipeLink kernels (gate/up and down, linked
# and monolithic control) and the PyTorch pipeline in the same run, then writes
# bench/results/moe.{json,md} (and copies them to $OUT when set).
# Usage: bash bench/moe/run.sh [build-dir] [--T 512,4096,16384] [--iters 20]
set -uo pipefail
cd "$(dirname "$0")/../.."
B=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then B=$1; shift; fi
RES=${RESULTS_DIR:-bench/results}
K=$B/examples/moe
mkdir -p "$RES"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
timeout "${BENCH_TIMEOUT:-400}" "$B/bench/bench_moe" --gu "$K/gate_up.cubin" "$K/gate_up.map" --down "$K/down.cubin" "$K/down.map" \
  --gu-control "$K/gate_up_control.cubin" "$K/gate_up_control.map" --down-control "$K/down_control.cubin" "$K/down_control.map" \
  --routing "$K/routing.cubin" --util "$B/bench/swiglu.cubin" --json "$RES/moe_pipelink.json" "$@"
rc=$?
Ts=$(python3 -c "import json;print(','.join(str(r['T']) for r in json.load(open('$RES/moe_pipelink.json'))['results']))" 2>/dev/null || echo 512,4096,16384)
timeout 300 python3 bench/moe/torch_moe.py "$RES/moe_torch.json" "$Ts" || { echo "run.sh: the PyTorch baseline failed"; rc=1; }
python3 bench/moe/report.py "$RES/moe_pipelink.json" "$RES/moe_torch.json" "$RES/moe.md" "$RES/moe.json" || rc=1
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/bench/results"
  cp "$RES"/moe*.json "$RES"/moe.md "$OUT/bench/results/" 2>/dev/null
fi
exit $rc
