#!/usr/bin/env bash
# What the fold buys, on the GPU: for each unfolded variant (ptx, nofold) staged by stage.sh,
# the SASS against the folded link (sass_compare.py, sass_ops.py), then bench_lvc with the variant
# as "linked" and the folded link as "control", interleaved in one process.
#
# Usage: bash bench/fold_cost/run.sh STAGED_DIR [bench_lvc arguments]
# Writes fold_<variant>_{raw.json,sass.json,ops.json,log} to $OUT (or STAGED_DIR/out); report.py
# turns them into bench/results/fold_cost.{json,md}.
set -uo pipefail
S=$(cd "$1" && pwd); shift
O=${OUT:-$S/out}
mkdir -p "$O"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
rc=0
for v in ptx nofold; do
  python3 "$S/sass_compare.py" "$S/$v/k" > "$O/fold_${v}_sass.json" || rc=2
  python3 "$S/sass_ops.py" "$S/$v/k" > "$O/fold_${v}_ops.json" || rc=2
  timeout "${BENCH_TIMEOUT:-150}" "$S/bench_lvc" --kernels "$S/$v/k" --util "$S/lvc_util.cubin" --families gemm,qwen \
    --qwen-kernels fused,gemm,gemm_small --qwen-M 16,256,4096 --rounds 30 --json "$O/fold_${v}_raw.json" "$@" \
    > "$O/fold_${v}.log" 2>&1 || rc=$?
  tail -4 "$O/fold_${v}.log"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
exit $rc
