#!/usr/bin/env bash
# ncu profile of the PipeLink kernels a Python bench launches in --profile mode (the kernel is
# named pipelink_kernel; the first 2 launches are profiled, or NCU_COUNT launches of the kernels
# matching the regex NCU_KERNELS): speed of light, compute and memory
# workload, warp state (stall reasons), occupancy, plus tensor-pipe and DRAM metrics. Clocks are
# left alone (--clock-control none). Writes DIR/ncu_NAME.ncu-rep and its details/raw pages.
# Usage: bash bench/gpu/ncu.sh NAME DIR SCRIPT.py ARGS...
set -uo pipefail
name=$1 dir=$2
shift 2
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats
          --section Occupancy --section LaunchStats)
metrics=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
rep=$dir/ncu_$name
if ! ncu --clock-control none -k "regex:${NCU_KERNELS:-pipelink_kernel}" --launch-count "${NCU_COUNT:-2}" "${sections[@]}" --metrics "$metrics" -f -o "$rep" python3 "$@"; then
  echo "ncu.sh: retrying without the extra metrics"
  ncu --clock-control none -k "regex:${NCU_KERNELS:-pipelink_kernel}" --launch-count "${NCU_COUNT:-2}" "${sections[@]}" -f -o "$rep" python3 "$@" || exit 1
fi
ncu -i "$rep.ncu-rep" --page details > "$rep.details.txt"
ncu -i "$rep.ncu-rep" --page details --csv > "$rep.details.csv"
ncu -i "$rep.ncu-rep" --page raw --csv > "$rep.raw.csv"
grep -E "Duration|bank_conflicts|wavefronts_mem_shared|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|tensor|Stall|Warp Cycles Per Issued|Achieved Occupancy|Registers" \
  "$rep.details.txt" | head -80
