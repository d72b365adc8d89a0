#!/usr/bin/env bash
# For every linked kernel the build declares with a monolithic control (component sources and the
# same generated unit as one NVRTC program), the two must have byte-identical machine code: linking
# costs nothing. The links come from $B/pipelink_links.txt (written at configure time from every
# pipelink_link call: "cubin|map|control cubin|control map"), so a stale cubin left in the build
# directory is neither checked nor able to hide a missing one.
set -u
B=$1
L=$B/pipelink_links.txt
[ -f "$L" ] || { echo "FAIL: $L does not exist (configure the build)"; exit 1; }
fail=0 n=0
while IFS='|' read -r linked map control control_map; do
  [ -n "$control" ] || continue
  n=$((n + 1))
  if [ ! -f "$linked" ] || [ ! -f "$control" ]; then echo "FAIL $linked: it or its control $control was not built"; fail=1; continue; fi
  a=$(readelf -x .text.pipelink_kernel "$linked" 2>/dev/null | md5sum)
  b=$(readelf -x .text.pipelink_kernel "$control" 2>/dev/null | md5sum)
  size=$(readelf -x .text.pipelink_kernel "$linked" 2>/dev/null | wc -l)
  if [ "$size" -lt 10 ]; then echo "FAIL $linked: no .text.pipelink_kernel"; fail=1
  elif [ "$a" != "$b" ]; then echo "FAIL $linked and $control: machine code differs"; fail=1
  else echo "ok   $(basename "$linked"): identical to its control ($size lines of hex)"; fi
done < "$L"
[ $n -gt 0 ] || { echo "FAIL: no linked kernels with controls in $L"; exit 1; }
exit $fail
