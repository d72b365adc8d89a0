#!/usr/bin/env python3
"""Stream-k against data-parallel for the Qwen3-32B gate/up GEMM (+ SwiGLU), one process, one timer.

    PYTHONPATH=build/python python3 bench/qwen_mlp/bench_streamk.py --kernels build/examples/qwen_mlp \
        [--M 16,128,1024,2048,4096] [--rounds 20] [--json out.json] [--md out.md]

The kernels (examples/CMakeLists.txt, session 10): the loader and the main loop built with
-DGU_UNITS=1 (they walk pl::unit_at), linked twice from the same objects: TILE_SCHEDULE stream-k
(<kind>_<tile>_sk: the partial last wave and one full wave split along k), TILE_SCHEDULE stream-k:0
(<kind>_<tile>_sk0: only the partial last wave) and data-parallel (<kind>_<tile>_dp). For each M the tile is the one
bench_torch.py's rule picks (fixed before this bench existed: 64 x 104 for M <= 64, else the 128 x
128 panel kernel where its last wave wastes <= 5%, else the least quantised of 128 x 104 / 128 x
128); this bench times that tile's committed kernel (the session-9 object, walking pl::tile_at),
its _dp and _sk twins, torch.mm (cuBLAS) and, for the fused kernels, torch.mm + a torch.compile'd
SwiGLU, all on the same X ~ N(0, 1), W ~ N(0, 0.02^2) bf16.

Checks (every contender, poisoned output, per element against the fp32 reference):
|err| <= 1e-3 + rtol |ref| (GU: 2^-7, H: 2^-6). The stream-k kernels add a split tile's f32
partials in another order than the data-parallel ones, so they are not bit-equal; the _dp twin
must be bit-equal to the committed kernel (same products, same order). A second stream-k launch
must equal the first bit for bit (the sum order is fixed: the block holding the first k slice,
then its peers in block order), which also checks that the workspace flags were cleared.

Prediction, written before the first run: stream-k pays where the last wave is partial (M = 16
and 128: 247 tiles = 1.87 waves; M = 2048: 24.24; M = 4096: 48.5) by up to the idle fraction
(6.5%, 3%, 1%) less the partials' cost, and costs a little where the waves are whole (M = 1024,
14.97 waves of 128 x 104).
Run 1 (H200, 2026-11-30 23:5x UTC, stream-k:1 only): slower everywhere, 2-5%; _sk0 added after it.
Run 2: _sk0 also slower at M = 128 and 1024 (3-5%), 1.4% faster at 2048 (GEMM). Reading: a stream-k
share starts at another k offset in every block, so blocks that share a W column (or an X row
block) no longer read the same k slice at the same time, and the region's operands outgrow what
L2 keeps; split-k (<kind>_<tile>_splitk: the R tail tiles each cut into G / R equal pieces, all
at the same k offsets) is the schedule that keeps them in step, added after run 2.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench as B  # noqa: E402  bench/common/bench.py
import pipelink  # noqa: E402
from bench_torch import add_torch_baselines, configure, poisoned_check, swiglu  # noqa: E402  the same tensor maps and params as bench_torch.py

HID, INTER = 5120, 25600
GU_N = 2 * INTER
ATOL, RTOL_GU, RTOL_H = 1e-3, 2.0 ** -7, 2.0 ** -6


def tile_for(M: int, sms: int) -> str:
    """bench_torch.py's selection rule (session 9), as tile names: small / sw / medium / ''."""
    if M <= 64:
        return "small"
    w = math.ceil(M / 128) * math.ceil(INTER / 128) / sms
    if math.ceil(w) / w - 1 <= 0.05:
        return "sw"
    cost = {t: math.ceil(math.ceil(M / 128) * math.ceil(INTER / tn) / sms) * 128 * tn for t, tn in (("medium", 104), ("", 128))}
    return "medium" if cost["medium"] < cost[""] else ""  # ties: the wider tile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--M", default="16,128,1024,2048,4096")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--profile", action="store_true",
                    help="launch each PipeLink GEMM variant of each M once (for ncu), in the order printed; no checks, no timing")
    a = ap.parse_args()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    seed = time.time_ns() % (1 << 62)
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = False
    ks = {}

    def kernel(name):
        if name not in ks:
            c, m = os.path.join(a.kernels, name + ".cubin"), os.path.join(a.kernels, name + ".map")
            ks[name] = pipelink.Kernel(c, m)
        return ks[name]

    if a.profile:
        W = torch.randn(GU_N, HID, dtype=torch.bfloat16, device=dev) * 0.02
        for M in [int(x) for x in a.M.split(",")]:
            tile = tile_for(M, sms)
            X = torch.randn(M, HID, dtype=torch.bfloat16, device=dev)
            base = "gemm" + (("_" + tile) if tile else "")
            for name in (base, base + "_dp", base + "_sk", base + "_sk0", base + "_splitk"):
                if not os.path.isfile(os.path.join(a.kernels, name + ".cubin")):
                    continue
                k = kernel(name)
                out = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
                g = configure(k, False, X, W, out, M, sms, panels="sw" in name)
                k.launch(g)
                torch.cuda.synchronize()
                print(f"profile: launched {name} at M = {M} (grid {g})", flush=True)
        return 0
    compiled = torch.compile(swiglu, dynamic=True)
    compiled(torch.randn(16, GU_N, dtype=torch.bfloat16, device=dev))
    W = torch.randn(GU_N, HID, dtype=torch.bfloat16, device=dev) * 0.02
    print(f"device: {props.name} ({sms} SMs); torch {torch.__version__}; seed {seed}; rounds {a.rounds}")
    res = dict(bench="qwen3_32b_streamk", device=props.name, sms=sms, torch=torch.__version__, seed=seed, rounds=a.rounds,
               date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               data="X ~ N(0,1), W ~ N(0, 0.02^2), bf16, the same for every contender", results=[])
    all_ok = True
    timer = B.RoundRobin(rounds=a.rounds, target_ms=2.0, seed=seed)
    for M in [int(x) for x in a.M.split(",")]:
        tile = tile_for(M, sms)
        X = torch.randn(M, HID, dtype=torch.bfloat16, device=dev)
        Xf = X.float()
        GU32 = Xf @ W.float().t()
        H32 = F.silu(GU32[:, :INTER]) * GU32[:, INTER:]
        del Xf
        outs, cont, refs = {}, {}, {}
        for kind in ("gemm", "fused"):
            fused = kind == "fused"
            base = kind + (("_" + tile) if tile else "")
            for name in (base, base + "_dp", base + "_sk", base + "_sk0", base + "_splitk"):
                if not os.path.isfile(os.path.join(a.kernels, name + ".cubin")):
                    continue
                k = kernel(name)
                out = torch.empty(M, INTER if fused else GU_N, dtype=torch.bfloat16, device=dev)
                g = configure(k, fused, X, W, out, M, sms, panels="sw" in name)
                outs[name] = out
                refs[name] = (H32, RTOL_H) if fused else (GU32, RTOL_GU)
                cont[name] = (lambda k=k, g=g: k.launch(g))
        hold = add_torch_baselines(cont, outs, refs, X, W, GU32, H32, compiled, RTOL_GU, RTOL_H)
        checks = {}
        for name, fn in cont.items():
            checks[name], out = poisoned_check(name, fn, outs, refs, hold, ATOL)
            all_ok &= checks[name]["ok"]
            if name.endswith(("_sk", "_sk0", "_splitk")):  # again: the same bits (fixed sum order, flags cleared)
                first = out.clone()
                out.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
                checks[name]["repeat_bit_equal"] = bool(torch.equal(first, out))
                all_ok &= checks[name]["repeat_bit_equal"]
            if name.endswith("_dp") and name[:-3] in outs:
                outs[name[:-3]].fill_(float("nan"))
                cont[name[:-3]]()
                torch.cuda.synchronize()
                checks[name]["bit_equal_to_committed"] = bool(torch.equal(outs[name], outs[name[:-3]]))
                all_ok &= checks[name]["bit_equal_to_committed"]
            print(f"  M={M} {name}: {B.tol_line(checks[name])}"
                  + (f", repeat bit-equal {checks[name]['repeat_bit_equal']}" if "repeat_bit_equal" in checks[name] else "")
                  + (f", bit-equal to committed {checks[name]['bit_equal_to_committed']}" if "bit_equal_to_committed" in checks[name] else ""),
                  flush=True)
        del GU32, H32
        c0 = B.clocks()
        samples = timer.run(cont)
        c1 = B.clocks()
        st = {n: B.stats(v) for n, v in samples.items()}
        claims = {}
        for kind in ("gemm", "fused"):
            base = kind + (("_" + tile) if tile else "")
            sk, dp = base + "_sk", base + "_dp"
            for x in (sk, base + "_sk0", base + "_splitk"):
                if x in samples and base in samples:
                    claims[f"{x} / {base}"] = B.paired_ratio(samples[x], samples[base])
            if dp in samples and base in samples:
                claims[f"{dp} / {base}"] = B.paired_ratio(samples[dp], samples[base])
            bl = "torch.mm" if kind == "gemm" else "torch.mm+swiglu-compiled"
            for n in (base, sk, base + "_sk0", base + "_splitk"):
                if n in samples:
                    claims[f"{n} / {bl}"] = B.paired_ratio(samples[n], samples[bl])
        flops = 2.0 * M * HID * GU_N
        for n, s in st.items():
            print(f"  M={M} {n}: {B.fmt_ms(s)}  ({flops / (s['median'] * 1e-3) / 1e12:.0f} TFLOP/s)")
        for c, r in claims.items():
            print(f"  M={M} {c}: {B.fmt_ratio(r)}")
        print(f"  clocks: {B.clocks_line(c0)} -> {B.clocks_line(c1)}", flush=True)
        res["results"].append(dict(M=M, tile=tile or "128x128", stats=st, claims=claims, checks=checks, clocks_before=c0,
                                   clocks_after=c1, samples=samples))
    res["all_checks_passed"] = all_ok
    if a.json:
        B.write_json(a.json, res)
    if a.md:
        with open(a.md, "w") as f:
            f.write("# Stream-k vs data-parallel, Qwen3-32B gate/up (+ SwiGLU), same process (bench/qwen_mlp/bench_streamk.py)\n\n")
            f.write(f"{props.name} ({sms} SMs), {res['date']}, torch {torch.__version__}, seed {seed}, {a.rounds} rounds. "
                    f"Data: {res['data']}. Timer: bench/common/bench.py round robin; median, spread (q3-q1)/(2 median); ratios "
                    f"per round, median [q1, q3]. All checks {'passed' if all_ok else '**did not pass**'}.\n\n")
            f.write("| M | tile | contender | ms | TFLOP/s |\n|---:|---|---|---|---:|\n")
            for r in res["results"]:
                fl = 2.0 * r["M"] * HID * GU_N
                for n, s in r["stats"].items():
                    f.write(f"| {r['M']} | {r['tile']} | {n} | {B.fmt_ms(s)} | {fl / (s['median'] * 1e-3) / 1e12:.0f} |\n")
            f.write("\n| M | ratio | median [q1, q3] |\n|---:|---|---|\n")
            for r in res["results"]:
                for c, v in r["claims"].items():
                    f.write(f"| {r['M']} | {c} | {B.fmt_ratio(v)} |\n")
            f.write("\n## Checks\n\n| M | contender | check |\n|---:|---|---|\n")
            for r in res["results"]:
                for n, c in r["checks"].items():
                    extra = "".join(f", {k} {c[k]}" for k in ("repeat_bit_equal", "bit_equal_to_committed") if k in c)
                    f.write(f"| {r['M']} | {n} | {B.tol_line(c)}{extra} |\n")
    print("all checks passed" if all_ok else "SOME CHECKS FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
