#!/usr/bin/env bash
# ncu of the best MoE layer (bench/moe/stage_times.py --once): every kernel of one launch inside the
# NVTX range "layer" (routing, gate/up, down, top-k sum), DRAM bytes and throughput, L2 hit rate,
# clock. Writes DIR/moe_layer.ncu-rep and prints ncu's details page for those metrics.
#   bash bench/moe/ncu_layer.sh BUILD DIR [T] [stage_times.py options...]
set -uo pipefail
B=$1 dir=$2 T=${3:-512}
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$dir"
m=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second,launch__grid_size
PYTHONPATH=$B/python ncu --clock-control none --nvtx --nvtx-include "layer/" --metrics "$m" -f -o "$dir/moe_layer" \
  python3 "$(dirname "$0")/stage_times.py" --kernels "$B/examples/moe" --T "$T" --router bf16 --once "$@" || exit 1
ncu -i "$dir/moe_layer.ncu-rep" --page details
