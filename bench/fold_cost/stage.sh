#!/usr/bin/env bash
# Builds the fold-cost variants (build.py) and stages what run.sh needs into one folder.
# Usage: bash bench/fold_cost/stage.sh BUILD_DIR DEST
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "$1" && pwd); D=$2
python3 "$here/build.py" "$B" "$D" > "$D.build.log" 2>&1 || { tail -20 "$D.build.log"; exit 1; }
mv "$D.build.log" "$D/build.log"
cp "$B/bench/bench_lvc" "$B/bench/lvc_util.cubin" "$here/run.sh" "$here/sass_ops.py" "$here/../linked_vs_control/sass_compare.py" "$D/"
rm -rf "$D/ptx_objects"/*.toml
echo "stage: $(ls "$D"/ptx/k/*/*.cubin | wc -l) ptx and $(ls "$D"/nofold/k/*/*.cubin | wc -l) nofold cubins (with their folded controls) in $D"
