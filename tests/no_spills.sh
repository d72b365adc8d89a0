#!/usr/bin/env bash
# Every kernel the build links (examples, bench and transfer tests; each link and its control)
# assembles without register spills: its map's ptxas section reads "spill stores 0 B, loads 0 B".
# The linker only warns on a spill, so without this test a change that makes a main loop spill
# (session 27: 27 links) builds and passes. The maps come from $B/pipelink_links.txt (every
# pipelink_link call: "cubin|map|control cubin|control map"), not from globbing the build directory.
set -u
B=$1
L=$B/pipelink_links.txt
[ -f "$L" ] || { echo "FAIL: $L does not exist (configure the build)"; exit 1; }
fail=0 n=0
while IFS='|' read -r linked map control control_map; do
  [ -n "$linked" ] || continue
  # a link without a map cannot be checked: fail rather than pass it unchecked
  if [ -z "$map" ]; then echo "FAIL $linked: linked without MAP, so its spills cannot be read"; fail=1; fi
  for m in "$map" "$control_map"; do
    [ -n "$m" ] || continue
    n=$((n + 1))
    if [ ! -f "$m" ]; then echo "FAIL $m: not built"; fail=1; continue; fi
    line=$(grep -m1 -A1 '^== ptxas' "$m" | tail -n1)
    if [ -z "$line" ]; then echo "FAIL $m: no ptxas section"; fail=1
    elif ! grep -q 'spill stores 0 B, loads 0 B' <<<"$line"; then echo "FAIL $m: ${line#  }"; fail=1
    fi
  done
done < "$L"
[ $n -gt 0 ] || { echo "FAIL: no maps in $L"; exit 1; }
[ $fail -eq 0 ] && echo "ok: $n maps (links and their controls), none spills"
exit $fail
