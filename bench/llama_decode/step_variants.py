#!/usr/bin/env python3
"""Builds of the linked decode step side by side: each variant is decode.LinkedStep with the
fast fused-MLP configuration (bench.FAST_MLP, PDL) and some keyword arguments changed, with the
attention select_pdl.json picks; at each (B, context) point every variant is captured in one CUDA
graph, all timed interleaved in one process (bench.time_graphs), and each graph's logits are
checked against the eager PyTorch step (decode.compare_logits: rel L2 within 1.5x the
fp32-attention reference's distance + 2^-10), the linked buffers and the cache row of the new
token poisoned first.

    PYTHONPATH=DIR/py python3 step_variants.py --kernels DIR/kernels --json OUT.json \\
        --variants '{"fused MLP": {}, "split MLP": {"mlp": "split"}}' [--points 1:16,1:4096]
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
    ap.add_argument("--variants", required=True, help="JSON object: name -> LinkedStep keyword overrides of bench.FAST_MLP; "
                    "the key \"_skip\": [parts] leaves kernel classes out (timed, not checked), \"_kernels\": DIR "
                    "takes that variant's GEMM and plain kernels from another build's directory, \"_table\": T its "
                    "attention from T_pdl.json in --kernels")
    ap.add_argument("--points", default="1:16,1:4096,16:4096")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--table", default="select", help="the attention's selection table: select (select_pdl.json) or select_o "
                    "(select_o_pdl.json: its bo, the O projection in the attention, for variants with o_in_attention; the "
                    "others get b in its place)")
    ap.add_argument("--torch", action="store_true", help="also time the torch graph with F.rms_norm (bench.py's faster torch baseline)")
    ap.add_argument("--l-new", type=int, default=1,
                    help="the attention loader's L_new (1: the new token; 0 is a negative control: the loader then "
                         "requests the new token's tile before its dependency wait, and the poisoned row must show)")
    a = ap.parse_args()
    variants = json.loads(a.variants)
    import bench as BL  # noqa: PLC0415
    start = BL.gpu_start()
    if start is None:
        return 77
    torch, log, model = start
    sel = D.selection(a.kernels, pdl=True, table=a.table)
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, base=dict(BL.FAST_MLP, pdl=True),
               variants=variants, table=a.table, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), points=[])
    log(f"{res['device']}, {res['date']}")
    for spec in a.points.split(","):
        B, ctx = (int(x) for x in spec.split(":"))
        cache = D.alloc_cache(B, max(ctx, 16))
        pos, tok = ctx - 1, torch.randint(0, D.VOCAB, (B,), device="cuda")
        attn = D.PipeLinkAttention(sel, cache, mode="selected", l_new=a.l_new)
        steps, graphs, outs = {}, {}, {}
        skips, attns = {}, {}
        for n, kw in variants.items():
            kw = dict(kw)
            # "_table": this variant's attention from another selection table in the kernel directory
            table = kw.pop("_table", None)
            attns[n] = attn if table is None else D.PipeLinkAttention(D.selection(a.kernels, pdl=True, table=table), cache,
                                                                       mode="selected", l_new=a.l_new)
            skips[n] = tuple(kw.pop("_skip", ()))  # kernel classes left out (LinkedStep.PARTS): timing only
            kdir = kw.pop("_kernels", a.kernels)  # another build's kernels (the attention stays a.kernels')
            steps[n] = D.LinkedStep(model, kdir, B, cache, pdl=True, **dict(BL.FAST_MLP, **kw))
            graphs[n], outs[n] = BL.capture(torch, lambda st=steps[n], sk=skips[n], at=attns[n]: st.step(tok, pos, at, skip=sk))
        if a.torch:  # the baseline, timed with the others (not checked here: bench.py checks it)
            model.fused_norm = True
            try:
                graphs["torch graph, F.rms_norm"], _ = BL.capture(torch, lambda: model.step(tok, pos, cache, D.TorchAttention(cache)))
            finally:
                model.fused_norm = False
        t = BL.time_graphs(torch, graphs, a.reps, 10)
        ref = model.step(tok, pos, cache, D.TorchAttention(cache))
        noise = D.compare_logits(model.step(tok, pos, cache, D.Fp32Attention(cache)), ref)["rel_l2"]
        checks = {}
        for n in variants:
            if skips[n]:  # a partial step: its logits are wrong by construction
                checks[n] = dict(ok=True, rel_l2=float("nan"), skipped_parts=list(skips[n]))
                continue
            attns[n].out.fill_(float("nan"))
            steps[n].poison(pos)
            graphs[n].replay()
            torch.cuda.synchronize()
            checks[n] = D.compare_logits(outs[n], ref, noise)
        full = [n for n in variants if not skips[n]]
        for n in full:  # bit-equality with the first full variant (same inputs, same poisoning)
            checks[n]["max_abs_vs_" + full[0]] = float((outs[n].float() - outs[full[0]].float()).abs().max().item())
        for st in steps.values():  # the partial steps leave the split-K accumulators dirty
            st.qkv32.zero_()
            st.d32.zero_()
            st.rope_count.zero_()
        first = next(iter(variants))
        log(f"B={B:2d} ctx={ctx:5d} (attention {attn.last}):")
        if a.torch:
            x = t["torch graph, F.rms_norm"]
            log(f"   {'torch graph, F.rms_norm':24s} {x['median']:.4f} [{x['min']:.4f}, {x['max']:.4f}]  "
                f"best variant {min(t[n]['median'] for n in variants):.4f}: {x['median'] / min(t[n]['median'] for n in variants):.3f}x")
        for n in variants:
            x = t[n]
            log(f"   {n:24s} {x['median']:.4f} [{x['min']:.4f}, {x['max']:.4f}]  / {first}: {x['median'] / t[first]['median']:.3f}"
                f"   logits rel L2 {checks[n]['rel_l2']:.4f} ({'ok' if checks[n]['ok'] else 'FAIL'})"
                + (f", max |diff| vs {full[0]} {checks[n]['max_abs_vs_' + full[0]]:.3g}" if n in full else ""))
        # where each step's buffers lie (graph-to-graph differences of identical steps, A/A runs)
        addrs = {n: {b: getattr(st, b).data_ptr() for b in ("x", "h", "q", "H", "logits", "qkv32", "d32", "rope_count")
                     if getattr(st, b, None) is not None} for n, st in steps.items()}
        res["points"].append(dict(B=B, ctx=ctx, attention=attn.last, times=t, checks=checks, addresses=addrs))
        del steps, graphs, outs, attn, attns, cache
        torch.cuda.empty_cache()
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    ok = all(c["ok"] for p in res["points"] for c in p["checks"].values())
    log("checks: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
