#!/usr/bin/env python3
"""What each kernel class costs on the decode step's critical path: the linked step
(decode.LinkedStep, proj="linked", linked gate/up and lm_head, selected attention) captured in one
CUDA graph whole, with one class left out, and with only one class kept, all timed interleaved in
one process (bench.time_graphs). "without X" minus "whole" is what X adds to the step with its
neighbours overlapping it (PDL); "only X" is X's kernels chained alone. The logits of the partial
steps are wrong by construction; only the whole step is a decode step (bench.py checks it).

    PYTHONPATH=DIR/py python3 ablate.py --kernels DIR/kernels --json OUT.json [--points 1:16,1:4096] [--no-pdl]
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
    ap.add_argument("--points", default="1:16,1:4096")
    ap.add_argument("--no-pdl", action="store_true")
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    import bench as BL  # noqa: PLC0415
    start = BL.gpu_start()
    if start is None:
        return 77
    torch, log, model = start
    pdl = not a.no_pdl
    sel = D.selection(a.kernels, pdl=pdl)
    parts = D.LinkedStep.PARTS
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, pdl=pdl,
               date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), points=[])
    log(f"{res['device']}, {res['date']}, pdl={pdl}")
    for spec in a.points.split(","):
        B, ctx = (int(x) for x in spec.split(":"))
        cache = D.alloc_cache(B, max(ctx, 16))
        pos, tok = ctx - 1, torch.randint(0, D.VOCAB, (B,), device="cuda")
        attn = D.PipeLinkAttention(sel, cache, mode="selected")
        step = D.LinkedStep(model, a.kernels, B, cache, gemms="linked", pdl=pdl, proj="linked")
        variants = {"whole": ()}
        variants.update({f"without {p}": (p,) for p in parts})
        variants["without norm+rope"] = ("norm", "rope")
        only = {p: tuple(q for q in parts if q != p) for p in ("qkv", "o", "gu", "down", "head", "attn")}
        variants.update({f"only {p}": v for p, v in only.items()})
        variants["only GEMMs"] = ("norm", "rope", "attn")
        graphs = {}
        for n, skip in variants.items():
            g, _ = BL.capture(torch, lambda skip=skip: step.step(tok, pos, attn, skip=skip))
            graphs[n] = g
        # other builds of the same step, whole and with parts alone: the gate/up in 64 x 64 tiles
        # (128 blocks instead of 79); the plain kernels triggering before their wait; the GEMMs
        # linked with --blocks-per-sm 2 (with PDL only)
        # (2026-11-30 13:38 UTC also "64x64", "tf", "2pb" = "2pb tf" without trigger_first; 13:47 UTC
        # "rope" = RoPE in the QKV GEMM's reduction alone, and "2pb tf"): RoPE in the QKV GEMM's
        # reduction with "64x64 tf" ("fast"); 13:50 UTC each with the QKV GEMM in 256-column K chunks
        # (not faster); 13:55 UTC "fast et", every linked kernel of "fast" linked with
        # --pdl-early-trigger (level)); "fast mlp": "fast" with the gate/up + SwiGLU + down as one kernel
        others = {"64x64 tf": dict(gemms="linked64", trigger_first=True)} if pdl else {"64x64": dict(gemms="linked64")}
        if pdl:
            others.update({"fast": dict(gemms="linked64", trigger_first=True, rope="fused"),
                           "fast mlp": dict(gemms="linked64", trigger_first=True, rope="fused", mlp="fused"),
                           "fast mlp g6d5": dict(gemms="linked64", trigger_first=True, rope="fused", mlp="fused_g6d5"),
                           "fast mlp g8d2": dict(gemms="linked64", trigger_first=True, rope="fused", mlp="fused_g8d2")})
        # the early-trigger builds take the attention linked so too
        attn_et = D.PipeLinkAttention(D.selection(a.kernels, pdl=True, table="select_et"), cache, mode="selected") if pdl else None
        steps = {"": step}
        for o, kw in others.items():
            st = D.LinkedStep(model, a.kernels, B, cache, pdl=pdl, proj="linked", **dict(dict(gemms="linked"), **kw))
            steps[o] = st
            at = attn_et if kw.get("early_trigger") else attn
            graphs[f"whole ({o})"], _ = BL.capture(torch, lambda st=st, at=at: st.step(tok, pos, at))
            for p in ("gu", "qkv", "down"):
                graphs[f"only {p} ({o})"], _ = BL.capture(torch, lambda st=st, p=p, at=at: st.step(tok, pos, at, skip=only[p]))
            graphs[f"only GEMMs ({o})"], _ = BL.capture(torch, lambda st=st, at=at: st.step(tok, pos, at, skip=("norm", "rope", "attn")))
        t = BL.time_graphs(torch, graphs, a.reps, 10)
        # the split-K accumulators are garbage after partial steps: zero them, replay each whole
        # step once and compare its logits with the first build's (atomics reorder f32 sums)
        for st in steps.values():
            st.qkv32.zero_()
            st.d32.zero_()
            st.rope_count.zero_()
        logits = {}
        for o, st in steps.items():
            st.logits.fill_(float("nan"))
            graphs["whole" + (f" ({o})" if o else "")].replay()
            torch.cuda.synchronize()
            logits[o] = st.logits.float().clone()
        agree = {}
        for o in others:
            d = logits[o] - logits[""]
            agree[o] = dict(rel_l2=float(d.norm() / logits[""].norm()), nan=bool(torch.isnan(logits[o]).any()),
                            argmax_equal=float((logits[o].argmax(1) == logits[""].argmax(1)).float().mean()))
        for st in steps.values():
            st.qkv32.zero_()
            st.d32.zero_()
            st.rope_count.zero_()
        whole = t["whole"]["median"]
        row = dict(B=B, ctx=ctx, times=t, logits_vs_first_build=agree)
        log(f"B={B:2d} ctx={ctx:5d}: whole step {whole:.4f} ms [{t['whole']['min']:.4f}, {t['whole']['max']:.4f}]")
        for o, g in agree.items():
            log(f"   logits of build {o!r} vs the first: rel L2 {g['rel_l2']:.2e}, NaN {g['nan']}, argmax equal {g['argmax_equal']:.3f}")
        for n in t:
            if n == "whole":
                continue
            m = t[n]["median"]
            log(f"   {n:22s} {m:.4f} ms [{t[n]['min']:.4f}, {t[n]['max']:.4f}]" + (f"  whole - this = {whole - m:+.4f} ms" if n.startswith("without") else ""))
        res["points"].append(row)
        del graphs, step, steps, attn, attn_et, cache
        torch.cuda.empty_cache()
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
