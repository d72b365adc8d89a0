#!/usr/bin/env bash
# ncu profile of the C++ Qwen bench's contenders side by side: the PipeLink kernels given and the
# baselines (cuBLASLt-best after its autotune, cuBLASLt top-1, cublasGemmEx, the SwiGLU), each
# launched once inside the NVTX range "profile" (bench_qwen_mlp --profile), on the same data.
# Clocks are left alone (--clock-control none), so the SM clock each kernel ran at is part of the
# reading. Writes DIR/ncu_gemm_M<M>.{ncu-rep,raw.csv} and DIR/ncu_gemm.md (one table row per kernel).
# Usage: bash bench/gpu/ncu_gemm.sh BUILD DIR M[,M...] [bench_qwen_mlp kernel arguments...]
#   e.g. bash bench/gpu/ncu_gemm.sh build /tmp/ncu 2048,8192 --gemm-sw-splitk K.cubin K.map
set -uo pipefail
B=$1 dir=$2 Ms=$3
shift 3
mkdir -p "$dir"
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats)
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,launch__cluster_dim_x,launch__cluster_dim_y,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,launch__registers_per_thread
# Shared memory's load on the SM (wgmma operand reads, TMA writes, the epilogue's stores): the L1's
# data-bank reads and writes as a share of their peak.
metrics+=,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed
rc=0
for M in ${Ms//,/ }; do
  rep=$dir/ncu_gemm_M$M
  ncu --clock-control none --nvtx --nvtx-include "profile/" "${sections[@]}" --metrics "$metrics" -f -o "$rep" \
    "$B/bench/bench_qwen_mlp" --M "$M" --rounds 3 --profile --json "$dir/bench_M$M.json" --md "$dir/bench_M$M.md" "$@" \
    > "$dir/bench_M$M.log" 2>&1 || { echo "ncu_gemm.sh: M = $M failed (see $dir/bench_M$M.log)"; tail -20 "$dir/bench_M$M.log"; rc=1; continue; }
  ncu -i "$rep.ncu-rep" --page raw --csv > "$rep.raw.csv"
done
python3 - "$dir" <<'PY'
import csv, glob, os, sys
d = sys.argv[1]
# ncu's raw page: row 0 the metric names, row 1 their units (chosen per file), then one row per kernel.
SCALE = {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6,  # -> us
         "hz": 1e-9, "khz": 1e-6, "mhz": 1e-3, "ghz": 1,  # -> GHz
         "byte": 1e-6, "kbyte": 1e-3, "mbyte": 1, "gbyte": 1e3, "tbyte": 1e6,  # -> MB
         "kbyte/block": 1, "byte/block": 1e-3, "mbyte/block": 1e3,  # -> KB per block
         "register/thread": 1}
cols = [("gpu__time_duration.sum", "us"), ("sm__cycles_elapsed.avg.per_second", "SM GHz"),
        ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "tensor %"),
        ("dram__bytes_read.sum", "DRAM rd MB"), ("dram__bytes_write.sum", "DRAM wr MB"), ("lts__t_bytes.sum", "L2 MB"),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "smem wavefronts"),
        ("l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed", "smem rd %"),
        ("l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed", "smem wr %"), ("launch__grid_size", "grid"),
        ("launch__cluster_dim_x", "cx"), ("launch__cluster_dim_y", "cy"), ("launch__shared_mem_per_block_dynamic", "smem KB"),
        ("launch__registers_per_thread", "regs")]
out = ["| M | kernel | " + " | ".join(c[1] for c in cols) + " |", "|---:|---|" + "---:|" * len(cols)]
for f in sorted(glob.glob(os.path.join(d, "ncu_gemm_M*.raw.csv")), key=lambda p: int(p.split("_M")[-1].split(".")[0])):
    M = f.split("_M")[-1].split(".")[0]
    rows = list(csv.reader(open(f)))
    if len(rows) < 3: continue
    hdr, units = rows[0], rows[1]
    for r in rows[2:]:
        rec, unit = dict(zip(hdr, r)), dict(zip(hdr, units))
        vals = []
        for key, _ in cols:
            v = rec.get(key, "").replace(",", "")
            u = unit.get(key, "").strip().lower()
            try:
                x = float(v)
            except ValueError:
                vals.append(v or "-")
                continue
            if u and u not in SCALE and u != "%":
                sys.exit(f"ncu_gemm.sh: metric {key}: unit {u!r} not known; add it to SCALE")
            vals.append(f"{x * SCALE.get(u, 1):.4g}")
        out.append(f"| {M} | {rec.get('Kernel Name', '?')[:60]} | " + " | ".join(vals) + " |")
open(os.path.join(d, "ncu_gemm.md"), "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
exit $rc
