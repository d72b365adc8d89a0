#!/usr/bin/env bash
# Every target of the table links what its instructions allow (issue 10, item 4). CPU only.
#
#   1. `pipelink targets` lists sm_90a, sm_100a, sm_103a and sm_120a.
#   2. The GEMM example (TMA + mma.sync + setmaxnreg: instructions every target has) is compiled
#      for each target with `pipelink compile -arch` and linked with `-arch`; the cubin's ELF header
#      must name that SM (e_flags bits 8..15, EI_ABIVERSION >= 8) and the map that target. sm_120a
#      has 99 KB of shared memory per block, so there the example's contracts are derived with
#      smaller rings (loader stages 4 -> 2, the c pipe 2 -> 1: 98432 bytes); as they are, the
#      link is refused with the target's limit (golden case target-sm120a-smem).
#   3. The Qwen main loop (wgmma) compiled for sm_100a and sm_120a (there its 64x104 tile with 2
#      stages, to fit 99 KB) is refused for those targets,
#      with a [target] diagnostic naming the component and the instruction.
# Usage: tests/targets.sh BUILD_DIR
set -uo pipefail
B=$(cd "$1" && pwd)
PL=$B/pipelink
root=$(cd "$(dirname "$0")/.." && pwd)
G=$root/examples/gemm
Q=$root/examples/qwen_mlp
S=$(mktemp -d); trap 'rm -rf "$S"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

out=$("$PL" targets) || bad "pipelink targets failed"
for t in sm_90a sm_100a sm_103a sm_120a; do
  grep -q "^$t " <<<"$out" || bad "pipelink targets does not list $t"
done

elf_sm() {  # the SM a cubin is for, from its ELF header
  python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:4] == b"\x7fELF" and struct.unpack_from("<H", b, 18)[0] == 190, "not a CUDA cubin"
flags = struct.unpack_from("<I", b, 48)[0]
print((flags >> 8) & 0xFF if b[8] >= 8 else flags & 0xFF)
EOF
}

for t in sm_90a sm_100a sm_103a sm_120a; do
  O=$S/$t; mkdir -p "$O"
  for c in loader/tma_loader mma/mma_consumer writer/tile_writer; do
    "$PL" compile "$G/$c.cu" -arch="$t" -o "$O/$(basename "$c").o" || bad "$t: cannot compile $c"
  done
  L=$G/loader/contract.toml M=$G/mma/contract.toml W=$G/writer/contract.toml
  if [ "$t" = sm_120a ]; then
    sed -E 's/^stages = \{ value = 4,/stages = { value = 2,/' "$L" > "$O/loader.toml"
    sed -E 's/^stages( +)= 2$/stages\1= 1/' "$M" > "$O/mma.toml"
    sed -E 's/^stages( +)= 2$/stages\1= 1/' "$W" > "$O/writer.toml"
    L=$O/loader.toml M=$O/mma.toml W=$O/writer.toml
  fi
  if "$PL" link "$L" "$M" "$M" "$W" -L "$O" -arch="$t" -o "$O/gemm.cubin" --map "$O/gemm.map" 2>"$O/err"; then
    want=$(sed -E 's/^sm_([0-9]+)a?$/\1/' <<<"$t")
    got=$(elf_sm "$O/gemm.cubin")
    [ "$got" = "$want" ] || bad "$t: the GEMM cubin is for sm_$got"
    grep -q "^target $t" "$O/gemm.map" || bad "$t: the map does not name target $t"
    echo "ok $t: GEMM example linked, cubin for sm_$got, $(grep -o 'shared memory  ([0-9]* bytes of [0-9]*)' "$O/gemm.map")"
    grep "warning" "$O/err" | sed "s/^/   $t: /"
  else
    bad "$t: the GEMM example does not link"; cat "$O/err"
  fi
done

# wgmma exists on sm_90a only: the Qwen main loop is refused for the others, by name.
for t in sm_100a sm_120a; do
  O=$S/q_$t; mkdir -p "$O"
  "$PL" compile "$Q/loader/gu_loader.cu" -arch="$t" -o "$O/gu_loader.o" &&
    "$PL" compile "$Q/mma/wgmma_gu.cu" -arch="$t" -o "$O/wgmma_gu.o" &&
    "$PL" compile "$Q/store/tma_store.cu" -arch="$t" -o "$O/tma_store.o" || { bad "$t: cannot compile the Qwen components"; continue; }
  set -- "$Q/loader/contract.toml" "$Q/mma/contract.toml" "$Q/mma/contract.toml"
  if [ "$t" = sm_120a ]; then  # as on sm_90a its rings need 213056 bytes: 2 stages of the 64x104 tile fit in 99 KB
    "$PL" compile "$Q/mma/wgmma_gu.cu" -arch="$t" -D GU_TILE_N=104 -D GU_SPLIT_N=1 -D GU_INSTANCES=1 -o "$O/wgmma_gu_small.o" ||
      bad "$t: cannot compile the small main loop"
    sed -E "s/^stages = 5 /stages = 2 /" "$Q/loader/contract_small.toml" > "$O/loader.toml"
    set -- "$O/loader.toml" "$Q/mma/contract_small.toml"
  fi
  if "$PL" link "$@" "$Q/store/contract.toml" --connect out=acc -L "$O" -arch="$t" -o "$O/q.cubin" 2>"$O/err"; then
    bad "$t: the wgmma GEMM linked"
  elif grep -q "component 'wgmma_gu' uses wgmma (warpgroup MMA), which target $t does not have (only sm_90a).*\[target\]" "$O/err"; then
    echo "ok $t: the wgmma main loop is refused: $(grep -o "component 'wgmma_gu' uses wgmma[^[]*" "$O/err" | head -1)"
  else
    bad "$t: the wgmma GEMM is refused, but not for wgmma"; cat "$O/err"
  fi
done
exit $fail
