#!/usr/bin/env bash
# CPU test of the modified-facts experiment (no GPU): after build.sh, classic linking must have
# accepted every case, and PipeLink must have linked exactly the cases expected to work and refused
# the others with a diagnostic.
set -u
B=${1:-build}
bash "$(dirname "$0")/build.sh" "$B" >/dev/null || { echo "FAIL: build.sh"; exit 1; }
fail=0
for D in "$B"/modified_facts/*/; do
  c=$(basename "$D"); [ "$c" = original ] && continue
  exp=$(cat "$D/expected"); pl=$(cat "$D/pipelink/link_status"); cl=$(cat "$D/classic/link_status")
  want=0; [ "$exp" = refuse ] && want=1
  if [ "$cl" != 0 ]; then echo "FAIL $c: classic linking refused (it checks nothing; it should link)"; fail=1; fi
  if [ "$pl" != "$want" ]; then echo "FAIL $c: PipeLink link status $pl, expected $want"; fail=1
  elif [ "$want" = 1 ] && ! grep -q "error:" "$D/pipelink/diagnostics.txt"; then echo "FAIL $c: refused without a diagnostic"; fail=1
  else echo "ok   $c: classic links; PipeLink $([ "$want" = 1 ] && echo "refuses: $(head -1 "$D/pipelink/diagnostics.txt")" || echo links)"; fi
done
exit $fail
