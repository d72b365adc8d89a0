#!/usr/bin/env python3
"""Compares the SASS of every linked kernel with its monolithic control (cuobjdump -sass).

usage: sass_compare.py KERNELS_DIR > sass.json

KERNELS_DIR holds <family>/<kernel>.cubin and <kernel>_control.cubin (bench_lvc's layout). For each
pair and each function in it: the instruction count (and the count without NOPs), whether the
instruction text is identical, whether the encodings (both 64-bit halves of every instruction) are
identical, and where not, how many instructions differ (difflib opcodes over the instruction text).
Also cuobjdump -res-usage of both (registers, stack, shared, local).
"""
import difflib
import glob
import json
import os
import re
import subprocess
import sys

INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
ENC2 = re.compile(r"^\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")


def sass(path):
    out = subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = INSTR.match(line)
        if m:
            cur.append([m.group(2), m.group(3), None])
            continue
        m = ENC2.match(line)
        if m and cur and cur[-1][2] is None:
            cur[-1][2] = m.group(1)
    return funcs


def res_usage(path):
    out = subprocess.run(["cuobjdump", "-res-usage", path], check=True, capture_output=True, text=True).stdout
    lines = [l.strip() for l in out.splitlines() if "REG:" in l]
    return lines


def compare(linked, control):
    a, b = sass(linked), sass(control)
    funcs = []
    for name in sorted(set(a) | set(b)):
        fa, fb = a.get(name, []), b.get(name, [])
        ta, tb = [x[0] for x in fa], [x[0] for x in fb]
        same_text = ta == tb
        same_enc = same_text and [x[1:] for x in fa] == [x[1:] for x in fb]
        differing = 0
        if not same_text:
            sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
            for tag, i1, i2, j1, j2 in sm.get_opcodes():
                if tag != "equal":
                    differing += max(i2 - i1, j2 - j1)
        funcs.append({
            "function": name,
            "in_linked": name in a, "in_control": name in b,
            "instructions_linked": len(ta), "instructions_control": len(tb),
            "non_nop_linked": sum(1 for t in ta if not t.startswith("NOP")),
            "non_nop_control": sum(1 for t in tb if not t.startswith("NOP")),
            "text_identical": same_text, "encoding_identical": same_enc,
            "instructions_differing": differing,
        })
    ra, rb = res_usage(linked), res_usage(control)
    return {
        "identical": bool(funcs) and all(f["encoding_identical"] and f["in_linked"] and f["in_control"] for f in funcs),
        "functions": funcs,
        "res_usage_linked": ra, "res_usage_control": rb,
    }


def main():
    d = sys.argv[1]
    pairs = {}
    for control in sorted(glob.glob(os.path.join(d, "*", "*_control.cubin"))):
        linked = control[: -len("_control.cubin")] + ".cubin"
        if not os.path.exists(linked):
            continue
        key = os.path.relpath(linked, d)[: -len(".cubin")]
        pairs[key] = compare(linked, control)
        f = pairs[key]["functions"]
        print(f"sass {key}: {'identical' if pairs[key]['identical'] else 'DIFFERENT'}; "
              + ", ".join(f"{x['function']} {x['instructions_linked']}/{x['instructions_control']} instr" for x in f),
              file=sys.stderr)
    if not pairs:
        sys.exit("sass_compare: no linked/control pairs under " + d)
    json.dump(pairs, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
