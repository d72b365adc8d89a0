#!/usr/bin/env bash
# Linked versus control on the GPU, one command: the SASS of every linked kernel against its
# control (cuobjdump), then bench_lvc over every configuration, then the report.
#
# Usage: bash bench/linked_vs_control/run.sh [BUILD_DIR | STAGED_DIR] [more bench_lvc arguments]
#   BUILD_DIR (default build): what the build made, staged first (stage.sh) into a temporary folder.
#   STAGED_DIR: a folder stage.sh made (holds bench_lvc and k/), used as it is.
# Writes bench/results/linked_vs_control.{json,md} (RESULTS_DIR overrides the folder), and copies
# them with the raw files to $OUT if set. Exit status: bench_lvc's (0 all checks passed), else 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
S=$root/build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then S=$(cd "$1" && pwd) || exit 2; shift; fi
RES=${RESULTS_DIR:-$root/bench/results}
mkdir -p "$RES" && RES=$(cd "$RES" && pwd)
if [ ! -x "$S/bench_lvc" ]; then
  T=$(mktemp -d)
  bash "$here/stage.sh" "$S" "$T" || exit 2
  S=$T
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
python3 "$here/sass_compare.py" "$S/k" > "$RES/linked_vs_control_sass.json" || { echo "run.sh: SASS comparison failed"; exit 2; }
echo "+ $S/bench_lvc --kernels $S/k --util $S/lvc_util.cubin --routing $S/routing.cubin --json $RES/linked_vs_control_raw.json $*"
timeout "${BENCH_TIMEOUT:-480}" "$S/bench_lvc" --kernels "$S/k" --util "$S/lvc_util.cubin" --routing "$S/routing.cubin" \
  --json "$RES/linked_vs_control_raw.json" "$@"
rc=$?
[ $rc -eq 124 ] && echo "run.sh: timed out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
# The kernels launched on torch tensors (attention, the Qwen kernels at the Llama shapes), where
# torch is installed: lvc_torch.py, in the same call, after bench_lvc.
extra=()
if [ -d "$S/kt" ] && python3 -c "import torch" 2>/dev/null; then
  python3 "$here/sass_compare.py" "$S/kt" > "$RES/linked_vs_control_torch_sass.json" || rc=2
  PYTHONPATH=$S/py timeout 300 python3 "$here/lvc_torch.py" --kernels "$S/kt" --json "$RES/linked_vs_control_torch_raw.json" || rc=2
  [ -f "$RES/linked_vs_control_torch_raw.json" ] && extra=("$RES/linked_vs_control_torch_raw.json" "$RES/linked_vs_control_torch_sass.json")
fi
if [ -f "$RES/linked_vs_control_raw.json" ]; then
  python3 "$here/report.py" "$RES/linked_vs_control_raw.json" "$RES/linked_vs_control_sass.json" \
    "$RES/linked_vs_control.json" "$RES/linked_vs_control.md" "${extra[@]}" || rc=2
fi
if [ -n "${OUT:-}" ]; then
  for f in linked_vs_control.json linked_vs_control.md linked_vs_control_raw.json linked_vs_control_sass.json \
           linked_vs_control_torch_raw.json linked_vs_control_torch_sass.json; do
    [ -f "$RES/$f" ] && cp "$RES/$f" "$OUT/"
  done
fi
exit $rc
