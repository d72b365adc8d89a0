#!/usr/bin/env python3
"""The Qwen3-32B gate/up (+ SwiGLU) at decode sizes (M <= 64): which tiling streams W fastest, one
process, one timer.

    PYTHONPATH=build/python python3 bench/qwen_mlp/bench_decode.py --qwen build/examples/qwen_mlp \
        --llama build/examples/llama_decode [--M 16,32,64] [--rounds 30] [--json out.json] [--md out.md]

At M <= 64 the GEMM moves W (524 MB) and little else, so its time is W's bytes over the stream rate.
The committed rule runs the 64 x 104 tile (247 tiles, 1.87 waves of 132 SMs, one block per SM, five
34 KB stages). cuBLASLt's best configuration at M = 16 (bench/results, session 10) is a 128 x 16
tile with the operands swapped: 400 tiles of 128 W rows. The contenders here, all on the same X ~
N(0, 1), W ~ N(0, 0.02^2) bf16:
  - <kind>_small            (qwen_mlp) 64 x 104, 1 block per SM: the committed kernel;
  - <kind>_small64          (llama_decode's fused_small64: the same components with the 64 x 64 main
                            loop) 400 tiles of 128 W rows, 1 block per SM (3.03 waves);
  - fused_small64_2pb_pdl   (llama_decode) 64 x 64, 2 blocks per SM (400 tiles on 264 blocks), 3
                            stages each;
  - --extra DIR:STEM:fused|gemm:BPS, any other link of the same params (session 11's probes, since
                            removed from the build and kept in commit 2527d22: *_small_s3 / _s4
                            rings, *_small_l2_D (W prefetched D slices ahead into the L2),
                            *_small_rot_S (k order rotated per tile), *_small_batch_B (B stages
                            issued together), *_small128 (64 x 128 tile));
  - <kind>_small#G          (--grids) the committed kernel launched on G blocks;
  - <kind>_small@P          (--promotions) the committed kernel with W's tensor map at L2 promotion P;
  - torch.mm (cuBLAS) and torch.mm + a torch.compile'd SwiGLU.
Prediction (session 11, before the run with them): if a block's stream is bounded by its bytes in
flight (five 34 KB stages), the L2-ahead loaders raise the W stream rate above the committed
kernel's 4.0 TB/s toward cuBLASLt-best's 4.28; if the DRAM's efficiency on this access pattern
(128-byte pieces of 208 rows, 10 KB apart) bounds it, they change nothing.
Session 11 (results/qwen_s11/dec1-dec6): the grid is what moved it. Every contender now launches on
the runtime's persistent grid (Kernel.persistent_grid(): 247 tiles on 124 blocks; at two blocks per
SM min(T, R), 264 for 400 tiles); --grids G adds the committed kernel on G blocks.
Checks: every contender's output (poisoned first) per element against the fp32 reference.
--profile: one launch of each GEMM-only contender per M (for ncu), no timing.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench as B  # noqa: E402
import pipelink  # noqa: E402
from bench_torch import add_torch_baselines, configure, poisoned_check, swiglu  # noqa: E402

HID, INTER = 5120, 25600
GU_N = 2 * INTER
ATOL, RTOL_GU, RTOL_H = 1e-3, 2.0 ** -7, 2.0 ** -6


def contenders(a):
    """(name, cubin dir, file stem, fused, blocks per SM) of every PipeLink contender present."""
    out = [("gemm_small", a.qwen, "gemm_small", False, 1), ("fused_small", a.qwen, "fused_small", True, 1),
           ("fused_small64", a.llama, "fused_small64", True, 1),
           ("fused_small64_2pb", a.llama, "fused_small64_2pb_pdl", True, 2)]
    for x in a.extra.split(",") if a.extra else []:
        d, stem, fused, bps = x.split(":")
        out.append((stem, d, stem, fused == "fused", int(bps)))
    for g in a.grids.split(",") if a.grids else []:
        out += [(f"gemm_small#{g}", a.qwen, "gemm_small", False, 1), (f"fused_small#{g}", a.qwen, "fused_small", True, 1)]
    for p in a.promotions.split(",") if a.promotions else []:
        out += [(f"gemm_small@{p}", a.qwen, "gemm_small", False, 1), (f"fused_small@{p}", a.qwen, "fused_small", True, 1)]
    return [c for c in out if os.path.isfile(os.path.join(c[1], c[2] + ".cubin"))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--qwen", required=True)
    ap.add_argument("--llama", default="")
    ap.add_argument("--extra", default="", help="more contenders: DIR:STEM:fused|gemm:BLOCKS_PER_SM,...")
    ap.add_argument("--promotions", default="",
                    help="also gemm_small / fused_small with W's tensor map at these L2 promotions (e.g. 128B,none; default 256B)")
    ap.add_argument("--grids", default="",
                    help="also gemm_small / fused_small launched on these many blocks (fewer than the SMs: fewer W rows streamed at once)")
    ap.add_argument("--M", default="16,32,64")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    seed = time.time_ns() % (1 << 62)
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = False
    cs = contenders(a)
    ks = {name: pipelink.Kernel(os.path.join(d, stem + ".cubin"), os.path.join(d, stem + ".map")) for name, d, stem, _, _ in cs}
    W = torch.randn(GU_N, HID, dtype=torch.bfloat16, device=dev) * 0.02
    if not a.profile:
        compiled = torch.compile(swiglu, dynamic=True)
        compiled(torch.randn(16, GU_N, dtype=torch.bfloat16, device=dev))
    print(f"device: {props.name} ({sms} SMs); torch {torch.__version__}; seed {seed}; rounds {a.rounds}")
    res = dict(bench="qwen3_32b_decode_tiling", device=props.name, sms=sms, torch=torch.__version__, seed=seed,
               rounds=a.rounds, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               data="X ~ N(0,1), W ~ N(0, 0.02^2), bf16, the same for every contender", results=[])
    all_ok = True
    timer = B.RoundRobin(rounds=a.rounds, target_ms=2.0, seed=seed)
    for M in [int(x) for x in a.M.split(",")]:
        X = torch.randn(M, HID, dtype=torch.bfloat16, device=dev)
        if a.profile:
            for name, _, _, fused, bps in cs:
                k = ks[name]
                out = torch.empty(M, INTER if fused else GU_N, dtype=torch.bfloat16, device=dev)
                k.launch(configure(k, fused, X, W, out, M, sms))
                torch.cuda.synchronize()
                print(f"profile: launched {name} at M = {M}", flush=True)
            GU = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
            torch.mm(X, W.t(), out=GU)
            torch.cuda.synchronize()
            print(f"profile: launched torch.mm at M = {M}", flush=True)
            continue
        GU32 = X.float() @ W.float().t()
        H32 = torch.nn.functional.silu(GU32[:, :INTER]) * GU32[:, INTER:]
        outs, cont, refs = {}, {}, {}
        for name, _, _, fused, bps in cs:
            k = ks[name]
            out = torch.empty(M, INTER if fused else GU_N, dtype=torch.bfloat16, device=dev)
            grid = configure(k, fused, X, W, out, M, sms)  # the runtime's persistent grid
            if "@" in name:
                k.set(w_map=pipelink.tensor_map(W, box=(k.fact("tile_n"), 64), swizzle="128B", l2_promotion=name.split("@")[1]))
            g = grid if "#" not in name else int(name.split("#")[1])
            outs[name] = out
            refs[name] = (H32, RTOL_H) if fused else (GU32, RTOL_GU)
            cont[name] = (lambda k=k, g=g: k.launch(g))
        hold = add_torch_baselines(cont, outs, refs, X, W, GU32, H32, compiled, RTOL_GU, RTOL_H)
        checks = {}
        for name, fn in cont.items():
            checks[name], _ = poisoned_check(name, fn, outs, refs, hold, ATOL)
            all_ok &= checks[name]["ok"]
            print(f"  M={M} {name}: {B.tol_line(checks[name])}", flush=True)
        del GU32, H32
        c0 = B.clocks()
        samples = timer.run(cont)
        c1 = B.clocks()
        st = {n: B.stats(v) for n, v in samples.items()}
        claims = {}
        for name, _, _, fused, _ in cs:
            bl = "torch.mm+swiglu-compiled" if fused else "torch.mm"
            claims[f"{name} / {bl}"] = B.paired_ratio(samples[name], samples[bl])
            base = "fused_small" if fused else "gemm_small"  # the committed kernel, W at 256B promotion
            if name != base and base in samples:
                claims[f"{name} / {base}"] = B.paired_ratio(samples[name], samples[base])
        for n, s in st.items():
            print(f"  M={M} {n}: {B.fmt_ms(s)}  (W at {W.numel() * 2 / (s['median'] * 1e-3) / 1e12:.2f} TB/s)")
        for c, r in claims.items():
            print(f"  M={M} {c}: {B.fmt_ratio(r)}")
        print(f"  clocks: {B.clocks_line(c0)} -> {B.clocks_line(c1)}", flush=True)
        res["results"].append(dict(M=M, stats=st, claims=claims, checks=checks, clocks_before=c0, clocks_after=c1,
                                   samples=samples))
    res["all_checks_passed"] = all_ok
    if a.json:
        B.write_json(a.json, res)
    if a.md and res["results"]:
        with open(a.md, "w") as f:
            f.write(f"# Qwen3-32B gate/up at decode sizes ({res['date']}, {props.name}, torch {torch.__version__})\n\n")
            f.write(f"Data: {res['data']}. Median ms ± half the interquartile range, {a.rounds} rounds; "
                    f"ratios per round, median [q1, q3]. All checks passed: {all_ok}.\n\n")
            for r in res["results"]:
                f.write(f"## M = {r['M']}\n\n| contender | ms | W stream TB/s |\n|---|---:|---:|\n")
                for n, s in r["stats"].items():
                    f.write(f"| {n} | {B.fmt_ms(s)} | {W.numel() * 2 / (s['median'] * 1e-3) / 1e12:.2f} |\n")
                f.write("\n| ratio | median [q1, q3] |\n|---|---|\n")
                for c, x in r["claims"].items():
                    f.write(f"| {c} | {B.fmt_ratio(x)} |\n")
                f.write(f"\nclocks: {B.clocks_line(r['clocks_before'])} -> {B.clocks_line(r['clocks_after'])}\n\n")
    print("all checks passed" if all_ok else "CHECK FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
