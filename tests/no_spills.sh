#!/usr/bin/env bash
# Every kernel the build links (examples and transfer tests) assembles without register spills:
# its map's ptxas section reads "spill stores 0 B, loads 0 B". The linker only warns on a spill, so
# without this test a change that makes a main loop spill (session 27: 27 links) builds and passes.
set -u
B=$1
fail=0 n=0
while IFS= read -r map; do
  n=$((n + 1))
  line=$(grep -m1 -A1 '^== ptxas' "$map" | tail -n1)
  if [ -z "$line" ]; then echo "FAIL $map: no ptxas section"; fail=1
  elif ! grep -q 'spill stores 0 B, loads 0 B' <<<"$line"; then echo "FAIL $map: ${line#  }"; fail=1
  fi
done < <(find "$B/examples" "$B/tests/transfer" -name '*.map' | sort)
[ $n -gt 0 ] || { echo "FAIL: no maps under $B/examples"; exit 1; }
[ $fail -eq 0 ] && echo "ok: $n linked kernels, none spills"
exit $fail
