#!/usr/bin/env bash
# Compiles one component for classic linking (bench/modified_facts/build.sh): its source with
# classic.cuh included first and PL_CLASSIC_HEADER naming its baked constants.
#   compile.sh nvcc|nvrtc SRC OUT HEADER PIPELINK_CLASSIC NVCC [flags: -DX ...]
set -euo pipefail
how=$1 src=$2 out=$3 hdr=$4 tool=$5 nvcc=$6; shift 6
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
if [ "$how" = nvrtc ]; then
  defs=(); for f in "$@"; do defs+=(-D "${f#-D}"); done
  "$tool" compile "$src" -o "$out" --pre-include "$here/classic.cuh" \
    -D "PL_CLASSIC_HEADER=\"$(realpath "$hdr")\"" "${defs[@]}"
else
  "$nvcc" -dc -std=c++17 -gencode arch=compute_90a,code=lto_90a -I"$root/include" -include "$here/classic.cuh" \
    "-DPL_CLASSIC_HEADER=\"$(realpath "$hdr")\"" "$@" "$src" -o "$out"
fi
