#!/usr/bin/env python3
"""Opcode counts of each variant and its folded link (cuobjdump -sass), for what the fold buys.

usage: sass_ops.py KERNELS_DIR > ops.json   (<family>/<kernel>.cubin beside <kernel>_control.cubin)

Per cubin, over all its functions: instructions (without NOPs), and the opcodes where an unfolded
binding shows: global / generic / constant loads (LDG, LD, LDC, ULDC), local spills (LDL, STL),
calls (CALL, RET), and the function count (a component called rather than inlined is a function).
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys

INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
KEEP = ["LDG", "LD", "LDC", "ULDC", "LDL", "STL", "CALL", "RET", "BAR", "LDS", "STS"]


def ops(path):
    out = subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout
    c, funcs = collections.Counter(), 0
    for line in out.splitlines():
        if FUNC.match(line):
            funcs += 1
            continue
        m = INSTR.match(line)
        if m:
            c[m.group(1)] += 1
    total = sum(v for k, v in c.items() if k != "NOP")
    return {"functions": funcs, "instructions": total, **{k: c.get(k, 0) for k in KEEP}}


res = {}
for cub in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.cubin"))):
    if cub.endswith("_control.cubin"):
        continue
    name = os.path.relpath(cub, sys.argv[1])[:-6]
    res[name] = {"variant": ops(cub), "folded": ops(cub[:-6] + "_control.cubin")}
json.dump(res, sys.stdout, indent=1)
