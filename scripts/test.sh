#!/usr/bin/env bash
# The tests: set up, build, run every CPU test (golden cases, unit tests, the example's full link
# and PTX inspection). GPU tests run only where a GPU exists; elsewhere they report
# "skipped: no GPU" (ctest: Skipped), never a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)"
