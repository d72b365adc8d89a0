"""The Qwen3-32B MLP gate/up + SwiGLU against PyTorch, in one process with one timer.

    PYTHONPATH=build/python python3 bench/qwen_mlp/bench_torch.py --kernels build/examples/qwen_mlp \
        [--M 16,128,1024,2048,4096,8192] [--rounds 20] [--json F] [--md F] [--profile]

The PipeLink kernels (linked fused and GEMM-only, the variant picked for each M by the rule of
bench_qwen_mlp) are loaded with `import pipelink` and launched on torch tensors on torch's current
stream; the PyTorch contenders run on the same tensors:
  torch.mm                  GU = torch.mm(X, W.t())  (cuBLAS, what a PyTorch user gets)
  swiglu-eager              H = F.silu(GU[:, :I]) * GU[:, I:]
  swiglu-compiled           the same function through torch.compile (dynamic shapes: one compile)
  torch.mm+swiglu-eager, torch.mm+swiglu-compiled   back to back, one timed region
  pipelink-fused, pipelink-gemm
Data: X ~ N(0,1), W ~ N(0, 0.02^2), bf16 (torch.randn), the same for every contender. Every output
is poisoned with NaN and checked per element against an fp32 reference (|out - ref| <= 1e-3 +
rtol |ref|, rtol 2^-7 for GU, 2^-6 for H, 2^-5 for the eager SwiGLU, which rounds silu and the
product to bf16), the worst element reported. Timing:
bench/common/bench.py's spin + round-robin timer; clocks read before and after each M.
--profile: only launch the headline kernels (fused and GEMM-only at the largest M) once each, for
ncu; no checks, no timing.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench as B  # noqa: E402  bench/common/bench.py
import pipelink  # noqa: E402
from qwen_select import EXTRA, VARIANTS, select  # noqa: E402  bench/qwen_mlp/qwen_select.py (no torch)

HID, INTER = 5120, 25600
GU_N = 2 * INTER
ATOL, RTOL_GU, RTOL_H = 1e-3, 2.0 ** -7, 2.0 ** -6
RTOL_H_BF16_MATH = 2.0 ** -5  # eager torch SwiGLU: silu and the product in bf16, two more roundings
# Session 13: the selected kernel's twin reading a packed W (gu_pack_w of its own cubin, once, not
# timed), timed beside it where one is linked (the C++ bench's rule): *_small16 -> *_small16_swap_packed
# (the wgmma operands swapped too), *_medium -> *_medium_packed.
PACKED_TWIN = {"fused_small16": "fused_small16_swap_packed", "gemm_small16": "gemm_small16_swap_packed",
               "fused_medium": "fused_medium_packed", "gemm_medium": "gemm_medium_packed", "gemm_medium_s4": "gemm_medium_packed",
               "fused_medium_swf": "fused_medium_swf_packed"}
# fused_pp_g8 (session 12): the ping-pong main loop (mma/wgmma_gu_pp.cu) in the grouped:8 order,
# selected at M >= 4096 in sessions 12-16, timed beside the selected kernel since.
# gemm_small16 / fused_small16 (session 11): the 16-row decode tile, selected at M <= 16.
# gemm_sw_splitk / fused_sw_splitk (session 10): the panel kernels' objects built to walk work units,
# linked with --tile-schedule split-k: the partial last wave's tiles cut into equal k pieces.
# gemm_sw_pair / fused_sw_pair: the panel kernels with one m64n256k16 per k16 step (A read once).
# gemm_cluster_sw / fused_cluster_sw: the same in 2-block clusters with W multicast (gu_loader_mc),
# timed beside the others at M >= 2048 (not selected).


def swiglu(gu: torch.Tensor) -> torch.Tensor:
    i = gu.shape[1] // 2
    return F.silu(gu[:, :i]) * gu[:, i:]


def load_kernels(d: str):
    ks = {}
    for v in VARIANTS + EXTRA:
        c, m = os.path.join(d, v + ".cubin"), os.path.join(d, v + ".map")
        if os.path.isfile(c) and os.path.isfile(m):
            ks[v] = pipelink.Kernel(c, m)
        else:
            print(f"skipping {v}: {c} or {m} missing")
    return ks


def add_torch_baselines(cont, outs, refs, X, W, GU32, H32, compiled, rtol_gu: float, rtol_h: float):
    """Registers torch.mm (cuBLAS) and torch.mm + the compiled SwiGLU as contenders (cont: name ->
    launch; outs: name -> output tensor; refs: name -> (reference, rtol)). Returns `hold`, whose
    "h" is the pair's latest output (the compiled SwiGLU allocates it)."""
    GU = torch.empty(X.shape[0], W.shape[0], dtype=torch.bfloat16, device=X.device)
    hold = {}
    cont["torch.mm"] = lambda: torch.mm(X, W.t(), out=GU)
    refs["torch.mm"] = (GU32, rtol_gu)
    outs["torch.mm"] = GU

    def pair():
        torch.mm(X, W.t(), out=GU)
        hold["h"] = compiled(GU)
    cont["torch.mm+swiglu-compiled"] = pair
    refs["torch.mm+swiglu-compiled"] = (H32, rtol_h)
    return hold


