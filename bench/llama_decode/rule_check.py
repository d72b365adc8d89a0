#!/usr/bin/env python3
"""The attention selection rule, old (select.json) against revised (select_revised.json), on the
attention alone: per (B, context) point, 16 layers' launches of each candidate in one CUDA graph
(variant a; variant b at the S each rule picks and at S = 2, 4, 8, 16, 32 up to one split per key
tile), timed interleaved in one process (median of `reps` samples of `inner` replays), the last
layer's output checked against the fp32 reference (decode.attention_reference, the tolerance of
decode.check_attention) after the timed replays. Points: the six of the bench (where the old rule's
miss was seen: design data), the validation points B in {2, 4, 8, 32} x context in {1024, 2048, 8192}
(not used to write the revised rule), and B = 16 at 1024, 2048, 8192 (next to the design point).

    PYTHONPATH=DIR/py python3 rule_check.py --kernels DIR/kernels --out OUT   # OUT/rule_check.json
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

SIX = [(1, 16), (1, 4096), (16, 16), (16, 4096), (64, 16), (64, 4096)]
VALIDATION = [(B, L) for B in (2, 4, 8, 32) for L in (1024, 2048, 8192)]
NEAR = [(16, 1024), (16, 2048), (16, 8192)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--inner", type=int, default=10)
    a = ap.parse_args()
    import pipelink  # noqa: PLC0415
    import torch  # noqa: PLC0415
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    from bench import capture, time_graphs  # noqa: PLC0415
    log = lambda s: print(s, flush=True)  # noqa: E731
    os.makedirs(a.out, exist_ok=True)
    sel = pipelink.Selection(os.path.join(a.kernels, "select.json"))
    rev = pipelink.Selection(os.path.join(a.kernels, "select_revised.json"), load=False)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               sms=sms, reps=a.reps, inner=a.inner, points=[])
    for t, name in ((sel, "select.json"), (rev, "select_revised.json")):
        with open(os.path.join(a.kernels, name)) as f:
            res[name] = json.load(f)
    ok = True
    t0 = time.time()
    points = [(B, L, "six") for B, L in SIX] + [(B, L, "validation") for B, L in VALIDATION] + [(B, L, "near") for B, L in NEAR]
    by_b = {}
    for B, L, kind in points:
        by_b.setdefault(B, []).append((L, kind))
    for B in sorted(by_b):
        max_ctx = max(L for L, _ in by_b[B])
        cache = D.alloc_cache(B, max_ctx)
        g = torch.Generator(device="cuda")
        g.manual_seed(B)
        q = (torch.randn(B, D.QH, D.HD, generator=g, device="cuda") * 2).to(torch.bfloat16)
        for L, kind in by_b[B]:
            shape = dict(B=B, L=L, kv_heads=D.KVH, sms=sms)
            old, new = sel.choose(**shape), rev.choose(**shape)
            cands = {("a", 1)}
            for v, p in (old, new):
                cands.add((v, p["S"]))
            tiles = -(-L // D.KV_TILE)
            cands |= {("b", s) for s in (2, 4, 8, 16, 32) if s <= tiles}
            cands = sorted(cands)
            attns, graphs = {}, {}
            for v, s in cands:
                att = D.PipeLinkAttention(sel, cache, mode=v)
                att.choice = (lambda L_, v=v, s=s: (v, {"S": s}))
                attns[(v, s)] = att
                graphs[f"{v}{s}"], _ = capture(torch, lambda att=att: [att(l, q, L) for l in range(D.LAYERS)])
            times = time_graphs(torch, graphs, a.reps, a.inner)
            ref = D.attention_reference(q, cache[0][D.LAYERS - 1], cache[1][D.LAYERS - 1], L)
            tol = ref.abs() * 2 ** -7 + 2 ** -9
            checks = {}
            for (v, s), att in attns.items():
                att.out.fill_(float("nan"))
                graphs[f"{v}{s}"].replay()
                torch.cuda.synchronize()
                of = att.out.float()
                bad = int(((of - ref).abs() > tol).sum().item()) + int(torch.isnan(of).sum().item())
                checks[f"{v}{s}"] = bad
                ok &= bad == 0 and int(att.cnt.abs().sum().item()) == 0
            best = min(times, key=lambda k: times[k]["median"])
            ko, kn = f"{old[0]}{old[1]['S']}", f"{new[0]}{new[1]['S']}"
            row = dict(B=B, L=L, kind=kind, old=[old[0], old[1]["S"]], new=[new[0], new[1]["S"]], attn16_ms=times, bad=checks,
                       best=best, old_over_best=times[ko]["median"] / times[best]["median"],
                       new_over_best=times[kn]["median"] / times[best]["median"], new_over_old=times[kn]["median"] / times[ko]["median"])
            res["points"].append(row)
            log(f"  B={B:2d} L={L:5d} ({kind:10s}): old {ko:4s} {times[ko]['median']:.4f}  new {kn:4s} {times[kn]['median']:.4f}  "
                f"best {best:4s} {times[best]['median']:.4f} | new/old {row['new_over_old']:.3f} | "
                + " ".join(f"{k} {x['median']:.4f}" for k, x in times.items())
                + ("" if all(b == 0 for b in checks.values()) else f"  BAD {checks}"))
            del attns, graphs
            with open(os.path.join(a.out, "rule_check.json"), "w") as f:
                json.dump(res, f, indent=1)
        del cache
        torch.cuda.empty_cache()
    res["checks_ok"] = bool(ok)
    with open(os.path.join(a.out, "rule_check.json"), "w") as f:
        json.dump(res, f, indent=1)
    log(f"rule check done ({time.time() - t0:.0f} s); checks {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
