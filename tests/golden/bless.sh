#!/usr/bin/env bash
# Rewrites the expectations (expect.txt, and expect.map / expect.svg where the case has one) of the named golden
# cases from what the linker does now. Review the diff before committing: a blessed case proves
# only what its expectation says. Usage: tests/golden/bless.sh BUILD/pipelink CASE_DIR...
set -u
bin=$(realpath "$1"); shift
for case_dir in "$@"; do
  (
    cd "$case_dir" || exit 1
    scratch=$(mktemp -d); mkdir -p "$scratch/obj" "$scratch/out"
    # shellcheck disable=SC2046
    for cu in *.cu; do [ -e "$cu" ] && "$bin" compile "$cu" $(cat compile_args 2>/dev/null) -o "$scratch/obj/${cu%.cu}.ltoir"; done
    args=$(sed -e "s#@OBJ@#$scratch/obj#g" -e "s#@OUT@#$scratch/out#g" args)
    # shellcheck disable=SC2086
    "$bin" $args 2>"$scratch/stderr" >/dev/null
    sed "s#$scratch#@SCRATCH@#g" "$scratch/stderr" >expect.txt
    [ -f expect.map ] && [ -f "$scratch/out/out.map" ] && cp "$scratch/out/out.map" expect.map
    [ -f expect.svg ] && [ -f "$scratch/out/out.svg" ] && cp "$scratch/out/out.svg" expect.svg
    rm -rf "$scratch"
    echo "blessed $(basename "$case_dir")"
  )
done