def poisoned_check(name, fn, outs, refs, hold, atol: float):
    """Runs contender `name` once on a NaN-poisoned output and checks it per element against its
    reference (refs[name] = (ref, rtol)); returns (the check, the output tensor)."""
    if name in outs:
        outs[name].fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    out = outs[name] if name in outs else hold["h"]
    ref, rtol = refs[name]
    return B.tol_check(out, ref, atol, rtol), out


def packed_weight(k, W, n_step: int, b_stride: int):
    """W packed for a link whose loader reads a packed weight (gu_loader_packed.cu): by the
    gu_pack_w kernel of that link's own cubin (its layout is the one that link's loader reads).
    Made once per kernel and weight (not timed); kept on the kernel."""
    key = (W.data_ptr(), n_step, b_stride)
    cache = k.__dict__.setdefault("_packed_w", {})
    if key not in cache:
        tn, tk = k.fact("tile_n"), k.fact("tile_k")
        n_tiles, k_tiles = -(-INTER // tn), HID // tk
        out = torch.empty(32768 + n_tiles * k_tiles * 2 * tn * tk, dtype=torch.bfloat16, device=W.device)  # 64 KB header + data
        pack = k.function("gu_pack_w", ["ptr", "u32", "u32", "u32", "u32", "u32", "ptr", "u64"])  # the same cubin's pack
        pack.launch(1024, 256, W, W.shape[0], HID, INTER, n_step, b_stride, out, out.numel() * 2)
        torch.cuda.synchronize()
        pack.close()
        cache.clear()  # one packing per kernel: W changes between benches, not within one
        cache[key] = out
    return cache[key]


def configure(k, fused: bool, X, W, out, M: int, sms: int) -> int:
    """Sets the kernel's params for M (out: H [M, I] for fused, GU [M, 2I] for gemm); returns the grid.
    Every map's box is the link's (the contracts name the tensor each map's copies move)."""
    tn = k.fact("tile_n")
    # every map's box and swizzle are the link's (each contract names the tensor its copies move)
    x_map = k.tensor_map("x_map", X, l2_promotion="256B")
    o_map = k.tensor_map("out_map", out, l2_promotion="none")
    n_step, b_stride = (tn, INTER) if fused else (2 * tn, tn)
    if "w_packed" in k.params:  # session 13: the loader reads W packed by its own link's gu_pack_w
        k.set(w_packed=packed_weight(k, W, n_step, b_stride))
    else:
        k.set(w_map=k.tensor_map("w_map", W, l2_promotion="256B"))
    k.set(n_step=n_step, b_stride=b_stride)  # packed: a checked build compares them with the pack's header
    k.set(x_map=x_map, out_map=o_map, K=HID, M=M, N=INTER)
    # Session 11 (before: min(sms, tiles)): the runtime's persistent grid, for a data-parallel link
    # the fewest blocks that take as many rounds of tiles as all resident ones (247 tiles: 124).
    return k.persistent_grid()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--M", default="16,128,1024,2048,4096,8192")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sustain-ms", type=float, default=0.0,
                    help="before each timed region the contender runs back to back, untimed, for about this long "
                         "(its own power steady state; default 0: the clock the round's mix left)")
    ap.add_argument("--region-ms", type=float, default=0.0, help="runs per timed region so that it lasts about this long")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    Ms = [int(m) for m in a.M.split(",")]
    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference is fp32
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    seed = int(time.time_ns() % (1 << 62))
    torch.manual_seed(seed)
    ks = load_kernels(a.kernels)
    W = torch.randn(GU_N, HID, dtype=torch.bfloat16, device=dev) * 0.02

    if a.profile:  # the headline kernels once each, for ncu (kernel name pipelink_kernel)
        M = max(Ms)
        X = torch.randn(M, HID, dtype=torch.bfloat16, device=dev)
        kinds = [("fused", None), ("gemm", None)]
        if select(ks, "gemm", M, sms) == "gemm_sw" and "gemm" in ks:
            kinds.append(("gemm", "gemm"))  # the row-major 128 x 128 GEMM too: its bank conflicts beside the panels'
        for kind, forced in kinds:
            v = forced or select(ks, kind, M, sms)
            out = torch.empty(M, INTER if kind == "fused" else GU_N, dtype=torch.bfloat16, device=dev)
            g = configure(ks[v], kind == "fused", X, W, out, M, sms)
            ks[v].launch(g)
            torch.cuda.synchronize()
            print(f"profile: launched {v} at M = {M} (grid {g})")
        return 0

    compiled = None
    compile_s = None
    try:
        t0 = time.time()
        compiled = torch.compile(swiglu, dynamic=True)
        compiled(torch.randn(16, GU_N, dtype=torch.bfloat16, device=dev))
        torch.cuda.synchronize()
        compile_s = time.time() - t0
        print(f"torch.compile(swiglu, dynamic=True): compiled in {compile_s:.1f} s")
    except Exception as e:  # noqa: BLE001 — reported, the eager SwiGLU still runs
        print(f"torch.compile failed: {type(e).__name__}: {e}")
        compiled = None

    print(f"device: {props.name} ({sms} SMs); torch {torch.__version__}; seed {seed}; "
          f"data X ~ N(0,1), W ~ N(0,0.02^2) bf16; {a.rounds} rounds")
    res = dict(bench="qwen3_32b_mlp_torch_same_process", device=props.name, sms=sms, torch=torch.__version__,
               python=sys.version.split()[0], seed=seed, rounds=a.rounds, sustain_ms=a.sustain_ms, region_ms=a.region_ms, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               data="X ~ N(0,1), W ~ N(0, 0.02^2), bf16 (torch.randn), the same for every contender",
               tolerance=dict(atol=ATOL, rtol_gu=RTOL_GU, rtol_h=RTOL_H), torch_compile_s=compile_s,
               timer="bench/common/bench.py: torch.cuda._sleep + round robin (order shuffled each round, seeded with the seed), CUDA events; median, spread = (q3-q1)/(2 median)",
               results=[])
    all_ok = True
    timer = B.RoundRobin(rounds=a.rounds, warmup=3, seed=seed,  # the order shuffle seeded with the data seed
                         sustain_ms=a.sustain_ms, target_ms=a.region_ms)
    for M in Ms:
        X = torch.randn(M, HID, dtype=torch.bfloat16, device=dev)
        GU32 = X.float() @ W.float().t()
        H32 = swiglu(GU32)
        GU = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
        OUT_F = torch.empty(M, INTER, dtype=torch.bfloat16, device=dev)
        OUT_G = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
        vf, vg = select(ks, "fused", M, sms), select(ks, "gemm", M, sms)
        gf = configure(ks[vf], True, X, W, OUT_F, M, sms)
        gg = configure(ks[vg], False, X, W, OUT_G, M, sms)
        Wt = W.t()
        hold = {}

        def mm():
            torch.mm(X, Wt, out=GU)

        def sw_eager():
            hold["h"] = swiglu(GU)

        def sw_comp():
            hold["h"] = compiled(GU)

        cont = {
            "pipelink-fused": lambda: ks[vf].launch(gf),
            "pipelink-gemm": lambda: ks[vg].launch(gg),
            "torch.mm": mm,
            "swiglu-eager": sw_eager,
            "torch.mm+swiglu-eager": lambda: (mm(), sw_eager()),
        }
        # the 128 x 128 GEMM with and without the swizzled accumulator panels, side by side
        OUT_S = OUT_T = None
        if "gemm_sw" in ks and "gemm" in ks and M >= 128:
            OUT_T = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
            if vg == "gemm_sw":  # selected: the same kernel object and output
                OUT_S, gs = OUT_G, gg
            else:
                OUT_S = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
                gs = configure(ks["gemm_sw"], False, X, W, OUT_S, M, sms)
            if vg == "gemm":
                OUT_T = OUT_G
            else:
                ks["gemm128"] = pipelink.Kernel(os.path.join(a.kernels, "gemm.cubin"), os.path.join(a.kernels, "gemm.map"))
                configure(ks["gemm128"], False, X, W, OUT_T, M, sms)
            g128 = min(sms, math.ceil(M / 128) * math.ceil(INTER / 128))
            cont["pipelink-gemm-sw (128x128, acc panels)"] = lambda: ks["gemm_sw"].launch(gs)
            cont["pipelink-gemm (128x128)"] = (lambda: ks["gemm"].launch(gg)) if vg == "gemm" else (lambda: ks["gemm128"].launch(g128))
        OUT_FS = OUT_FT = None
        if "fused_sw" in ks and "fused" in ks and M >= 128:  # the fused 128 x 128 kernel likewise
            OUT_FT = OUT_F if vf == "fused" else torch.empty(M, INTER, dtype=torch.bfloat16, device=dev)
            if vf == "fused_sw":  # selected: the same kernel object and output
                OUT_FS, gfs = OUT_F, gf
            else:
                OUT_FS = torch.empty(M, INTER, dtype=torch.bfloat16, device=dev)
                gfs = configure(ks["fused_sw"], True, X, W, OUT_FS, M, sms)
            if vf != "fused":
                ks["fused128"] = pipelink.Kernel(os.path.join(a.kernels, "fused.cubin"), os.path.join(a.kernels, "fused.map"))
                configure(ks["fused128"], True, X, W, OUT_FT, M, sms)
            gf128 = min(sms, math.ceil(M / 128) * math.ceil(INTER / 128))
            cont["pipelink-fused-sw (128x128, acc panels)"] = lambda: ks["fused_sw"].launch(gfs)
            cont["pipelink-fused (128x128)"] = (lambda: ks["fused"].launch(gf)) if vf == "fused" else (lambda: ks["fused128"].launch(gf128))
        OUT_CG = OUT_CF = None
        if "gemm_cluster_sw" in ks and "fused_cluster_sw" in ks and M >= 2048 and OUT_S is not None and OUT_FS is not None:
            OUT_CG = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
            OUT_CF = torch.empty(M, INTER, dtype=torch.bfloat16, device=dev)
            gcg = configure(ks["gemm_cluster_sw"], False, X, W, OUT_CG, M, sms)
            gcf = configure(ks["fused_cluster_sw"], True, X, W, OUT_CF, M, sms)
            cont["pipelink-gemm-cluster-sw (2-block clusters, W multicast)"] = lambda: ks["gemm_cluster_sw"].launch(gcg)
            cont["pipelink-fused-cluster-sw (2-block clusters, W multicast)"] = lambda: ks["fused_cluster_sw"].launch(gcf)
        OUT_PG = OUT_PF = None
        if "gemm_sw_pair" in ks and "fused_sw_pair" in ks and M >= 1024 and OUT_S is not None and OUT_FS is not None:
            OUT_PG = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
            OUT_PF = torch.empty(M, INTER, dtype=torch.bfloat16, device=dev)
            gpg = configure(ks["gemm_sw_pair"], False, X, W, OUT_PG, M, sms)
            gpf = configure(ks["fused_sw_pair"], True, X, W, OUT_PF, M, sms)
            cont["pipelink-gemm-sw-pair (one m64n256k16)"] = lambda: ks["gemm_sw_pair"].launch(gpg)
            cont["pipelink-fused-sw-pair (one m64n256k16)"] = lambda: ks["fused_sw_pair"].launch(gpf)
        OUT_KF = OUT_KG = None
        pf, pg = PACKED_TWIN.get(vf), PACKED_TWIN.get(vg)
        if pf in ks:
            OUT_KF = torch.empty(M, INTER, dtype=torch.bfloat16, device=dev)
            gkf = configure(ks[pf], True, X, W, OUT_KF, M, sms)
            cont["pipelink-fused (W packed)"] = lambda: ks[pf].launch(gkf)
        if pg in ks:
            OUT_KG = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
            gkg = configure(ks[pg], False, X, W, OUT_KG, M, sms)
            cont["pipelink-gemm (W packed)"] = lambda: ks[pg].launch(gkg)
        if compiled is not None:
            cont["swiglu-compiled"] = sw_comp
            cont["torch.mm+swiglu-compiled"] = lambda: (mm(), sw_comp())
        # -- checks: poison, run once, per element against the fp32 reference --
        checks = {}
        for name, fn in cont.items():
            if name.startswith("swiglu"):
                continue
            GU.fill_(float("nan"))
            OUT_F.fill_(float("nan"))
            OUT_G.fill_(float("nan"))
            for o in (OUT_S, OUT_T, OUT_FS, OUT_FT, OUT_CG, OUT_CF, OUT_PG, OUT_PF, OUT_KF, OUT_KG):
                if o is not None:
                    o.fill_(float("nan"))
            hold.clear()
            fn()
            torch.cuda.synchronize()
            if name == "pipelink-fused":
                out, ref, rtol = OUT_F, H32, RTOL_H
            elif name == "pipelink-gemm":
                out, ref, rtol = OUT_G, GU32, RTOL_GU
            elif name == "pipelink-gemm-sw (128x128, acc panels)":
                out, ref, rtol = OUT_S, GU32, RTOL_GU
            elif name == "pipelink-gemm (128x128)":
                out, ref, rtol = OUT_T, GU32, RTOL_GU
            elif name == "pipelink-fused-sw (128x128, acc panels)":
                out, ref, rtol = OUT_FS, H32, RTOL_H
            elif name == "pipelink-fused (128x128)":
                out, ref, rtol = OUT_FT, H32, RTOL_H
            elif name.startswith("pipelink-gemm-sw-pair"):
                out, ref, rtol = OUT_PG, GU32, RTOL_GU
            elif name.startswith("pipelink-fused-sw-pair"):
                out, ref, rtol = OUT_PF, H32, RTOL_H
            elif name.startswith("pipelink-gemm-cluster-sw"):
                out, ref, rtol = OUT_CG, GU32, RTOL_GU
            elif name.startswith("pipelink-fused-cluster-sw"):
                out, ref, rtol = OUT_CF, H32, RTOL_H
            elif name == "pipelink-fused (W packed)":
                out, ref, rtol = OUT_KF, H32, RTOL_H
            elif name == "pipelink-gemm (W packed)":
                out, ref, rtol = OUT_KG, GU32, RTOL_GU
            elif name == "torch.mm":
                out, ref, rtol = GU, GU32, RTOL_GU
            else:
                out, ref, rtol = hold["h"], H32, RTOL_H_BF16_MATH if name.endswith("eager") else RTOL_H
            checks[name] = B.tol_check(out, ref, ATOL, rtol)
            all_ok &= checks[name]["ok"]
        if OUT_S is not None:  # the same products in another shared-memory layout: bit-equal outputs
            OUT_S.fill_(float("nan"))
            OUT_T.fill_(float("nan"))
            cont["pipelink-gemm-sw (128x128, acc panels)"]()
            cont["pipelink-gemm (128x128)"]()
            torch.cuda.synchronize()
            checks["pipelink-gemm-sw (128x128, acc panels)"]["bit_equal_to_gemm_128x128"] = bool(torch.equal(OUT_S, OUT_T))
            all_ok &= checks["pipelink-gemm-sw (128x128, acc panels)"]["bit_equal_to_gemm_128x128"]
        if OUT_FS is not None:
            OUT_FS.fill_(float("nan"))
            OUT_FT.fill_(float("nan"))
            cont["pipelink-fused-sw (128x128, acc panels)"]()
            cont["pipelink-fused (128x128)"]()
            torch.cuda.synchronize()
            checks["pipelink-fused-sw (128x128, acc panels)"]["bit_equal_to_fused_128x128"] = bool(torch.equal(OUT_FS, OUT_FT))
            all_ok &= checks["pipelink-fused-sw (128x128, acc panels)"]["bit_equal_to_fused_128x128"]
        del GU32, H32
        # -- timing --
        c0 = B.clocks()
        samples = timer.run(cont)
        c1 = B.clocks()
        st = {n: B.stats(v) for n, v in samples.items()}
        pairs = [n for n in ("torch.mm+swiglu-eager", "torch.mm+swiglu-compiled") if n in st]
        best_pair = min(pairs, key=lambda n: st[n]["median"])
        sws = [n for n in ("swiglu-eager", "swiglu-compiled") if n in st]
        best_sw = min(sws, key=lambda n: st[n]["median"])
        flops = 2.0 * M * HID * GU_N
        claims = {
            "pipelink-fused / best torch pair": dict(B.paired_ratio(samples["pipelink-fused"], samples[best_pair]), b=best_pair),
            "pipelink-gemm / torch.mm": dict(B.paired_ratio(samples["pipelink-gemm"], samples["torch.mm"]), b="torch.mm"),
        }
        if OUT_KF is not None:
            claims["pipelink-fused (W packed) / best torch pair"] = dict(
                B.paired_ratio(samples["pipelink-fused (W packed)"], samples[best_pair]), b=best_pair, kernel=pf)
            claims["pipelink-fused (W packed) / pipelink-fused"] = dict(
                B.paired_ratio(samples["pipelink-fused (W packed)"], samples["pipelink-fused"]), b="pipelink-fused", kernel=pf)
        if OUT_KG is not None:
            claims["pipelink-gemm (W packed) / torch.mm"] = dict(
                B.paired_ratio(samples["pipelink-gemm (W packed)"], samples["torch.mm"]), b="torch.mm", kernel=pg)
            claims["pipelink-gemm (W packed) / pipelink-gemm"] = dict(
                B.paired_ratio(samples["pipelink-gemm (W packed)"], samples["pipelink-gemm"]), b="pipelink-gemm", kernel=pg)
        if OUT_S is not None:
            claims["pipelink-gemm-sw / pipelink-gemm (128x128)"] = dict(
                B.paired_ratio(samples["pipelink-gemm-sw (128x128, acc panels)"], samples["pipelink-gemm (128x128)"]), b="pipelink-gemm (128x128)")
            claims["pipelink-gemm-sw / torch.mm"] = dict(
                B.paired_ratio(samples["pipelink-gemm-sw (128x128, acc panels)"], samples["torch.mm"]), b="torch.mm")
        if OUT_PG is not None:
            OUT_PG.fill_(float("nan"))
            OUT_S.fill_(float("nan"))
            cont["pipelink-gemm-sw-pair (one m64n256k16)"]()
            cont["pipelink-gemm-sw (128x128, acc panels)"]()
            torch.cuda.synchronize()
            checks["pipelink-gemm-sw-pair (one m64n256k16)"]["bit_equal_to_gemm_sw"] = bool(torch.equal(OUT_PG, OUT_S))
            all_ok &= checks["pipelink-gemm-sw-pair (one m64n256k16)"]["bit_equal_to_gemm_sw"]
            claims["pipelink-gemm-sw-pair / pipelink-gemm-sw"] = dict(
                B.paired_ratio(samples["pipelink-gemm-sw-pair (one m64n256k16)"], samples["pipelink-gemm-sw (128x128, acc panels)"]),
                b="pipelink-gemm-sw (128x128, acc panels)")
            claims["pipelink-fused-sw-pair / pipelink-fused-sw"] = dict(
                B.paired_ratio(samples["pipelink-fused-sw-pair (one m64n256k16)"], samples["pipelink-fused-sw (128x128, acc panels)"]),
                b="pipelink-fused-sw (128x128, acc panels)")
        if OUT_CG is not None:
            claims["pipelink-gemm-cluster-sw / pipelink-gemm-sw"] = dict(
                B.paired_ratio(samples["pipelink-gemm-cluster-sw (2-block clusters, W multicast)"],
                               samples["pipelink-gemm-sw (128x128, acc panels)"]), b="pipelink-gemm-sw (128x128, acc panels)")
            claims["pipelink-fused-cluster-sw / pipelink-fused-sw"] = dict(
                B.paired_ratio(samples["pipelink-fused-cluster-sw (2-block clusters, W multicast)"],
                               samples["pipelink-fused-sw (128x128, acc panels)"]), b="pipelink-fused-sw (128x128, acc panels)")
            claims["pipelink-gemm-cluster-sw / torch.mm"] = dict(
                B.paired_ratio(samples["pipelink-gemm-cluster-sw (2-block clusters, W multicast)"], samples["torch.mm"]), b="torch.mm")
        if OUT_FS is not None:
            claims["pipelink-fused-sw / pipelink-fused (128x128)"] = dict(
                B.paired_ratio(samples["pipelink-fused-sw (128x128, acc panels)"], samples["pipelink-fused (128x128)"]),
                b="pipelink-fused (128x128)")
            claims["pipelink-fused-sw / best torch pair"] = dict(
                B.paired_ratio(samples["pipelink-fused-sw (128x128, acc panels)"], samples[best_pair]), b=best_pair)
            claims["pipelink-fused-sw / pipelink-fused (selected)"] = dict(
                B.paired_ratio(samples["pipelink-fused-sw (128x128, acc panels)"], samples["pipelink-fused"]), b="pipelink-fused")
        print(f"\n== M = {M}: fused variant {vf} (grid {gf}), gemm variant {vg} (grid {gg})")
        print(f"  clocks before: {B.clocks_line(c0)}\n  clocks after:  {B.clocks_line(c1)}")
        for n in cont:
            tf = "" if n.startswith("swiglu") else f"{flops / st[n]['median'] / 1e9:7.1f} TFLOP/s"
            chk = B.tol_line(checks[n]) if n in checks else "(checked in its pair)"
            print(f"  {n:26s} {B.fmt_ms(st[n]):>18s} ms {tf:>16s}  {chk}")
        for n, c in claims.items():
            print(f"  {n:40s} {B.fmt_ratio(c)}  (vs {c['b']})")
        res["results"].append(dict(M=M, flops=flops, fused_variant=vf, gemm_variant=vg, grid_fused=gf, grid_gemm=gg,
                                   clocks_before=c0, clocks_after=c1, best_pair=best_pair, best_swiglu=best_sw,
                                   entries={n: dict(ms=st[n], tflops=None if n.startswith("swiglu") else flops / st[n]["median"] / 1e9,
                                                    check=checks.get(n), runs_ms=samples[n]) for n in cont},
                                   claims=claims))
        del X, GU, OUT_F, OUT_G, OUT_S, OUT_T, OUT_FS, OUT_FT, OUT_CG, OUT_CF, OUT_PG, OUT_PF
        ks.pop("gemm128", None)
        ks.pop("fused128", None)
        torch.cuda.empty_cache()
    res["all_ok"] = all_ok
    if a.json:
        B.write_json(a.json, res)
    if a.md:
        write_md(a.md, res)
    print("\nPASS: every check passed" if all_ok else "\nFAIL: a check failed")
    return 0 if all_ok else 1


