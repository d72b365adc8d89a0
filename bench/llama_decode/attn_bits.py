#!/usr/bin/env python3
"""How far apart, in bf16 units in the last place, the decode attentions land: for one layer's
attention of the greedy check's shapes (B = 1, contexts 8..40 and a few longer ones, random cache
and q), the bf16 outputs of SDPA (the reference of the step and greedy checks), the fp32
attention (decode.Fp32Attention) and PipeLink's variants a and b, compared element by element:
the fraction of elements that differ and the largest difference in ulps, for each pair. Explains
what the 32-token greedy check can and cannot show: two attentions that round differently in a few
elements move the bf16 logits by about one ulp, which flips an argmax whose top-2 margin is one ulp.

    PYTHONPATH=DIR/py python3 attn_bits.py --kernels DIR/kernels [--json OUT.json]
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llama_decode"))
import decode as D  # noqa: E402


def ulps(torch, a, b):
    """Per element |a - b| in units of b's bf16 spacing (both bf16)."""
    af, bf = a.float(), b.float()
    spacing = torch.where(bf == 0, torch.full_like(bf, 2.0 ** -133), torch.abs(bf) * 2.0 ** -7)
    spacing = torch.exp2(torch.floor(torch.log2(spacing)))  # bf16 has 7 stored mantissa bits
    return (af - bf).abs() / spacing


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--json", default="")
    ap.add_argument("--contexts", default="8,16,24,32,40,512,4096")
    a = ap.parse_args()
    import pipelink  # noqa: PLC0415
    import torch  # noqa: PLC0415
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    sel = pipelink.Selection(os.path.join(a.kernels, "select.json"))
    rows = []
    for L in (int(x) for x in a.contexts.split(",")):
        cache = D.alloc_cache(1, max(L, 16), seed=L)
        g = torch.Generator(device="cuda").manual_seed(1000 + L)
        q = torch.randn(1, D.QH, D.HD, device="cuda", generator=g).to(torch.bfloat16)
        outs = {"sdpa": D.TorchAttention(cache)(0, q, L).clone(), "fp32": D.Fp32Attention(cache)(0, q, L).clone()}
        for mode in ("a", "b"):
            outs["pipelink_" + mode] = D.PipeLinkAttention(sel, cache, mode=mode)(0, q.contiguous(), L).clone()
        torch.cuda.synchronize()
        row = dict(L=L)
        for x, y in itertools.combinations(outs, 2):
            u = ulps(torch, outs[x], outs[y])
            row[f"{x} vs {y}"] = dict(differ=float((outs[x] != outs[y]).float().mean()), max_ulp=float(u.max()))
        rows.append(row)
        print(f"L={L:5d}  " + "  ".join(f"{k}: {v['differ'] * 100:.2f}% differ, max {v['max_ulp']:.0f} ulp"
                                        for k, v in row.items() if k != "L"), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
