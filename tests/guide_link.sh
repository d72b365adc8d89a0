#!/usr/bin/env bash
# ctest guide.link: the walkthrough of docs/components.md (section 10) on the CPU. Compiles
# examples/guide/scale_epilogue.cu with `pipelink compile`, links it between the Qwen3-32B loader /
# main loop and the TMA store (tiles 128x128 and 64x104) with no diagnostic at all (records and
# conformance pass, no warning), and checks the 128x128 kernel's machine code against its
# monolithic control (docs/components.md section 8).
# Usage: tests/guide_link.sh BUILD_DIR
set -u
B=$(realpath "$1")
SRC=$(cd "$(dirname "$0")/.." && pwd)
PL=$B/pipelink Q=$SRC/examples/qwen_mlp G=$SRC/examples/guide QO=$B/examples/qwen_mlp
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
step() {  # step NAME CMD...: runs CMD; any output on stderr or a non-zero status fails
  if ! "${@:2}" 2>"$tmp/err" >/dev/null || [ -s "$tmp/err" ]; then
    echo "FAIL $1:"; cat "$tmp/err"; fail=1; return 1
  fi
  echo "ok   $1"
}
step "compile scale_epilogue.cu" "$PL" compile "$G/scale_epilogue.cu" -o "$tmp/scale_epilogue.ltoir" || exit 1
WIDE=("$Q/loader/contract.toml" "$Q/mma/contract.toml" "$Q/mma/contract.toml" "$G/contract.toml" "$Q/store/contract.toml")
SMALL=("$Q/loader/contract_small.toml" "$Q/mma/contract_small.toml" "$G/contract.toml" "$Q/store/contract.toml")
step "link 128x128" "$PL" link "${WIDE[@]}" -L "$tmp" -L "$QO" -o "$tmp/scale.cubin" --map "$tmp/scale.map"
step "link 64x104" "$PL" link "${SMALL[@]}" -L "$tmp" -L "$QO" -o "$tmp/scale_small.cubin" --map "$tmp/scale_small.map"
if [ -f "$tmp/scale.map" ]; then
  grep -q "scale_epilogue" "$tmp/scale.map" && grep -q "registers 40" "$tmp/scale.map" \
    && echo "ok   map: scale_epilogue placed, warpgroup budget 40" || { echo "FAIL map"; fail=1; }
fi
if step "link --control 128x128" "$PL" link --control "${WIDE[@]}" -o "$tmp/scale_control.cubin"; then
  a=$(readelf -x .text.pipelink_kernel "$tmp/scale.cubin" | md5sum)
  b=$(readelf -x .text.pipelink_kernel "$tmp/scale_control.cubin" | md5sum)
  n=$(readelf -x .text.pipelink_kernel "$tmp/scale.cubin" | wc -l)
  if [ "$n" -gt 10 ] && [ "$a" = "$b" ]; then echo "ok   machine code identical to the control ($n lines of hex)"
  else echo "FAIL machine code differs from the control"; fail=1; fi
fi
exit $fail
