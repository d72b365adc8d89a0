#!/usr/bin/env bash
# One golden case: tests/golden/<case>/ holds contracts, an `args` file and expectations.
#   args          the pipelink command line after the binary, run inside the case directory;
#                 @OBJ@ expands to a scratch directory holding the case's compiled *.cu files
#                 and @OUT@ to a scratch output directory
#   expect.txt    the exact stderr (diagnostics)
#   expect.map    (optional) the exact map written to @OUT@/out.map
#   expect.svg    (optional) the exact SVG map written to @OUT@/out.svg (--map-svg), which must
#                 also parse as XML (checked with python3 where it exists)
#   expect.h      (optional) the exact header written to @OUT@/out.h (pipelink header)
#   expect.rc     (optional) the exit status; default 1 if expect.txt has "error:", else 0
#   *.cu          (optional) component sources, compiled first with `pipelink compile`
#   compile_args  (optional) more arguments for those compiles (-arch=sm_100a)
# On a failed link the case also checks that nothing was written to @OUT@.
set -u
bin=$(realpath "$1"); case_dir=$2
name=$(basename "$case_dir")
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/obj" "$scratch/out"
cd "$case_dir" || exit 1
for cu in *.cu; do
  [ -e "$cu" ] || continue
  # shellcheck disable=SC2046
  "$bin" compile "$cu" $(cat compile_args 2>/dev/null) -o "$scratch/obj/${cu%.cu}.ltoir" || { echo "FAIL $name: cannot compile $cu"; exit 1; }
done
args=$(sed -e "s#@OBJ@#$scratch/obj#g" -e "s#@OUT@#$scratch/out#g" args)
# shellcheck disable=SC2086
"$bin" $args 2>"$scratch/stderr" >/dev/null
rc=$?
want_rc=0; grep -q "error:" expect.txt && want_rc=1
[ -f expect.rc ] && want_rc=$(cat expect.rc)
sed -i "s#$scratch#@SCRATCH@#g" "$scratch/stderr"
fail=0
if [ "$rc" != "$want_rc" ]; then echo "FAIL $name: exit status $rc, expected $want_rc"; fail=1; fi
if ! diff -u expect.txt "$scratch/stderr"; then echo "FAIL $name: diagnostics differ (above: - expected, + actual)"; fail=1; fi
if [ -f expect.map ]; then
  if ! diff -u expect.map "$scratch/out/out.map"; then echo "FAIL $name: map differs"; fail=1; fi
fi
if [ -f expect.svg ]; then
  if ! diff -u expect.svg "$scratch/out/out.svg"; then echo "FAIL $name: SVG map differs"; fail=1; fi
  if command -v python3 >/dev/null && [ -f "$scratch/out/out.svg" ] &&
     ! python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$scratch/out/out.svg"; then
    echo "FAIL $name: the SVG map is not well-formed XML"; fail=1
  fi
fi
if [ -f expect.h ]; then
  if ! diff -u expect.h "$scratch/out/out.h"; then echo "FAIL $name: header differs"; fail=1; fi
fi
if [ "$want_rc" != 0 ] && [ -n "$(ls -A "$scratch/out")" ]; then
  echo "FAIL $name: a failed link wrote files:"; ls "$scratch/out"; fail=1
fi
[ $fail = 0 ] && echo "ok $name"
exit $fail