def write_md(path: str, res) -> None:
    L = [f"# Qwen3-32B MLP gate/up + SwiGLU against PyTorch, same process (bench/qwen_mlp/bench_torch.py)\n",
         f"{res['device']} ({res['sms']} SMs), {res['date']}, torch {res['torch']}, Python {res['python']}, seed {res['seed']}. "
         f"Data: {res['data']}. Timer: {res['timer']}; {res['rounds']} rounds"
         f"{'; each timed region after about %g ms of the same contender untimed (--sustain-ms)' % res['sustain_ms'] if res['sustain_ms'] > 0 else ''}"
         f"{'; timed regions of about %g ms (--region-ms)' % res['region_ms'] if res['region_ms'] > 0 else ''}. PipeLink kernels loaded and launched on torch "
         f"tensors with `import pipelink`. Checks per element against fp32: |err| <= {ATOL} + rtol|ref| (rtol GU 2^-7, H 2^-6; eager SwiGLU, bf16 math: 2^-5). "
         f"torch.compile(swiglu, dynamic=True) took {res['torch_compile_s'] or float('nan'):.1f} s to compile. "
         f"All checks {'passed' if res['all_ok'] else '**did not pass**'}.\n",
         "Ratios are per round (paired), median [q1, q3]; faster/slower only when the quartiles exclude 1.\n",
         "| M | PipeLink fused ms | best torch pair ms | fused / pair | PipeLink gemm ms | torch.mm ms | gemm / torch.mm | gemm TFLOP/s | "
         "swiglu eager ms | swiglu compiled ms | SM MHz before→after |",
         "|---:|---|---|---|---|---|---|---:|---|---|---|"]
    for r in res["results"]:
        e = r["entries"]
        cf, cg = r["claims"]["pipelink-fused / best torch pair"], r["claims"]["pipelink-gemm / torch.mm"]
        sc = B.fmt_ms(e["swiglu-compiled"]["ms"]) if "swiglu-compiled" in e else "—"
        L.append(f"| {r['M']} | {B.fmt_ms(e['pipelink-fused']['ms'])} ({r['fused_variant']}) | {B.fmt_ms(e[r['best_pair']]['ms'])} "
                 f"({r['best_pair']}) | {B.fmt_ratio(cf)} | {B.fmt_ms(e['pipelink-gemm']['ms'])} ({r['gemm_variant']}) | "
                 f"{B.fmt_ms(e['torch.mm']['ms'])} | {B.fmt_ratio(cg)} | {e['pipelink-gemm']['tflops']:.0f} | "
                 f"{B.fmt_ms(e['swiglu-eager']['ms'])} | {sc} | "
                 f"{r['clocks_before'].get('sm_mhz')}→{r['clocks_after'].get('sm_mhz')} |")
    pk = [r for r in res["results"] if "pipelink-fused (W packed) / best torch pair" in r["claims"]
          or "pipelink-gemm (W packed) / torch.mm" in r["claims"]]
    if pk:
        L.append("\n## With W packed (the selected kernel's twin whose loader reads W packed by its own link's gu_pack_w; "
                 "packed once, not timed)\n")
        L.append("| M | fused, W packed ms | / best torch pair | / PipeLink fused | gemm, W packed ms | / torch.mm | / PipeLink gemm |")
        L.append("|---:|---|---|---|---|---|---|")
        for r in pk:
            e, c = r["entries"], r["claims"]

            def cell(key):
                return B.fmt_ratio(c[key]) if key in c else "—"

            fk = c.get("pipelink-fused (W packed) / best torch pair", {}).get("kernel", "")
            gk = c.get("pipelink-gemm (W packed) / torch.mm", {}).get("kernel", "")
            fm = f"{B.fmt_ms(e['pipelink-fused (W packed)']['ms'])} ({fk})" if "pipelink-fused (W packed)" in e else "—"
            gm = f"{B.fmt_ms(e['pipelink-gemm (W packed)']['ms'])} ({gk})" if "pipelink-gemm (W packed)" in e else "—"
            L.append(f"| {r['M']} | {fm} | {cell('pipelink-fused (W packed) / best torch pair')} | "
                     f"{cell('pipelink-fused (W packed) / pipelink-fused')} | {gm} | {cell('pipelink-gemm (W packed) / torch.mm')} | "
                     f"{cell('pipelink-gemm (W packed) / pipelink-gemm')} |")
    L.append("\n## Checks\n")
    L.append("| M | contender | unwritten | over tol | worst err/tol | rel L2 | ok |\n|---:|---|---:|---:|---:|---:|---|")
    for r in res["results"]:
        for n, e in r["entries"].items():
            c = e["check"]
            if c:
                L.append(f"| {r['M']} | {n} | {c['unwritten']} | {c['over_tolerance']} | {c['worst_err_over_tol']:.3f} | "
                         f"{c['rel_l2']:.2e} | {'OK' if c['ok'] else '**FAIL**'} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    sys.exit(main())
