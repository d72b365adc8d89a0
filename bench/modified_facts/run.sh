#!/usr/bin/env bash
# The modified-facts experiment in one command: builds every case (CPU: classic and PipeLink
# variants) and, where a GPU exists, runs them. Results: bench/results/modified_facts.{md,json}.
# Usage: bash bench/modified_facts/run.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
bash bench/modified_facts/build.sh "$B"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  bash bench/modified_facts/run_gpu.sh "$B"
else
  echo "no GPU here: built the cases under $B/modified_facts; run this on a GPU machine to execute them"
  for d in "$B"/modified_facts/*/pipelink/diagnostics.txt; do [ -s "$d" ] && { echo "== $d"; cat "$d"; }; done
fi
