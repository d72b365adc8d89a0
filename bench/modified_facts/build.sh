#!/usr/bin/env bash
# CPU side of the modified-facts experiment. For every case in cases.sh builds, under
# build/modified_facts/<case>/:
#   pipelink/  the changed contract, its rebuilt object, and `pipelink link` of all contracts
#              (or, for an expected refusal, the diagnostics)
#   classic/   every component compiled with its own baked copy of the constants (classic/classic.cuh
#              included first, `pipelink_classic classic-header`): the changed owner's copy follows
#              its new contract, the others' copies and the hand-written entry (the original
#              generated unit) do not; linked by bare nvJitLink (`pipelink_classic plain-link`)
# Everything is built with -DPL_CHECKED, so a pipe wait that can never complete traps with a
# message instead of hanging the GPU. Usage: bash bench/modified_facts/build.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
PL=$B/pipelink
CL=$B/pipelink_classic   # bench/modified_facts/classic: the experiment's classic linking
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
source bench/modified_facts/cases.sh
Q=examples/qwen_mlp
OUTB=$B/modified_facts
rm -rf "$OUTB" && mkdir -p "$OUTB"
trap 'rm -f examples/moe/*/.case_*.toml' EXIT   # the changed contracts live beside the originals while building

# The components of the gate/up kernel: name | contract | source | how it is built.
COMPONENTS=(
  "moe_gather|$M/dispatch/gather.toml|$M/dispatch/moe_gather.cu|nvcc|moe_gather.o"
  "moe_w_loader|$M/gemm/w_loader.toml|$M/gemm/moe_w_loader.cu|nvcc|moe_w_loader.o"
  "wgmma_gu|$M/gemm/mma_gu.toml|$Q/mma/wgmma_gu.cu|nvcc|wgmma_gu.o"
  "moe_swiglu|$M/activation/contract.toml|$M/activation/moe_swiglu.cu|nvrtc|moe_swiglu.ltoir"
  "tma_store|$Q/store/contract.toml|$Q/store/tma_store.cu|nvcc|tma_store.o"
)
contracts_of() {  # contracts of the link, with the changed component's contract swapped in
  local changed=$1 file=$2
  for c in "${COMPONENTS[@]}"; do
    IFS='|' read -r name contract _ <<<"$c"
    local use=$contract
    [ "$name" = "$changed" ] && use=$file
    echo -n "$use "
    [ "$name" = wgmma_gu ] && echo -n "$use "  # two instances
  done
}
compile() {  # compile SRC into OUT with flags
  local how=$1 src=$2 out=$3; shift 3
  if [ "$how" = nvrtc ]; then "$PL" compile "$src" -o "$out" "$@"
  else "$NVCC" -dc -std=c++17 -gencode arch=compute_90a,code=lto_90a -Iinclude "$@" "$src" -o "$out"; fi
}
nvrtc_flags() { for f in "$@"; do echo -n "-D ${f#-D} "; done; }

# The original link: its generated unit is the classic "hand-written" entry; its objects are the
# unchanged owners' objects on the PipeLink side.
ORIG=$OUTB/original
mkdir -p "$ORIG"
for c in "${COMPONENTS[@]}"; do
  IFS='|' read -r name contract src how obj <<<"$c"
  if [ "$how" = nvrtc ]; then compile nvrtc "$src" "$ORIG/$obj" -D PL_CHECKED; else compile nvcc "$src" "$ORIG/$obj" -DPL_CHECKED; fi
done
"$PL" link $(contracts_of none none) -L "$ORIG" -D PL_CHECKED -o "$ORIG/gate_up.cubin" --map "$ORIG/gate_up.map" --save-temps
cp "$ORIG/gate_up.cubin.generated.cu" "$ORIG/entry.cu"
"$PL" compile "$ORIG/entry.cu" -o "$ORIG/entry.ltoir" -D PL_CHECKED

for entry in "${CASES[@]}"; do
  IFS='|' read -r cname changed cfile sedexpr flags expect <<<"$entry"
  D=$OUTB/$cname
  mkdir -p "$D/pipelink" "$D/classic"
  echo "$expect" >"$D/expected"
  # --- PipeLink: the changed contract and object, relinked with everyone else's unchanged objects.
  new_contract=$(dirname "$cfile")/.case_$cname.toml   # beside the original: relative paths resolve the same
  sed -e "$sedexpr" "$cfile" >"$new_contract"
  cp "$new_contract" "$D/pipelink/changed_contract.toml"
  for c in "${COMPONENTS[@]}"; do
    IFS='|' read -r name contract src how obj <<<"$c"
    if [ "$name" = "$changed" ]; then
      if [ "$how" = nvrtc ]; then compile nvrtc "$src" "$D/pipelink/$obj" -D PL_CHECKED $(nvrtc_flags $flags)
      else compile nvcc "$src" "$D/pipelink/$obj" -DPL_CHECKED $flags; fi
    fi
  done
  set +e
  "$PL" link $(contracts_of "$changed" "$new_contract") -L "$D/pipelink" -L "$ORIG" -D PL_CHECKED \
    -o "$D/pipelink/gate_up.cubin" --map "$D/pipelink/gate_up.map" 2>"$D/pipelink/diagnostics.txt"
  echo $? >"$D/pipelink/link_status"
  set -e
  # --- Classic: each component with its own baked copy; only the changed owner's copy is new.
  for c in "${COMPONENTS[@]}"; do
    IFS='|' read -r name contract src how obj <<<"$c"
    hdr=$D/classic/$name.constants.cuh
    extra=""
    if [ "$name" = "$changed" ]; then
      # The changed owner's copy follows its new contract, even where a link would refuse it:
      # classic builds check nothing (the header lists what PipeLink would have refused).
      "$CL" classic-header $(contracts_of "$changed" "$new_contract") --component "$name" -o "$hdr"
      extra=$flags
    else
      "$CL" classic-header $(contracts_of none none) --component "$name" -o "$hdr"
    fi
    bash bench/modified_facts/classic/compile.sh "$how" "$src" "$D/classic/$obj" "$hdr" "$CL" "$NVCC" -DPL_CHECKED $extra
  done
  set +e
  "$CL" plain-link "$ORIG/entry.ltoir" "$D"/classic/*.o "$D"/classic/*.ltoir -o "$D/classic/gate_up.cubin" 2>"$D/classic/link_diagnostics.txt"
  echo $? >"$D/classic/link_status"
  set -e
  cp "$ORIG/gate_up.map" "$D/classic/gate_up.map"   # the classic host keeps its own copy too: the original
  rm -f "$new_contract"
  echo "built $cname: pipelink link status $(cat "$D/pipelink/link_status"), classic link status $(cat "$D/classic/link_status")"
done
