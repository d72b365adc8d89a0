#!/usr/bin/env bash
# Installs what PipeLink needs (Debian packages; the CUDA toolkit is expected under
# /usr/local/cuda or on PATH) and configures + builds into ./build. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
[ -f /usr/include/toml++/toml.h ] || need+=(libtomlplusplus-dev)
[ -f /usr/include/CLI/CLI.hpp ] || need+=(libcli11-dev)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v FileCheck-14 >/dev/null || [ -x /usr/lib/llvm-14/bin/FileCheck ] || need+=(llvm-14-tools)  # tests/filecheck
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null; then
  [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH || { echo "setup: no CUDA toolkit (nvcc) found" >&2; exit 1; }
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
