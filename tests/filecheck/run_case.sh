#!/usr/bin/env bash
# One FileCheck case, in lld's style: tests/filecheck/<case>/ holds contracts, an `args` file and
# a `checks` file that matches only the lines that matter.
#   args     the pipelink command line after the binary, run inside the case directory; @OBJ@
#            expands to a scratch directory holding the case's compiled *.cu files and @OUT@ to a
#            scratch output directory (as in tests/golden)
#   checks   FileCheck directives (FileCheck-14). Prefix DIAG checks the diagnostics (stderr),
#            prefix MAP the map written to @OUT@/out.map: DIAG:, DIAG-NEXT:, DIAG-NOT:, MAP:,
#            MAP-NEXT:, MAP-SAME:, MAP-NOT:, ... Lines without a prefix are comments.
#            "RC: n" gives the expected exit status (default 0).
#   *.cu     (optional) component sources, compiled first with `pipelink compile`
# Usage: run_case.sh PIPELINK FILECHECK CASE_DIR
set -u
bin=$(realpath "$1"); filecheck=$2; case_dir=$(realpath "$3")
name=$(basename "$case_dir")
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/obj" "$scratch/out"
cd "$case_dir" || exit 1
[ -f checks ] || { echo "FAIL $name: no checks file"; exit 1; }
for cu in *.cu; do
  [ -e "$cu" ] || continue
  "$bin" compile "$cu" -o "$scratch/obj/${cu%.cu}.ltoir" || { echo "FAIL $name: cannot compile $cu"; exit 1; }
done
args=$(sed -e "s#@OBJ@#$scratch/obj#g" -e "s#@OUT@#$scratch/out#g" args)
# shellcheck disable=SC2086
"$bin" $args 2>"$scratch/stderr" >/dev/null
rc=$?
sed -i "s#$scratch#@SCRATCH@#g" "$scratch/stderr"
want_rc=$(sed -n 's/^RC: *\([0-9]*\).*/\1/p' checks | head -1)
want_rc=${want_rc:-0}
fail=0
if [ "$rc" != "$want_rc" ]; then echo "FAIL $name: exit status $rc, expected $want_rc"; cat "$scratch/stderr"; fail=1; fi
for prefix in DIAG MAP; do
  grep -q "^$prefix\(-[A-Z]*\)\?:" checks || continue
  input=$scratch/stderr
  if [ $prefix = MAP ]; then
    input=$scratch/out/out.map
    [ -f "$input" ] || { echo "FAIL $name: no map written"; fail=1; continue; }
  fi
  if ! "$filecheck" --check-prefix=$prefix --dump-input=fail --input-file="$input" checks; then
    echo "FAIL $name: $prefix checks (above)"; fail=1
  fi
done
[ $fail = 0 ] && echo "ok $name"
exit $fail
