"""Where the MoE layer's time goes: one replay of the layer captured without a host read
(bench_torch.PipeLinkMoE.layer_dev / layer_dev64), traced with torch.profiler (CUPTI kernel
records), at each T. Per kernel: its duration; the span of the replay and the time no kernel ran.
Beside them the HBM floor of the expert weights the two GEMMs must read (every expert hit by at
least one token reads all its rows), at the copy bandwidth measured in the same run.

    PYTHONPATH=build/python python3 bench/moe/trace_layer.py --kernels build/examples/moe [--T 512,4096,16384] [--json F]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch as M  # noqa: E402


def copy_bandwidth():
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(10):
        b.copy_(a)
    e1.record()
    e1.synchronize()
    return 2 * n * 10 / (e0.elapsed_time(e1) / 1e3)


def trace(g):
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        g.replay()
        torch.cuda.synchronize()
    ev = [(e.time_range.start, e.time_range.end, e.name) for e in prof.events()
          if str(getattr(e, "device_type", "")).endswith("CUDA") and e.time_range.elapsed_us() > 0]
    return sorted(ev)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--T", default="512,4096,16384")
    ap.add_argument("--json", default="")
    ap.add_argument("--router", choices=("fp32", "bf16"), default="fp32")
    a = ap.parse_args()
    M.ROUTER["logits"] = a.router
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    torch.manual_seed(7)
    H, I, E, K = M.H, M.I, M.E, M.K
    Wr32 = (torch.randn(E, H, dtype=torch.bfloat16, device="cuda") * 0.05).float()
    Wgu = torch.randn(E * 2 * I, H, dtype=torch.bfloat16, device="cuda") * 0.03
    Wd = torch.randn(E * H, I, dtype=torch.bfloat16, device="cuda") * 0.03
    Ts = [int(t) for t in a.T.split(",")]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    pl = M.PipeLinkMoE(a.kernels, Wgu, Wd, Wr32, max(Ts), sms)
    bw = copy_bandwidth()
    out = dict(device=torch.cuda.get_device_name(0), copy_bandwidth_GBps=bw / 1e9, router_logits=a.router, points=[])
    print(f"{out['device']}: copy bandwidth {bw / 1e9:.0f} GB/s")
    for T in Ts:
        X = torch.randn(T, H, dtype=torch.bfloat16, device="cuda")
        Y = torch.empty(T, H, dtype=torch.float32, device="cuda")
        experts = int(torch.unique(M.route(X, Wr32)[1]).numel())
        floor = experts * (2 * I * H + H * I) * 2 / bw * 1e3
        for name, setup, layer in (("128-row tiles", pl.setup_dev, pl.layer_dev), ("64-row tiles", pl.setup_dev64, pl.layer_dev64)):
            setup(X, Y)
            g = M.B.capture_graph(lambda: layer(X, Y))
            ev = trace(g)
            span = (ev[-1][1] - ev[0][0]) / 1e3
            busy = sum(e - b for b, e, _ in ev) / 1e3
            rows = [dict(kernel=n[:60], ms=(e - b) / 1e3) for b, e, n in ev]
            out["points"].append(dict(T=T, tiles=name, experts_hit=experts, weight_floor_ms=floor, span_ms=span, kernel_sum_ms=busy,
                                      kernels=rows))
            print(f"T={T} {name}: span {span:.3f} ms, kernels {busy:.3f} ms, gaps {span - busy:.3f} ms; expert-weight floor "
                  f"{floor:.3f} ms ({experts} experts hit)")
            for r in rows:
                print(f"    {r['ms'] * 1e3:8.1f} us  {r['kernel']}")
            del g
        del X, Y
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
