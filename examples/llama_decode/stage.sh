#!/usr/bin/env bash
# Copies what a GPU run of the llama_decode example and bench needs into one directory (no build
# there): the Python package with its libraries, the linked kernels and the selection table, the
# scripts. Usage: bash examples/llama_decode/stage.sh DEST [CHECKED_KERNEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=$1
rm -rf "$dest"
mkdir -p "$dest/py" "$dest/kernels"
cp -r build/python/pipelink "$dest/py/"
cp build/examples/llama_decode/attn_{a,b}.{cubin,map} build/examples/llama_decode/select.json "$dest/kernels/"
cp examples/llama_decode/decode.py bench/llama_decode/bench.py "$dest/"
if [ $# -ge 2 ]; then
  mkdir -p "$dest/kernels_checked"
  cp "$2"/attn_{a,b}.{cubin,map} "$2"/select.json "$dest/kernels_checked/"
fi
du -sh "$dest"
