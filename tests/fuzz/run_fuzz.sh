#!/usr/bin/env bash
# run_fuzz.sh <contract_fuzz binary> [seconds=60]: replays every saved reproducer in
# tests/fuzz/regressions/ (each once, must not fail), then fuzzes for a bounded time from seeds
# made of the golden cases' contracts (one seed per file, and one per case with its contracts
# joined by "#%%" lines, as the target splits them). Exit 77 ("skipped: no libFuzzer") when the
# binary was not built (no clang with libFuzzer); a finding is written to $FUZZ_ARTIFACTS (default:
# a temporary directory, printed) and fails the run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-}; secs=${2:-60}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then echo "skipped: no libFuzzer"; exit 77; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
artifacts=${FUZZ_ARTIFACTS:-$work/artifacts}; mkdir -p "$artifacts" "$work/corpus" "$work/seeds"
opts=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$artifacts/")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
shopt -s nullglob
regs=("$here"/regressions/*)
if [ ${#regs[@]} -gt 0 ]; then
  "$bin" "${opts[@]}" "${regs[@]}" > "$work/replay.log" 2>&1 || { tail -40 "$work/replay.log"; echo "FAIL: a saved reproducer fails again"; exit 1; }
  echo "replayed ${#regs[@]} reproducers"
fi
n=0
for case_dir in "$here"/../golden/*/; do
  files=("$case_dir"*.toml)
  [ ${#files[@]} -gt 0 ] || continue
  for f in "${files[@]}"; do n=$((n + 1)); cp "$f" "$work/seeds/s$n.toml"; done
  n=$((n + 1)); first=1
  for f in "${files[@]}"; do
    [ $first = 1 ] || printf '\n#%%%%\n' >> "$work/seeds/joined$n.toml"
    cat "$f" >> "$work/seeds/joined$n.toml"; first=0
  done
done
echo "fuzzing for ${secs}s from $n seeds"
"$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 "$work/corpus" "$work/seeds" > "$work/fuzz.log" 2>&1
rc=$?
grep -E "^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb" "$work/fuzz.log" | tail -4
if [ $rc != 0 ]; then
  tail -60 "$work/fuzz.log"
  echo "FAIL: the fuzzer found a crash, hang or leak; reproducer(s) in $artifacts:"; ls "$artifacts"
  [ -n "${FUZZ_ARTIFACTS:-}" ] || { mkdir -p /tmp/pipelink-fuzz-findings; cp "$artifacts"/* /tmp/pipelink-fuzz-findings/ 2>/dev/null; echo "(copied to /tmp/pipelink-fuzz-findings)"; }
  exit 1
fi
echo "ok: no findings"
