#!/usr/bin/env bash
# PipeLink as a CMake package (CPU): installs the build into a scratch prefix, then configures and
# builds this directory's tiny project against it with find_package(PipeLink), and checks
#   - the cubin and the map exist and the map has a `launch` line;
#   - touching one component's source rebuilds that component and the link, nothing else;
#   - an OUTPUT_NAME that differs from the contract's object is a configure error;
#   - a component is built with its contract's defines, and DEFINES that differ are a configure error;
#   - the installed linker reads the installed include/pipelink/device.cuh (the environment
#     variable PIPELINK_INCLUDE_DIR still overrides it);
#   - the exported library links into a program, and the installed Python package finds its libraries.
# Usage: run.sh <pipelink build dir> <nvcc>
set -u
B=$(realpath "$1"); NVCC=${2:-nvcc}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC_INCLUDE=$(cd "$HERE/../../include" && pwd)
unset PIPELINK_INCLUDE_DIR PIPELINK_LIB_DIR
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
P=$T/prefix; W=$T/project; O=$T/build
fail=0
die() { echo "FAIL: $*"; exit 1; }
check() { if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fail=1; fi; }
CUDA_ROOT=$(dirname "$(dirname "$(command -v "$NVCC" || echo /usr/local/cuda/bin/nvcc)")")

cmake --install "$B" --prefix "$P" >"$T/install.log" 2>&1 || { cat "$T/install.log"; die "cmake --install"; }
for f in bin/pipelink include/pipelink/device.cuh include/pipelink/pipelink.h lib/libpipelink.a \
         lib/libpipelink_runtime.a lib/libpipelink_c.so lib/libpipelink_rt_c.so \
         lib/cmake/PipeLink/PipeLinkConfig.cmake lib/cmake/PipeLink/PipeLinkConfigVersion.cmake \
         lib/cmake/PipeLink/PipeLinkFunctions.cmake lib/python/pipelink/__init__.py \
         lib/python/pipelink/libpipelink_c.so lib/python/pipelink/include/pipelink/device.cuh; do
  [ -e "$P/$f" ] || { echo "FAIL: not installed: $f"; fail=1; }
done

# The project, copied so the touch below leaves the source tree alone.
mkdir -p "$W" && cp "$HERE"/CMakeLists.txt "$HERE"/*.cu "$HERE"/*.toml "$HERE"/*.cpp "$W"/
cmake -S "$W" -B "$O" -DCMAKE_PREFIX_PATH="$P" -DCUDAToolkit_ROOT="$CUDA_ROOT" >"$T/configure.log" 2>&1 \
  || { cat "$T/configure.log"; die "configure against the installed package"; }
cmake --build "$O" >"$T/build1.log" 2>&1 || { cat "$T/build1.log"; die "build"; }
check '[ -s "$O/tiny.cubin" ] && [ -s "$O/tiny.map" ]' "tiny.cubin and tiny.map built"
check 'grep -q "^launch pipelink_kernel threads 96 " "$O/tiny.map"' "the map has a launch line (3 instances, 96 threads)"
check '[ -s "$O/alpha.o" ] && [ -s "$O/beta.ltoir" ]' "objects named by the contracts: alpha.o, beta.ltoir"
check '[ -s "$O/checked/alpha.o" ]' "DEFINES PL_CHECKED alone: built with the contract's defines too (alpha.cu needs them)"
check '"$O/include_dir" >/dev/null' "a program linked with PipeLink::pipelink runs"

# Touch one component: only it and the link are rebuilt.
sleep 1
touch "$T/stamp"
touch "$W/alpha.cu"
cmake --build "$O" >"$T/build2.log" 2>&1 || { cat "$T/build2.log"; die "rebuild"; }
check '[ "$O/alpha.o" -nt "$T/stamp" ]' "touching alpha.cu rebuilds alpha.o"
check '[ "$O/tiny.cubin" -nt "$T/stamp" ] && [ "$O/tiny.map" -nt "$T/stamp" ]' "... and relinks tiny.cubin and tiny.map"
check '! [ "$O/beta.ltoir" -nt "$T/stamp" ] && ! grep -q "NVRTC) beta" "$T/build2.log"' "... and does not recompile beta"
touch "$T/stamp2"
cmake --build "$O" >"$T/build3.log" 2>&1 || die "third build"
check '[ -z "$(find "$O" -maxdepth 1 -newer "$T/stamp2" -type f)" ]' "a second build does nothing"

# configure_fails NAME OPTION PATTERN LABEL: configuring with -DOPTION=ON must fail, and CMake's message
# (its lines joined: CMake wraps them) must contain PATTERN.
configure_fails() {
  if cmake -S "$W" -B "$T/$1" -DCMAKE_PREFIX_PATH="$P" -DCUDAToolkit_ROOT="$CUDA_ROOT" "-D$2=ON" >"$T/$1.log" 2>&1; then
    echo "FAIL $4: it configured"; fail=1
  else
    check "tr -s ' \\n' ' ' <'$T/$1.log' | grep -q '$3'" "$4: configure error"
  fi
}
# A mismatch between OUTPUT_NAME and the contract's object.
configure_fails mismatch PL_TEST_MISMATCH "differs from" "OUTPUT_NAME renamed.o vs object alpha.o"
# The object is built with the contract's defines (alpha.cu does not compile without them); DEFINES
# that differ from them are refused.
configure_fails defs PL_TEST_DEFINES_MISMATCH "differ from the defines" "DEFINES ALPHA_TILE_Q=16 vs the contract's ALPHA_TILE_Q=32"
# A defines array over several lines cannot be checked by the build: refused, saying so.
configure_fails ml PL_TEST_DEFINES_MULTILINE "as a one-line array" "a multi-line defines array"

# The installed pipelink includes the installed device.cuh: poison that copy and the link fails;
# PIPELINK_INCLUDE_DIR pointing elsewhere overrides it.
echo '#error "PL_INSTALLED_DEVICE_CUH"' >>"$P/include/pipelink/device.cuh"
(cd "$W" && "$P/bin/pipelink" link alpha.toml beta.toml -L "$O" -o "$T/poisoned.cubin") >"$T/poisoned.log" 2>&1
rc=$?
check '[ $rc != 0 ] && grep -q PL_INSTALLED_DEVICE_CUH "$T/poisoned.log"' "the installed pipelink reads <prefix>/include/pipelink/device.cuh"
(cd "$W" && PIPELINK_INCLUDE_DIR=$SRC_INCLUDE "$P/bin/pipelink" link alpha.toml beta.toml -L "$O" -o "$T/env.cubin") \
  >"$T/env.log" 2>&1
rc=$?
check '[ $rc = 0 ] && [ -s "$T/env.cubin" ]' "PIPELINK_INCLUDE_DIR overrides it"

if command -v python3 >/dev/null; then
  got=$(PYTHONPATH=$P/lib/python python3 -c 'import pipelink; print(pipelink.library_dir())' 2>&1)
  check '[ "$got" = "$P/lib/python/pipelink" ]' "the installed Python package finds its libraries ($got)"
fi
[ $fail = 0 ] || { for l in "$T"/*.log; do echo "== $l"; tail -20 "$l"; done; }
exit $fail
