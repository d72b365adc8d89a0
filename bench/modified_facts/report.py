"""Turns run_gpu.sh's rows into bench/results/modified_facts.{md,json}."""
import json
import sys

tsv, md, js = sys.argv[1:4]
rows = []
for line in open(tsv):
    f = line.rstrip("\n").split("|")
    if len(f) < 8:
        continue
    rows.append(dict(case=f[0], way=f[1], expected=f[2], link=f[3], finished=f[4], unwritten=f[5], rel_err=f[6], result=f[7].strip(),
                     max_abs_err=f[8] if len(f) > 8 else "-"))
json.dump(rows, open(js, "w"), indent=1)
with open(md, "w") as o:
    o.write("# Modified facts: one owner changes one constant, only its component is rebuilt\n\n"
            "MoE gate/up kernel (Qwen3-30B-A3B experts, T = 4096 tokens), every component built with PL_CHECKED "
            "(a pipe wait that cannot complete times out, reports its pipe, stage and phase, and the kernel drains; "
            "each run also under a 60 s host timeout). *classic*: each component carries its own compile-time copy of "
            "the constants and the layout derived from them, linked by bare nvJitLink. *PipeLink*: the changed "
            "contract and object, relinked. Unwritten = NaN elements of the poisoned intermediate; rel err = Y rows of "
            "64 tokens against a CPU double-precision reference.\n\n"
            "| case | way | links | finishes | unwritten | rel err | max abs err | result |\n|---|---|---|---|---:|---:|---:|---|\n")
    for r in rows:
        o.write(f"| {r['case']} | {r['way']} | {r['link']} | {r['finished']} | {r['unwritten']} | {r['rel_err']} | {r['max_abs_err']} | {r['result']} |\n")
print(open(md).read())
