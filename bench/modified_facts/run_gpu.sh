#!/usr/bin/env bash
# GPU side of the modified-facts experiment: runs every case built by build.sh, classic and
# PipeLink, through bench_moe's correctness check (T = 4096 tokens, poisoned intermediate, Y rows
# against a CPU double reference) under a 60 s host timeout each (and PL_CHECKED's trapping pipe
# waits inside), then writes bench/results/modified_facts.{json,md}.
# Usage: bash bench/modified_facts/run_gpu.sh [build-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
RES=${RESULTS_DIR:-bench/results}
mkdir -p "$RES"
E=$B/modified_facts
rows=()
for D in "$E"/*/; do
  c=$(basename "$D")
  [ "$c" = original ] && continue
  for way in classic pipelink; do
    W=$D$way
    st=$(cat "$W/link_status")
    if [ "$st" != 0 ]; then
      rows+=("$c|$way|$(cat "$D/expected")|refused|-|-|-|$(head -1 "$W/diagnostics.txt" 2>/dev/null | sed 's/|/\//g')|-")
      continue
    fi
    timeout 60 "$B/bench/bench_moe" --gu "$W/gate_up.cubin" "$W/gate_up.map" --down "$B/examples/moe/down.cubin" "$B/examples/moe/down.map" \
      --routing "$B/examples/moe/routing.cubin" --util "$B/bench/bench_util.cubin" --T 4096 --check-only --json "$W/check.json" >"$W/run.log" 2>&1
    rc=$?
    finished=yes; note=""
    if [ $rc -eq 124 ]; then finished="no (hung: killed after 60 s)"
    elif grep -q "pipe wait timed out" "$W/run.log"; then
      # PL_CHECKED: the first wait that can never complete names its pipe, then the kernel drains.
      finished="no (hung)"; note=$(grep -m1 -o "pipe wait timed out: pipe '[^']*' [a-z]* barrier, stage [0-9]*, phase parity [0-9]*" "$W/run.log")
    elif [ $rc -eq 2 ]; then finished="no (kernel fault)"; note=$(grep -m1 -iE "CUDA_ERROR[A-Z_]*" -o "$W/run.log")
    fi
    unwritten=$(python3 -c "import json;r=json.load(open('$W/check.json'))['results'][0];print(r['unwritten'])" 2>/dev/null || echo -)
    rel=$(python3 -c "import json;r=json.load(open('$W/check.json'))['results'][0];print('NaN' if r['rel_err'] is None else '%.2e'%r['rel_err'])" 2>/dev/null || echo -)
    maxabs=$(python3 -c "import json;r=json.load(open('$W/check.json'))['results'][0];print('NaN' if r.get('max_abs_err') is None else '%.2e'%r['max_abs_err'])" 2>/dev/null || echo -)
    ok=$(python3 -c "import json;r=json.load(open('$W/check.json'))['results'][0];print('correct' if r['ok'] else 'wrong')" 2>/dev/null || echo "no result")
    rows+=("$c|$way|$(cat "$D/expected")|linked|$finished|$unwritten|$rel|$ok ${note//|//}|$maxabs")
    echo "$c $way: rc $rc, finished $finished, unwritten $unwritten, rel err $rel, $ok"
  done
done
printf '%s\n' "${rows[@]}" >"$RES/modified_facts.tsv"
# Every run's log, in one archive (the device tool brings back few files).
tar czf "$RES/modified_facts_logs.tgz" -C "$E" $(cd "$E" && ls -d */*/run.log 2>/dev/null)
python3 bench/modified_facts/report.py "$RES/modified_facts.tsv" "$RES/modified_facts.md" "$RES/modified_facts.json"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/bench/results" && cp "$RES"/modified_facts* "$OUT/bench/results/"; fi
