#!/usr/bin/env python3
"""Per-kernel times of the best Qwen3-30B-A3B MoE layer (bench_torch.py's layer_best_packed: the
routing, the gate/up and down_store links reading packed weights, the bf16 top-k sum), each
kernel between CUDA events, eager, on one set of data; the effective weight bandwidth of both GEMMs.

With --variants S1,S2: the same layer with gate_up{64}_dev_row_major_sw_packed_S and
down_store{64}_dev_sw_packed_S (other links of the same objects, e.g. another stage count), the
variants interleaved round by round with the base links, Y compared bit for bit with the base;
a variant gN launches the base links with N blocks each.

    PYTHONPATH=build/python python3 bench/moe/stage_times.py --kernels build/examples/moe --T 512 [--tiles 64|128]
        [--variants SUFFIX,gN,...] [--rounds 30] [--json F] [--md F]

Data: X ~ N(0, 1), Wr ~ N(0, 0.05^2), Wgu, Wd ~ N(0, 0.03^2) bf16, as bench_torch.py. Times are
medians over the rounds after 5 warm-up rounds; in each round the links run in a shuffled order,
each behind a spin of 10^6 GPU cycles; a variant's ratios to the base are paired per round,
median [q1, q3] (g132, the base again, is an A/A control). The routing's time includes its torch
router GEMM (fp32 by default, --router bf16)."""
import argparse
import json
import os
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch as moe  # noqa: E402
import pipelink  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--T", type=int, default=512)
    ap.add_argument("--tiles", type=int, choices=(64, 128), default=64)
    ap.add_argument("--variants", default="")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--router", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--once", action="store_true",
                    help="set up the base layer and launch it once inside the NVTX range 'layer' (for ncu: bench/moe/ncu_layer.sh)")
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    if a.rounds < 2:
        ap.error("--rounds must be at least 2 (the paired ratios' quartiles)")
    moe.ROUTER["logits"] = a.router
    T, t64, dev = a.T, a.tiles == 64, moe.dev
    seed = int(time.time_ns() % (1 << 62))
    torch.manual_seed(seed)
    props = torch.cuda.get_device_properties(0)
    Wr32 = (torch.randn(moe.E, moe.H, dtype=torch.bfloat16, device=dev) * 0.05).float()
    Wgu = torch.randn(moe.E * 2 * moe.I, moe.H, dtype=torch.bfloat16, device=dev) * 0.03
    Wd = torch.randn(moe.E * moe.H, moe.I, dtype=torch.bfloat16, device=dev) * 0.03
    pl = moe.PipeLinkMoE(a.kernels, Wgu, Wd, Wr32, T, props.multi_processor_count)
    if t64 not in pl.pk:
        print(f"stage_times: the packed {a.tiles}-row links are not in {a.kernels}")
        return 1
    X = torch.randn(T, moe.H, dtype=torch.bfloat16, device=dev)
    names = ("gate_up64_dev_row_major_sw_packed", "down_store64_dev_sw_packed") if t64 else \
        ("gate_up_dev_row_major_sw_packed", "down_store_dev_sw_packed")
    kern = {"base": pl.pk[t64]}
    for v in filter(None, a.variants.split(",")):
        if v[0] == "g" and v[1:].isdigit():  # gN: the base links launched with N blocks
            kern[v] = kern["base"]
            continue
        kern[v] = tuple(pipelink.Kernel(os.path.join(a.kernels, f"{n}_{v}.cubin"), os.path.join(a.kernels, f"{n}_{v}.map"))
                        for n in names)
    Y, grids = {}, {}
    for v, pair in kern.items():
        pl.pk[t64] = pair
        Y[v] = torch.full((T, moe.H), float("nan"), dtype=torch.bfloat16, device=dev)
        pl.setup_best_packed(X, Y[v], t64)
        grids[v] = (int(v[1:]),) * 2 if v[0] == "g" and v[1:].isdigit() else pl.g_pk
    if a.once:
        pl.pk[t64] = kern["base"]
        pl.setup_best_packed(X, Y["base"], t64)
        pl.layer_best_packed(X, Y["base"], t64)  # warm (the router weight's bf16 copy is made here)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("layer")
        pl.layer_best_packed(X, Y["base"], t64)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        print(f"stage_times --once: the layer launched once in the NVTX range 'layer' at T = {T}")
        return 0
    route = (lambda: pl.route_best(X, pl.align64, pl.tm64)) if t64 else (lambda: pl.route_best(X, pl.align, moe.TILE_M))
    steps = ("route", "gate_up", "down", "sum")
    times = {v: {s: [] for s in steps + ("layer",)} for v in kern}
    order = random.Random(seed)
    for r in range(a.rounds + 5):
        names_now = list(kern)
        order.shuffle(names_now)
        for v in names_now:
            gu, ds = kern[v]
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(5)]
            torch.cuda._sleep(1_000_000)
            ev[0].record()
            route()
            ev[1].record()
            gu.launch(grids[v][0])
            ev[2].record()
            ds.launch(grids[v][1])
            ev[3].record()
            pl.f_sum_bf16.launch(T, moe.H // 8, T, moe.H, pl.topk_e, pl.topk_pos, pl.offsets, pl.Hd, Y[v])
            ev[4].record()
            torch.cuda.synchronize()
            if r >= 5:
                for i, s in enumerate(steps):
                    times[v][s].append(ev[i].elapsed_time(ev[i + 1]) * 1e3)
                times[v]["layer"].append(ev[0].elapsed_time(ev[4]) * 1e3)
    gub, dnb = moe.E * 2 * moe.I * moe.H * 2, moe.E * moe.H * moe.I * 2
    rows = int(pl.total_d.item())
    res = dict(bench="moe_stage_times", device=props.name, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), seed=seed,
               T=T, tile_rows=a.tiles, routed_rows_padded=rows, rounds=a.rounds, router=a.router,
               grids={v: list(g) for v, g in grids.items()}, variants={})
    base = {s: statistics.median(x) for s, x in times["base"].items()}
    lines = [f"# MoE layer stage times (bench/moe/stage_times.py), {props.name}, {res['date']}", "",
             f"T = {T} tokens, {a.tiles}-row tiles, {rows} routed rows (padded); eager, CUDA events, median of {a.rounds} rounds "
             f"after 5 warm-up rounds, the links in a shuffled order each round; grids (gate/up, down) "
             f"{', '.join(f'{v} {g[0]}/{g[1]}' for v, g in grids.items())}; seed {seed}; router logits {a.router}.", "",
             "| links | route us | gate/up us (TB/s) | down us (TB/s) | sum us | layer us | gate/up / base, paired median [q1, q3] | down / base | Y equal to base |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    def paired(v, s):
        """median [q1, q3] of the per-round ratio variant / base (the rounds interleave them)."""
        r = sorted(x / y for x, y in zip(times[v][s], times["base"][s]))
        q = statistics.quantiles(r, n=4)
        return statistics.median(r), q[0], q[2]

    for v in kern:
        m = {s: statistics.median(x) for s, x in times[v].items()}
        same = bool(torch.equal(Y[v].view(torch.int16), Y["base"].view(torch.int16)))
        pg, pd = paired(v, "gate_up"), paired(v, "down")
        res["variants"][v] = dict(median_us=m, gate_up_tbs=gub / m["gate_up"] / 1e6, down_tbs=dnb / m["down"] / 1e6, y_equal_base=same,
                                  gate_up_vs_base=pg, down_vs_base=pd)
        lines.append(f"| {v} | {m['route']:.1f} | {m['gate_up']:.1f} ({gub / m['gate_up'] / 1e6:.2f}) | {m['down']:.1f} "
                     f"({dnb / m['down'] / 1e6:.2f}) | {m['sum']:.1f} | {m['layer']:.1f} | {pg[0]:.3f} [{pg[1]:.3f}, {pg[2]:.3f}] | "
                     f"{pd[0]:.3f} [{pd[1]:.3f}, {pd[2]:.3f}] | {same} |")
    print("\n".join(lines))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    if a.md:
        with open(a.md, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0 if all(v["y_equal_base"] for v in res["variants"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
