#!/usr/bin/env python3
"""Where the linked-rest decode step's time goes: one CUDA-graph replay of decode.LinkedStep
(selected attention, linked gate/up + SwiGLU and lm_head, cuBLAS QKV / O / down, plain norm and
RoPE kernels), traced with torch.profiler (CUPTI kernel records: start and end of every kernel on
the GPU), at each (B, context) point, without and with programmatic dependent launch.

Per point: the step's span (first kernel start to last kernel end), the sum of kernel durations per
class, and span − sum: time in which no kernel of the step ran (launch gaps; negative when kernels
overlap, as PDL lets them). Each class beside the bytes it must move at the copy bandwidth measured
in the same run (its HBM floor). Kernels are classed by name (cuBLAS: anything not ours) and by
their place in the step (the linked kernels are all `pipelink_kernel`: per layer the attention,
then the gate/up; the lm_head last). With PDL a kernel's record starts when it is launched early,
so its duration includes its wait: the per-class sums are only meaningful without PDL.

    PYTHONPATH=DIR/py python3 breakdown.py --kernels DIR/kernels --json OUT.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llama_decode"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode as D  # noqa: E402

PLAIN = {"add_rmsnorm": "norm (plain)", "rope_append": "rope + cache append (plain)", "silu_mul": "silu_mul (plain)"}


SPLITK = "QKV / O / down GEMMs (linked split-K)"


def classify(names, proj="cublas"):
    """Class of each kernel of one step, in launch order. proj="linked": the QKV, O and down GEMMs
    are linked split-K kernels too (per layer: QKV, attention, O, gate/up, down)."""
    out, linked_seen = [], 0
    n_linked = sum(1 for n in names if n == "pipelink_kernel")
    cycle = (SPLITK, "attention (linked)", SPLITK, "gate/up + SwiGLU (linked fused_small)", SPLITK) if proj == "linked" else \
        ("attention (linked)", "gate/up + SwiGLU (linked fused_small)")
    for n in names:
        c = next((v for k, v in PLAIN.items() if k in n), None)
        if c:
            out.append(c)
        elif n == "pipelink_kernel":
            linked_seen += 1
            if linked_seen == n_linked:
                out.append("lm_head (linked gemm_small)")
            else:
                out.append(cycle[(linked_seen - 1) % len(cycle)])
        else:
            out.append("QKV / O / down GEMMs (cuBLAS)")
    return out


def trace(torch, graph):
    from torch.profiler import ProfilerActivity, profile  # noqa: PLC0415
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    ev = []
    for e in prof.events():
        if getattr(e, "device_type", None) is not None and str(e.device_type).endswith("CUDA") and e.time_range.elapsed_us() > 0:
            if "memcpy" in e.name.lower() or "memset" in e.name.lower():
                continue
            ev.append((e.time_range.start, e.time_range.end, e.name))
    ev.sort()
    return ev


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--points", default="1:16,1:4096,16:16,16:4096,64:16,64:4096")
    ap.add_argument("--proj", default="cublas,linked", help="QKV / O / down GEMMs: cublas, linked (split-K), or both")
    a = ap.parse_args()
    import bench as BL  # noqa: PLC0415
    start = BL.gpu_start()
    if start is None:
        return 77
    torch, log, model = start
    import pipelink  # noqa: PLC0415
    bw = BL.copy_bandwidth(torch)
    sel = pipelink.Selection(os.path.join(a.kernels, "select.json"))
    sel_pdl = D.selection(a.kernels, pdl=True)
    H, F, V, L = D.HIDDEN, D.FFN, D.VOCAB, D.LAYERS
    qkv_n = D.QH * D.HD + 2 * D.KVH * D.HD
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               copy_bandwidth_GBps=bw / 1e9, points=[])
    log(f"{res['device']}, {res['date']}, copy bandwidth {bw / 1e9:.0f} GB/s")
    for spec in a.points.split(","):
        B, ctx = (int(x) for x in spec.split(":"))
        cache = D.alloc_cache(B, max(ctx, 16))
        pos, tok = ctx - 1, torch.randint(0, V, (B,), device="cuda")
        # bytes each class must move (weights, KV, activations ignored below 1%)
        floors = {"QKV / O / down GEMMs (cuBLAS)": L * (H * qkv_n + H * H + F * H) * 2,
                  SPLITK: L * (H * qkv_n + H * H + F * H) * 2,
                  "gate/up + SwiGLU (linked fused_small)": L * 2 * F * H * 2,
                  "lm_head (linked gemm_small)": V * H * 2,
                  "attention (linked)": B * L * 2 * D.KVH * ctx * D.HD * 2}
        row = dict(B=B, ctx=ctx)
        for proj, pdl in ((p, d) for p in a.proj.split(",") for d in (False, True)):
            s = sel_pdl if pdl else sel
            attn = D.PipeLinkAttention(s, cache, mode="selected")
            step = D.LinkedStep(model, a.kernels, B, cache, gemms="linked", pdl=pdl, proj=proj)
            g, _ = BL.capture(torch, lambda: step.step(tok, pos, attn))
            ev = trace(torch, g)
            cls = classify([n for _, _, n in ev], proj)
            span = (ev[-1][1] - ev[0][0]) / 1e3
            busy = sum(e - b for b, e, _ in ev) / 1e3
            per = {}
            for (b, e, _), c in zip(ev, cls):
                p = per.setdefault(c, dict(count=0, ms=0.0))
                p["count"] += 1
                p["ms"] += (e - b) / 1e3
            for c, p in per.items():
                if c in floors:
                    p["floor_ms"] = floors[c] / bw * 1e3
            # the wall time of the step as the bench measures it (graph replays between events)
            t = BL.time_graphs(torch, {"g": g}, 7, 10)["g"]["median"]
            key = ("pdl" if pdl else "no_pdl") + ("" if proj == "cublas" else "_splitk")
            row[key] = dict(kernels=len(ev), span_ms=span, kernel_sum_ms=busy, not_covered_ms=span - busy, step_ms=t, classes=per)
            log(f"B={B:2d} ctx={ctx:5d} {proj:6s} {'PDL   ' if pdl else 'no PDL'}: step {t:.3f} ms, span {span:.3f}, {len(ev)} kernels summing to "
                f"{busy:.3f} ms, span - sum {span - busy:+.3f} ms")
            for c, p in sorted(per.items(), key=lambda kv: -kv[1]["ms"]):
                log(f"      {c:40s} x{p['count']:3d} {p['ms']:.3f} ms" + (f"  (floor {p['floor_ms']:.3f} ms)" if "floor_ms" in p else ""))
            del g, step, attn
        res["points"].append(row)
        del cache
        torch.cuda.empty_cache()
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
