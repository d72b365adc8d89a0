#!/usr/bin/env bash
# For every linked kernel the build made, its monolithic control (component sources and the same
# generated unit as one NVRTC program) must have byte-identical machine code: linking costs nothing.
set -u
B=$1
fail=0 n=0
for control in "$B"/examples/*/*_control.cubin "$B"/tests/transfer/*_control.cubin; do
  linked=${control%_control.cubin}.cubin
  [ -f "$linked" ] || continue
  a=$(readelf -x .text.pipelink_kernel "$linked" 2>/dev/null | md5sum)
  b=$(readelf -x .text.pipelink_kernel "$control" 2>/dev/null | md5sum)
  size=$(readelf -x .text.pipelink_kernel "$linked" 2>/dev/null | wc -l)
  n=$((n + 1))
  if [ "$size" -lt 10 ]; then echo "FAIL $linked: no .text.pipelink_kernel"; fail=1
  elif [ "$a" != "$b" ]; then echo "FAIL $linked and $control: machine code differs"; fail=1
  else echo "ok   $(basename "$linked"): identical to its control ($size lines of hex)"; fi
done
[ $n -gt 0 ] || { echo "FAIL: no linked kernels with controls under $B/examples"; exit 1; }
exit $fail
