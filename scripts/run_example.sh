#!/usr/bin/env bash
# The main job: set up, build, link the GEMM example from its three owners' components
# (build/examples/gemm/gemm.cubin + gemm.map, and the monolithic control), show the map, and on
# a machine with a GPU run both against a CPU reference and time them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
G=build/examples/gemm
echo
echo "== pipelink link (as the build ran it):"
echo "build/pipelink link examples/gemm/loader/contract.toml examples/gemm/mma/contract.toml \\"
echo "    examples/gemm/mma/contract.toml examples/gemm/writer/contract.toml -L $G -o $G/gemm.cubin --map $G/gemm.map"
./build/pipelink link examples/gemm/loader/contract.toml examples/gemm/mma/contract.toml examples/gemm/mma/contract.toml \
  examples/gemm/writer/contract.toml -L $G -o $G/gemm.cubin --map $G/gemm.map --save-temps -v
echo
cat $G/gemm.map
echo
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  $G/run_gemm --linked $G/gemm.cubin $G/gemm.map --control $G/gemm_control.cubin $G/gemm_control.map \
    --M 4096 --N 4096 --K 4096 --iters 30
else
  echo "no GPU here: linked $G/gemm.cubin (and $G/gemm_control.cubin); run this script on a machine with an H100/H200 to execute it"
fi
