#!/usr/bin/env python3
"""Llama-3.2-1B decode step: PipeLink attention variant a, variant b, the selected variant, and the
PyTorch step (SDPA with enable_gqa), each captured as one CUDA graph, timed in the same process.

Per (B, context) point: ms per step (median of `reps` samples, each the mean of `inner` graph
replays; the samples of the four graphs are interleaved, rotating the order), the spread (min and
max sample), the HBM floor ((weight bytes + KV bytes) / copy bandwidth measured in this run; copy
bandwidth = (bytes read + bytes written) / time of a 1 GiB device-to-device copy), the logits
check of every PipeLink graph against the torch graph (decode.compare_logits) with the PipeLink
attention output poisoned (NaN) before the replay, and the attention alone (16 layers' launches
in one graph, same modes, SDPA for torch). Also the step with the attention replaced by a zero tensor ("none": what the rest of the step
costs). With the rest linked too (decode.LinkedStep; --no-rest leaves them out): a / b /
selected + rest, selected + rest with cuBLAS gate/up and lm_head, and the linked-rest step without
attention, timed and checked in the same process as the others; and each of those again with
programmatic dependent launch (decode.LinkedStep(pdl=True); --no-pdl leaves them out), checked
the same way and compared bit for bit with the same graph without PDL. Then a context sweep at
B = 1 into an SVG.

    PYTHONPATH=build/python python3 bench/llama_decode/bench.py --kernels build/examples/llama_decode --out DIR
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

MODES = ("a", "b", "selected", "torch")
# The step with the rest linked (decode.LinkedStep): attention variant + gemms ("linked": the
# gate/up + SwiGLU and the lm_head are the linked Qwen kernels; "cublas": they stay cuBLAS with
# the plain silu_mul kernel). "rest_none": the linked-rest step without attention.
# "*_sk": the same with the QKV, O and down projections as the linked split-K GEMM
# (decode.LinkedStep(proj="linked")) instead of cuBLAS; "revised_sk": its attention chosen by
# select_revised.json instead of select.json; "rest_none_sk": the split-K step without attention.
REST_MODES = {"a_rest": ("a", "linked", "cublas"), "b_rest": ("b", "linked", "cublas"),
              "selected_rest": ("selected", "linked", "cublas"), "selected_rest_cublas": ("selected", "cublas", "cublas"),
              "a_sk": ("a", "linked", "linked"), "b_sk": ("b", "linked", "linked"),
              "selected_sk": ("selected", "linked", "linked"), "revised_sk": ("revised", "linked", "linked"),
              "a_sk64": ("a", "linked64", "linked"), "b_sk64": ("b", "linked64", "linked"),
              "selected_sk64": ("selected", "linked64", "linked"), "revised_sk64": ("revised", "linked64", "linked")}
# "*_sk64": the split-K step with the gate/up + SwiGLU in 64 x 64 tiles (fused_small64; with PDL
# its loader streams W before its dependency wait).
NONE_MODES = {"rest_none": ("linked", "cublas"), "rest_none_sk": ("linked", "linked"), "rest_none_sk64": ("linked64", "linked")}
# The same with programmatic dependent launch (decode.LinkedStep(pdl=True): rest_pdl.cubin, the
# --pdl links, select_pdl.json); "rest_none_pdl": without attention. Timed in the same process,
# interleaved with the others.
PDL_MODES = {m + "_pdl": v for m, v in REST_MODES.items()}
# With PDL only (no counterpart without it): the split-K step with the gate/up in 64 x 64 tiles,
# the plain kernels triggering their successor before their own wait (rest_pdl_tf.cubin) and RoPE
# + the cache append in the QKV GEMM's reduction (sk_rope): decode.LinkedStep(gemms="linked64",
# proj="linked", pdl=True, trigger_first=True, rope="fused"). Attention: a, b, select.json's,
# select_revised.json's; "none_fast_pdl": without attention.
FAST = dict(gemms="linked64", proj="linked", trigger_first=True, rope="fused", o_blocks_per_sm=2, min_registers=True)
# o_blocks_per_sm=2 from session 6 (16:40 UTC on): the O GEMM linked with --blocks-per-sm 2, so its
# blocks fit beside the attention's and stream W_o during it (step_variants.py, results/
# step_variants_o2.json: 0.6-1.3% faster at B = 1 and 64, never slower); before, one block per SM.
# min_registers=True from session 7 (17:40 UTC on): the split-K GEMMs, the 64 x 64 gate/up and the
# fused MLP linked with --min-registers, so the norm kernels' blocks fit beside theirs (results/
# step_variants_s7_mr*.json: 1.6-5% faster at B = 16 and 64, level at B = 1); before, each GEMM
# block held the SM's whole register file.
FAST_MODES = {"a_fast_pdl": "a", "b_fast_pdl": "b", "selected_fast_pdl": "selected", "revised_fast_pdl": "revised",
              "none_fast_pdl": None}
# The fast step with the gate/up + SwiGLU + down as one linked kernel per layer (components/mlp,
# 6 + 5 ring stages: decode.LinkedStep(mlp="fused_g6d5")): 6 kernels per layer.
FAST_MLP = dict(FAST, mlp="fused_g6d5")


def fast_mlp(B: int):
    """The fused-MLP step's arguments at batch B: from session 8 (19:58 UTC on) the fused MLP with
    one weight ring for both phases (mlp="fused_u": X once per kernel, 8 rows per K step) where
    B <= 8 (results/step_variants_s8_u.json: 1.4-2.5% faster at B = 1, both graphs of each faster
    than both of the 6 + 5 ring's), the 6 + 5 rings above that."""
    return dict(FAST_MLP, mlp="fused_u") if B <= 8 else FAST_MLP


FAST_MLP_MODES = {"a_fastmlp_pdl": "a", "b_fastmlp_pdl": "b", "selected_fastmlp_pdl": "selected", "none_fastmlp_pdl": None}


def gpu_start(seed: int = 2026):
    """The start the scripts beside this one share: (torch, a flushing logger, the model) with the
    seed set, or None without a GPU ("skipped: no GPU" printed; the caller returns 77)."""
    import torch  # noqa: PLC0415
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return None
    torch.manual_seed(seed)
    return torch, (lambda s: print(s, flush=True)), D.Llama1B()


def capture(torch, fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    torch.cuda.synchronize()
    return g, out


def time_graphs(torch, graphs, reps, inner):
    names = list(graphs)
    samples = {n: [] for n in names}
    for g in graphs.values():  # warm
        g.replay()
    torch.cuda.synchronize()
    for r in range(reps):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(inner):
                graphs[n].replay()
            e1.record()
            e1.synchronize()
            samples[n].append(e0.elapsed_time(e1) / inner)
    return {n: dict(median=statistics.median(v), min=min(v), max=max(v)) for n, v in samples.items()}


def copy_bandwidth(torch):
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    ts = []
    for _ in range(10):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        dst.copy_(src)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / 1e3)
    del src, dst
    return 2 * n / statistics.median(ts)


def attention(sels, pdl, am, cache):
    """A linked attention of mode am ("a", "b", "selected": select.json's; "revised":
    select_revised.json's selected variant), from the tables with or without PDL."""
    if am == "revised":
        return D.PipeLinkAttention(sels[("revised", pdl)], cache, mode="selected")
    return D.PipeLinkAttention(sels[("select", pdl)], cache, mode=am)


def point(torch, model, sel, cache, B, ctx, reps, inner, log, check=True, kdir="", sel_pdl=None, sels=None):
    pos = ctx - 1
    tok = torch.randint(0, D.VOCAB, (B,), device="cuda")
    attns = {m: D.PipeLinkAttention(sel, cache, mode=m) for m in MODES[:3]}
    attns["torch"] = D.TorchAttention(cache)
    zero = torch.zeros(B, D.QH * D.HD, device="cuda", dtype=torch.bfloat16)
    attns["none"] = lambda l, q, L: zero  # the step without attention: what the rest costs
    graphs, outs = {}, {}
    for m in MODES + ("none",):
        graphs[m], outs[m] = capture(torch, lambda m=m: model.step(tok, pos, cache, attns[m]))
    # A second torch graph: RMSNorm as torch.nn.functional.rms_norm (one op) instead of the Hugging
    # Face formula's seven; the faster of the two torch graphs is the baseline the tables use.
    model.fused_norm = True
    try:
        graphs["torch_rmsnorm"], outs["torch_rmsnorm"] = capture(torch, lambda: model.step(tok, pos, cache, attns["torch"]))
    finally:
        model.fused_norm = False
    rests = {}
    if kdir:
        for m, (am, gemms, proj) in REST_MODES.items():
            attns[m] = attention(sels, False, am, cache)
            rests[m] = D.LinkedStep(model, kdir, B, cache, gemms=gemms, proj=proj)
        for m, (gemms, proj) in NONE_MODES.items():
            attns[m] = attns["none"]
            rests[m] = D.LinkedStep(model, kdir, B, cache, gemms=gemms, proj=proj)
        for m in rests:
            graphs[m], outs[m] = capture(torch, lambda m=m: rests[m].step(tok, pos, attns[m]))
    row = dict(B=B, ctx=ctx)
    pdl_modes = []
    if kdir and sel_pdl is not None:
        # A failure here (e.g. a capture the driver refuses) is recorded and leaves the other modes' results.
        try:
            for m, (am, gemms, proj) in PDL_MODES.items():
                attns[m] = attention(sels, True, am, cache)
                rests[m] = D.LinkedStep(model, kdir, B, cache, gemms=gemms, pdl=True, proj=proj)
            for m, (gemms, proj) in NONE_MODES.items():
                attns[m + "_pdl"] = attns["none"]
                rests[m + "_pdl"] = D.LinkedStep(model, kdir, B, cache, gemms=gemms, pdl=True, proj=proj)
            for m, am in FAST_MODES.items():
                attns[m] = attns["none"] if am is None else attention(sels, True, am, cache)
                rests[m] = D.LinkedStep(model, kdir, B, cache, pdl=True, **FAST)
            for m, am in FAST_MLP_MODES.items():
                attns[m] = attns["none"] if am is None else attention(sels, True, am, cache)
                rests[m] = D.LinkedStep(model, kdir, B, cache, pdl=True, **fast_mlp(B))
            for m in list(PDL_MODES) + [x + "_pdl" for x in NONE_MODES] + list(FAST_MODES) + list(FAST_MLP_MODES):
                graphs[m], outs[m] = capture(torch, lambda m=m: rests[m].step(tok, pos, attns[m]))
                pdl_modes.append(m)
        except Exception as e:  # noqa: BLE001
            row["pdl_error"] = f"{type(e).__name__}: {e}"
            log(f"  B={B} ctx={ctx}: PDL modes failed: {row['pdl_error']}")
            torch.cuda.synchronize()
            for m in list(PDL_MODES) + [x + "_pdl" for x in NONE_MODES] + list(FAST_MODES) + list(FAST_MLP_MODES):
                if m not in pdl_modes:
                    graphs.pop(m, None)
                    outs.pop(m, None)
    checked_pdl = tuple(x for x in pdl_modes if x in PDL_MODES or (x in FAST_MODES and FAST_MODES[x])
                        or (x in FAST_MLP_MODES and FAST_MLP_MODES[x]))
    for m in MODES[:3] + tuple(REST_MODES if kdir else ()) + checked_pdl:
        row[f"variant_{m}"] = attns[m].last
    if check:
        graphs["torch"].replay()
        torch.cuda.synchronize()
        ref = outs["torch"].clone()
        ref32 = model.step(tok, pos, cache, D.Fp32Attention(cache))  # eager: the noise scale
        noise = D.compare_logits(ref32, ref)["rel_l2"]
        del ref32
        row["check"] = {}
        graphs["torch_rmsnorm"].replay()
        torch.cuda.synchronize()
        row["check"]["torch_rmsnorm"] = D.compare_logits(outs["torch_rmsnorm"], ref, noise)
        for m in MODES[:3]:
            attns[m].out.fill_(float("nan"))
            graphs[m].replay()
            torch.cuda.synchronize()
            row["check"][m] = D.compare_logits(outs[m], ref, noise)
        for m in tuple(REST_MODES if kdir else ()) + checked_pdl:
            attns[m].out.fill_(float("nan"))
            rests[m].poison(pos)  # and the cache row at pos (see LinkedStep.poison)
            graphs[m].replay()
            torch.cuda.synchronize()
            row["check"][m] = D.compare_logits(outs[m], ref, noise)
        # PDL graphs against the same graphs without PDL (same kernels, same order): bit for bit?
        # Reported beside the criterion above, not part of it.
        for m in (x for x in pdl_modes if x in PDL_MODES):
            graphs[m[:-4]].replay()
            torch.cuda.synchronize()
            row["check"][m]["bit_equal_to_without_pdl"] = bool(torch.equal(outs[m], outs[m[:-4]]))
    row["step_ms"] = time_graphs(torch, graphs, reps, inner)
    # the attention alone: 16 layers' launches on a fixed random q
    q = (torch.randn(B, D.QH, D.HD, device="cuda") * 2).to(torch.bfloat16)
    ag = {}
    for m in MODES:
        ag[m], _ = capture(torch, lambda m=m: [attns[m](l, q, ctx) for l in range(D.LAYERS)])
    row["attn16_ms"] = time_graphs(torch, ag, reps, inner)
    s = row["step_ms"]
    log(f"  B={B:2d} ctx={ctx:5d}: step ms a {s['a']['median']:.3f}  b {s['b']['median']:.3f}  selected "
        f"{s['selected']['median']:.3f} ({row['variant_selected'][0]}, S={row['variant_selected'][1]})  torch {s['torch']['median']:.3f}"
        f" (F.rms_norm {s['torch_rmsnorm']['median']:.3f})"
        f" | attention x16 ms a {row['attn16_ms']['a']['median']:.3f} b {row['attn16_ms']['b']['median']:.3f} "
        f"sel {row['attn16_ms']['selected']['median']:.3f} sdpa {row['attn16_ms']['torch']['median']:.3f}"
        + f" | no attention {s['none']['median']:.3f}"
        + ("" if not check else "  checks " + " ".join(f"{m}:{'ok' if c['ok'] else 'FAIL'}({c['rel_l2']:.3f})" for m, c in row["check"].items())))
    if kdir:
        log("      linked rest: " + "  ".join(f"{m} {s[m]['median']:.3f}" for m in rests if m in s))
        if pdl_modes and check:
            log("      pdl bit-equal to without: " + " ".join(f"{m}:{row['check'][m]['bit_equal_to_without_pdl']}"
                                                        for m in pdl_modes if m in PDL_MODES))
    del graphs, ag, outs, attns, rests
    return row


def svg_plot(sweep, path):
    W, H, L, R, T, Bm = 760, 440, 70, 170, 30, 50
    xs = [r["ctx"] for r in sweep]
    series = [("PipeLink a", "#1f77b4", [r["step_ms"]["a"]["median"] for r in sweep]),
              ("PipeLink b", "#ff7f0e", [r["step_ms"]["b"]["median"] for r in sweep]),
              ("PipeLink selected", "#2ca02c", [r["step_ms"]["selected"]["median"] for r in sweep]),
              ("torch graph (SDPA)", "#d62728", [r["step_ms"]["torch"]["median"] for r in sweep]),
              ("HBM floor", "#7f7f7f", [r["floor_ms"] for r in sweep])]
    # The whole step linked (the "fast" PDL modes: split-K projections with RoPE in the QKV
    # reduction, 64 x 64 gate/up), where the sweep timed them: a, b and select.json's choice.
    for key, name, color in (("selected_fastmlp_pdl", "fast + fused MLP: selected", "#bcbd22"),
                             ("selected_fast_pdl", "fast step: selected", "#9467bd"), ("b_fast_pdl", "fast step: b", "#8c564b"),
                             ("a_fast_pdl", "fast step: a", "#17becf")):
        if all(key in r["step_ms"] for r in sweep):
            series.insert(3, (name, color, [r["step_ms"][key]["median"] for r in sweep]))
    import math
    lx0, lx1 = math.log2(min(xs)), math.log2(max(xs))
    ymax = max(max(v) for _, _, v in series) * 1.1
    px = lambda x: L + (math.log2(x) - lx0) / (lx1 - lx0) * (W - L - R)  # noqa: E731
    py = lambda y: H - Bm - y / ymax * (H - T - Bm)  # noqa: E731
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{L}" y="18" font-size="14">Llama-3.2-1B decode step, B = 1, one H200: ms per step vs context</text>',
         f'<line x1="{L}" y1="{H - Bm}" x2="{W - R}" y2="{H - Bm}" stroke="black"/>',
         f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - Bm}" stroke="black"/>']
    for x in xs:
        o.append(f'<text x="{px(x):.1f}" y="{H - Bm + 16}" text-anchor="middle">{x}</text>')
    o.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 12}" text-anchor="middle">context (keys attended)</text>')
    step = 0.25 if ymax < 2.5 else 0.5
    y = 0.0
    while y <= ymax:
        o.append(f'<line x1="{L - 4}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{L - 8}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
        y += step
    o.append(f'<text x="16" y="{(T + H - Bm) / 2:.0f}" transform="rotate(-90 16 {(T + H - Bm) / 2:.0f})" text-anchor="middle">ms per step</text>')
    for i, (name, color, ys) in enumerate(series):
        pts = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in zip(xs, ys))
        dash = ' stroke-dasharray="5,4"' if name == "HBM floor" else ""
        o.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for x, v in zip(xs, ys):
            o.append(f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="3" fill="{color}"/>')
        o.append(f'<line x1="{W - R + 12}" y1="{T + 20 + 18 * i}" x2="{W - R + 36}" y2="{T + 20 + 18 * i}" stroke="{color}" stroke-width="2"{dash}/>')
        o.append(f'<text x="{W - R + 42}" y="{T + 24 + 18 * i}">{name}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--inner", type=int, default=10)
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--sweep-only", action="store_true", help="only the context sweep at B = 1 (no six points)")
    ap.add_argument("--no-rest", action="store_true", help="leave out the linked-rest steps (decode.LinkedStep)")
    ap.add_argument("--B", default="1,16,64", help="batch sizes of the points")
    ap.add_argument("--no-pdl", action="store_true", help="leave out the linked-rest steps with programmatic dependent launch")
    a = ap.parse_args()
    import pipelink  # noqa: PLC0415
    import torch  # noqa: PLC0415
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    log = lambda s: print(s, flush=True)  # noqa: E731
    os.makedirs(a.out, exist_ok=True)
    sel = pipelink.Selection(os.path.join(a.kernels, "select.json"))
    sel_pdl = None if a.no_rest or a.no_pdl else D.selection(a.kernels, pdl=True)
    sels = {("select", False): sel, ("select", True): sel_pdl,
            ("revised", False): pipelink.Selection(os.path.join(a.kernels, "select_revised.json")),
            ("revised", True): None if sel_pdl is None else D.selection(a.kernels, pdl=True, table="select_revised")}
    with open(os.path.join(a.kernels, "select.json")) as f:
        table = json.load(f)
    torch.manual_seed(2026)
    t0 = time.time()
    model = D.Llama1B()
    bw = copy_bandwidth(torch)
    wbytes = model.weight_bytes()
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__,
               date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), copy_bandwidth_GBps=bw / 1e9,
               weight_bytes=wbytes, selection_table=table, reps=a.reps, inner=a.inner, points=[], sweep=[])
    log(f"copy bandwidth {bw / 1e9:.0f} GB/s, weights {wbytes / 1e9:.3f} GB")

    def kv_bytes(B, L):
        return B * D.LAYERS * 2 * D.KVH * L * D.HD * 2

    kdir = "" if a.no_rest else a.kernels
    for B in ([] if a.sweep_only else (int(x) for x in a.B.split(","))):
        cache = D.alloc_cache(B, 4096)
        for ctx in (16, 4096):
            row = point(torch, model, sel, cache, B, ctx, a.reps, a.inner, log, kdir=kdir, sel_pdl=sel_pdl, sels=sels)
            row["kv_bytes"] = kv_bytes(B, ctx)
            row["floor_ms"] = (wbytes + row["kv_bytes"]) / bw * 1e3
            res["points"].append(row)
            with open(os.path.join(a.out, "bench.json"), "w") as f:  # after every point: a cut run keeps what it has
                json.dump(res, f, indent=1)
        del cache
        torch.cuda.empty_cache()
    log(f"points done ({time.time() - t0:.0f} s)")
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    if not a.no_sweep:
        cache = D.alloc_cache(1, 8192)
        for ctx in (16, 64, 256, 512, 1024, 2048, 4096, 8192):
            row = point(torch, model, sel, cache, 1, ctx, max(5, a.reps // 2), a.inner, log, check=True, kdir=kdir, sel_pdl=sel_pdl, sels=sels)
            row["kv_bytes"] = kv_bytes(1, ctx)
            row["floor_ms"] = (wbytes + row["kv_bytes"]) / bw * 1e3
            res["sweep"].append(row)
        del cache
        svg_plot(res["sweep"], os.path.join(a.out, "sweep.svg"))
        log(f"sweep done ({time.time() - t0:.0f} s)")
    # the PipeLink graphs' checks (the F.rms_norm torch graph's is reported beside them: a baseline)
    ok = all(c["ok"] for r in res["points"] + res["sweep"] for m, c in r.get("check", {}).items() if m != "torch_rmsnorm")
    ok = ok and not any("pdl_error" in r for r in res["points"] + res["sweep"])
    res["checks_ok"] = ok
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    log("bench checks: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
