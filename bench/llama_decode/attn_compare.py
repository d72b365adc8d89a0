#!/usr/bin/env python3
"""The same decode step with the attention kernels of two builds: each (B, context) point's fast
step with the fused MLP (bench.FAST_MLP), captured whole and with the attention alone ("only
attn": the other kernels left out), once with the linked attention of --kernels and once with that
of --baseline (another build's attn_{a,b}_pdl cubins and select_pdl.json), for variants a, b and the
selected one; all graphs of a point timed interleaved in one process (bench.time_graphs). The
whole steps' logits of the two builds are compared (same weights, same cache, same token).

    PYTHONPATH=DIR/py python3 attn_compare.py --kernels DIR/kernels --baseline DIR/kernels_old \\
        --json OUT.json [--points 1:16,1:4096,16:4096,64:4096]
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
    ap.add_argument("--kernels", required=True, help="this build's kernels (stage.sh)")
    ap.add_argument("--baseline", required=True, help="a directory with the other build's attn_{a,b}_pdl.{cubin,map} and select_pdl.json")
    ap.add_argument("--json", required=True)
    ap.add_argument("--points", default="1:16,1:4096,16:4096,64:4096")
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args()
    import bench as BL  # noqa: PLC0415
    start = BL.gpu_start()
    if start is None:
        return 77
    torch, log, model = start
    # "new, no prefetch": this build's kernels with L_new = L (every key tile after the wait)
    sels = {"new": D.selection(a.kernels, pdl=True), "new, no prefetch": D.selection(a.kernels, pdl=True),
            "old": D.selection(a.baseline, pdl=True)}
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, step="bench.FAST_MLP, pdl",
               kernels=a.kernels, baseline=a.baseline, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), points=[])
    log(f"{res['device']}, {res['date']}")
    only_attn = tuple(p for p in D.LinkedStep.PARTS if p != "attn")
    for spec in a.points.split(","):
        B, ctx = (int(x) for x in spec.split(":"))
        cache = D.alloc_cache(B, max(ctx, 16))
        pos, tok = ctx - 1, torch.randint(0, D.VOCAB, (B,), device="cuda")
        step = D.LinkedStep(model, a.kernels, B, cache, pdl=True, **BL.FAST_MLP)
        graphs, attns = {}, {}
        for build, sel in sels.items():
            for mode in ("a", "b", "selected"):
                at = D.PipeLinkAttention(sel, cache, mode=mode, l_new=None if build == "new, no prefetch" else 1)
                attns[(build, mode)] = at
                graphs[f"{mode} {build}"], _ = BL.capture(torch, lambda at=at: step.step(tok, pos, at))
                graphs[f"only attn {mode} {build}"], _ = BL.capture(torch, lambda at=at: step.step(tok, pos, at, skip=only_attn))
        t = BL.time_graphs(torch, graphs, a.reps, 10)
        # zero the split-K accumulators before each whole replay (the whole steps leave them zero;
        # this keeps the comparison independent of what ran before)
        logits = {}
        for mode in ("a", "b", "selected"):
            for build in sels:
                step.qkv32.zero_()
                step.d32.zero_()
                step.rope_count.zero_()
                step.logits.fill_(float("nan"))
                graphs[f"{mode} {build}"].replay()
                torch.cuda.synchronize()
                logits[(mode, build)] = step.logits.float().clone()
        step.qkv32.zero_()
        step.d32.zero_()
        step.rope_count.zero_()
        agree = {}
        for mode in ("a", "b", "selected"):
            n, o = logits[(mode, "new")], logits[(mode, "old")]
            agree[mode + " no prefetch"] = dict(rel_l2=float((logits[(mode, "new, no prefetch")] - o).norm() / o.norm()))
            agree[mode] = dict(rel_l2=float((n - o).norm() / o.norm()), nan=bool(torch.isnan(n).any()),
                               argmax_equal=float((n.argmax(1) == o.argmax(1)).float().mean()))
        row = dict(B=B, ctx=ctx, choice={b: attns[(b, "selected")].last for b in sels}, times=t, logits_new_vs_old=agree)
        log(f"B={B:2d} ctx={ctx:5d}  selected: new {row['choice']['new']}, old {row['choice']['old']}")
        for mode in ("a", "b", "selected"):
            for pre in ("", "only attn "):
                o = t[f"{pre}{mode} old"]
                line = f"   {pre + mode:16s} old {o['median']:.4f} [{o['min']:.4f}, {o['max']:.4f}]"
                for build in ("new", "new, no prefetch"):
                    n = t[f"{pre}{mode} {build}"]
                    line += f"  {build} {n['median']:.4f} [{n['min']:.4f}, {n['max']:.4f}] ({n['median'] / o['median']:.3f})"
                log(line)
            g = agree[mode]
            log(f"   logits {mode}: new vs old rel L2 {g['rel_l2']:.2e}, NaN {g['nan']}, argmax equal {g['argmax_equal']:.3f}; "
                f"without prefetch vs old {agree[mode + ' no prefetch']['rel_l2']:.2e}")
        res["points"].append(row)
        del graphs, attns, step, cache
        torch.cuda.empty_cache()
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
