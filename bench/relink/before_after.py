#!/usr/bin/env python3
"""One link of the same inputs by two pipelink binaries (main before one-pass linking, and this
one), interleaved, 5 runs each: wall and CPU seconds; the cubins must be byte-identical.
usage: before_after.py OLD_PIPELINK NEW_PIPELINK BUILD_DIR OUT_JSON   (run from the repository root)"""
import json, os, resource, statistics, subprocess, sys, tempfile, time

old, new, build, out = sys.argv[1:5]
EX = "examples"
K = {"gemm/gemm": (["gemm/loader/contract.toml", "gemm/mma/contract.toml", "gemm/mma/contract.toml",
                    "gemm/writer/contract.toml"], [], ["gemm"]),
     "qwen_mlp/fused": (["qwen_mlp/loader/contract.toml", "qwen_mlp/mma/contract.toml", "qwen_mlp/mma/contract.toml",
                         "qwen_mlp/swiglu/contract.toml", "qwen_mlp/store/contract.toml"], [], ["qwen_mlp"]),
     "moe/down": (["moe/dispatch/a_loader.toml", "moe/gemm/w_loader.toml", "moe/gemm/mma_down.toml",
                   "moe/gemm/mma_down.toml", "moe/combine/contract.toml"], ["out=acc"], ["moe", "qwen_mlp"])}
cache = tempfile.mkdtemp()
tmp = tempfile.mkdtemp()


def run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t0, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime


res = {}
for k, (cs, conn, L) in K.items():
    base = sum((["-L", os.path.join(build, "examples", l)] for l in L), []) + sum((["--connect", c] for c in conn), [])
    ins = [os.path.join(EX, c) for c in cs]
    cmds = {"main (3 nvJitLink passes)": [old, "link", *ins, *base, "-o", f"{tmp}/o1.cubin"],
            "this branch, no cache": [new, "link", *ins, *base, "-o", f"{tmp}/o2.cubin"],
            "this branch, cache warm": [new, "link", *ins, *base, "-o", f"{tmp}/o3.cubin", "--cache-dir", cache],
            "control (this branch)": [new, "link", *ins, *base, "-o", f"{tmp}/o4.cubin", "--control"]}
    run(cmds["this branch, cache warm"])
    s = {n: [] for n in cmds}
    for _ in range(5):
        for n, c in cmds.items():
            s[n].append(run(c))
    res[k] = {n: {"wall_s": [x[0] for x in v], "cpu_s": [x[1] for x in v]} for n, v in s.items()}
    same = open(f"{tmp}/o1.cubin", "rb").read() == open(f"{tmp}/o2.cubin", "rb").read() == open(f"{tmp}/o3.cubin", "rb").read()
    res[k]["cubins_identical"] = same
    print(k, same, {n: (round(statistics.median(x[0] for x in v), 2), round(statistics.median(x[1] for x in v), 2))
                    for n, v in s.items()})
json.dump({"what": "pipelink link of the same inputs: main before this branch vs this branch, 5 interleaved runs each",
           "load": os.getloadavg(), "kernels": res}, open(out, "w"), indent=1)
