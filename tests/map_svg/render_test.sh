#!/usr/bin/env bash
# map_svg.render: draws the Qwen3-32B fused kernel's map as a picture (pipelink check --map-svg),
# checks that the SVG parses as XML and is the one committed at docs/images/qwen_fused_map.svg
# (the README's picture), renders it in headless Chromium and checks the screenshot is a picture:
# the expected size, many distinct colours, the drawing's fill colours present, neither blank nor
# solid. Without chromium it reports "skipped: no chromium" (exit 77: ctest Skipped), never a pass.
# Usage: render_test.sh BUILD_DIR  (run from the source root). PL_SVG_PNG=path keeps the screenshot.
set -u
build=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
q=$src/examples/qwen_mlp
"$build/pipelink" check "$q/loader/contract.toml" "$q/mma/contract.toml" "$q/mma/contract.toml" \
  "$q/swiglu/contract.toml" "$q/store/contract.toml" --map-svg "$scratch/qwen.svg" || { echo "FAIL: pipelink check"; exit 1; }
python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag == "{http://www.w3.org/2000/svg}svg", r.tag' \
  "$scratch/qwen.svg" || { echo "FAIL: the SVG does not parse as an <svg> document"; exit 1; }
if ! cmp -s "$scratch/qwen.svg" "$src/docs/images/qwen_fused_map.svg"; then
  echo "FAIL: docs/images/qwen_fused_map.svg is stale; regenerate it with:"
  echo "  build/pipelink check examples/qwen_mlp/{loader,mma,mma,swiglu,store}/contract.toml --map-svg docs/images/qwen_fused_map.svg"
  exit 1
fi
if [ -z "$chromium" ]; then echo "skipped: no chromium"; exit 77; fi
# Headless Chromium wants a writable home; it runs as root here, hence --no-sandbox.
HOME=$scratch timeout 180 "$chromium" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$scratch/profile" --screenshot="$scratch/qwen.png" --window-size=1400,1000 "file://$scratch/qwen.svg" \
  >"$scratch/chromium.log" 2>&1
[ -s "$scratch/qwen.png" ] || { echo "FAIL: chromium wrote no screenshot"; cat "$scratch/chromium.log"; exit 1; }
[ -n "${PL_SVG_PNG:-}" ] && cp "$scratch/qwen.png" "$PL_SVG_PNG"
python3 "$src/tests/map_svg/png_check.py" "$scratch/qwen.png" 1400 1000 || exit 1
echo "ok map_svg.render"
