#!/usr/bin/env bash
# The cost of linking, per example kernel (CPU only): bench/relink/relink.py over the build, results
# in bench/results/relink.{json,md}. Usage: bash bench/relink/run.sh [BUILD_DIR] [--reps N] [--before PIPELINK]
# --before: another pipelink binary timed on the same links (e.g. main's, before one-pass linking).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then B=$1; shift; fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
RES=${RESULTS_DIR:-$root/bench/results}
python3 "$here/relink.py" "$B" "$RES/relink.json" "$RES/relink.md" "$@"
