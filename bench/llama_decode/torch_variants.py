#!/usr/bin/env python3
"""Is bench.py's torch graph the strongest eager PyTorch step? The same step captured in a CUDA
graph with the Hugging Face Llama RMSNorm formula (bench.py's torch graph) and with
torch.nn.functional.rms_norm, beside the PipeLink fused-MLP step (bench.FAST_MLP, selected
attention), all timed interleaved in one process (bench.time_graphs); logits of the rms_norm
graph compared with the other's and with the fp32-attention reference's distance.

    PYTHONPATH=DIR/py python3 torch_variants.py --kernels DIR/kernels --json OUT.json [--points 1:16,1:4096]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llama_decode"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decode as D  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--points", default="1:16,1:4096,64:4096")
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args()
    import bench as BL  # noqa: PLC0415
    start = BL.gpu_start()
    if start is None:
        return 77
    torch, log, model = start
    sel = D.selection(a.kernels, pdl=True)
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__,
               date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), points=[])
    log(f"{res['device']}, torch {res['torch']}, {res['date']}")
    for spec in a.points.split(","):
        B, ctx = (int(x) for x in spec.split(":"))
        cache = D.alloc_cache(B, max(ctx, 16))
        pos, tok = ctx - 1, torch.randint(0, D.VOCAB, (B,), device="cuda")
        graphs, outs = {}, {}
        for name, fused in (("torch graph", False), ("torch graph, F.rms_norm", True)):
            model.fused_norm = fused
            graphs[name], outs[name] = BL.capture(torch, lambda: model.step(tok, pos, cache, D.TorchAttention(cache)))
        model.fused_norm = False
        attn = D.PipeLinkAttention(sel, cache, mode="selected")
        step = D.LinkedStep(model, a.kernels, B, cache, pdl=True, **BL.FAST_MLP)
        graphs["PipeLink fused-MLP step"], _ = BL.capture(torch, lambda: step.step(tok, pos, attn))
        t = BL.time_graphs(torch, graphs, a.reps, 10)
        for g in graphs.values():
            g.replay()
        torch.cuda.synchronize()
        ref32 = model.step(tok, pos, cache, D.Fp32Attention(cache))
        noise = D.compare_logits(ref32, outs["torch graph"])["rel_l2"]
        c = D.compare_logits(outs["torch graph, F.rms_norm"], outs["torch graph"], noise)
        log(f"B={B:2d} ctx={ctx:5d}:")
        for n, x in t.items():
            log(f"   {n:26s} {x['median']:.4f} [{x['min']:.4f}, {x['max']:.4f}]")
        log(f"   logits F.rms_norm vs HF formula: rel L2 {c['rel_l2']:.4f} (noise {noise:.4f}, {'ok' if c['ok'] else 'FAIL'})")
        res["points"].append(dict(B=B, ctx=ctx, times=t, rms_norm_vs_hf=c))
        del graphs, outs, step, attn, cache
        torch.cuda.empty_cache()
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
