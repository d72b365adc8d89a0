#!/usr/bin/env python3
"""Where a split-KV attention kernel's time goes at B = 1: the 16 layers' attention kernels alone
(the decode step with every other part left out, PDL links), for variant b with the split count S
forced, at contexts chosen so that each block walks the same number of key tiles with a different
number of splits to combine (e.g. L = 256 / S = 1, L = 1024 / S = 4, L = 4096 / S = 16: 4 tiles per
block each), and variant a. All graphs timed interleaved in one process (bench.time_graphs);
per-kernel times are the graph's time / 16. Two builds can be compared (--baseline DIR: another
build's attn_{a,b}_pdl and select_pdl.json).

    PYTHONPATH=DIR/py python3 attn_micro.py --kernels DIR/kernels [--baseline DIR/kernels_old] --json OUT.json
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


class ForcedAttention(D.PipeLinkAttention):
    """PipeLinkAttention with the variant and its S fixed instead of chosen by the table."""

    def __init__(self, selection, cache, variant: str, S: int) -> None:
        super().__init__(selection, cache, mode=variant)
        self.forced = (variant, dict(S=S))

    def choice(self, L: int):
        return self.forced


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--baseline", default="")
    ap.add_argument("--json", required=True)
    ap.add_argument("--cases", default="a:64:1,a:256:1,b:256:1,b:1024:4,b:4096:16,b:4096:1,b:4096:32,b:4096:64,b:2048:8,b:2048:16,"
                                       "b:8256:33",
                    help="variant:L:S,...")
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args()
    import bench as BL  # noqa: PLC0415
    start = BL.gpu_start()
    if start is None:
        return 77
    torch, log, model = start
    sels = {"new": D.selection(a.kernels, pdl=True)}
    if a.baseline:
        sels["old"] = D.selection(a.baseline, pdl=True)
    B = 1
    cases = [(v, int(L), int(S)) for v, L, S in (c.split(":") for c in a.cases.split(","))]
    cache = D.alloc_cache(B, max(16, max(L for _, L, _ in cases)))
    tok = torch.randint(0, D.VOCAB, (B,), device="cuda")
    step = D.LinkedStep(model, a.kernels, B, cache, pdl=True, **BL.FAST_MLP)
    only_attn = tuple(p for p in D.LinkedStep.PARTS if p != "attn")
    graphs = {}
    for v, L, S in cases:
        for build, sel in sels.items():
            at = ForcedAttention(sel, cache, v, S)
            graphs[f"{v} L={L} S={S} {build}"], _ = BL.capture(torch, lambda at=at, L=L: step.step(tok, L - 1, at, skip=only_attn))
    t = BL.time_graphs(torch, graphs, a.reps, 10)
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, B=B,
               date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), times=t)
    log(f"{res['device']}, {res['date']}: us per attention kernel (16 chained, PDL)")
    for n, x in t.items():
        log(f"   {n:28s} {1000 * x['median'] / 16:7.2f} [{1000 * x['min'] / 16:7.2f}, {1000 * x['max'] / 16:7.2f}]")
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
