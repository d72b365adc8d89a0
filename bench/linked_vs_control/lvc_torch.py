#!/usr/bin/env python3
"""Linked versus control for the kernels that run on torch tensors: the Llama-3.2-1B decode
attention (cores a and b, examples/llama_decode) and qwen_mlp's fused_small / gemm_small at the
Llama shapes (gate/up + SwiGLU: K = 2048, N = 8192; lm_head: N = 128256), through `import pipelink`.

usage: lvc_torch.py --kernels DIR --json RAW.json [--rounds 30]

DIR holds <family>/<kernel>.{cubin,map} and <kernel>_control.{cubin,map} (the layout
sass_compare.py reads: families `attention` and `llama_qwen`) and attention/select.json. Per
configuration, as bench_lvc does: the linked kernel, its control and the control loaded a second
time (A/A), in a rotating order each round behind a GPU spin (bench/common/bench.py's RoundRobin),
a kernel under 0.3 ms repeated inside its events. Checks: the outputs of linked and control are
compared word by word, and the linked output against an fp32 torch reference (attention: |err| <=
2^-7 |ref| + 2^-9, as decode.check_attention; GEMMs: |err| <= 2^-6 |ref| + 2^-6 rms(ref)), the
output poisoned with NaN first. Writes the configurations in bench_lvc's JSON form, which
report.py merges.
"""
import argparse
import math
import os
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "common"))
import bench as B  # noqa: E402
import pipelink  # noqa: E402

QH, KVH, HD, KV_TILE, HIDDEN, FFN, VOCAB = 32, 8, 64, 64, 2048, 8192, 128256


def kv_swizzle(map_path):
    """The swizzle of the kv pipe's tensors, as the link's map states it: the host's K / V tensor
    maps must match it."""
    import re  # noqa: PLC0415
    with open(map_path) as f:
        m = re.search(r"tensor k bf16\[\d+x\d+\] row/(\S+)", f.read())
    if not m:
        raise ValueError(f"{map_path}: no kv tensor line")
    return m.group(1)


def trio(kdir, family, name):
    p = lambda n: (os.path.join(kdir, family, n + ".cubin"), os.path.join(kdir, family, n + ".map"))  # noqa: E731
    return pipelink.Kernel(*p(name)), pipelink.Kernel(*p(name + "_control")), pipelink.Kernel(*p(name + "_control"))


def measure(run, rounds, seed):
    """run(kernel) launches one kernel; returns the three sample lists and reps."""
    rr = B.RoundRobin(rounds=rounds, warmup=3, target_ms=0.3, max_reps=64, seed=seed)
    s = rr.run({"linked": lambda: run(0), "control": lambda: run(1), "control_again": lambda: run(2)})
    return s, rr.reps["linked"]


def ms3(v):
    st = B.stats(v)
    return dict(median=st["median"], min=min(v), max=max(v))


def ratio_stats(a, b):
    r = sorted(x / y for x, y in zip(a, b))
    q = lambda f: B._quantile(r, f)  # noqa: E731
    return dict(median=q(0.5), q1=q(0.25), q3=q(0.75), min=r[0], max=r[-1])


def words_differing(x, y):
    return int((x.contiguous().view(torch.int16) != y.contiguous().view(torch.int16)).sum().item())


def record(family, kernel, variant, shape, grid, k, samples, reps, check):
    s = samples
    return dict(family=family, kernel=kernel, variant=variant, shape=shape, grid=grid, threads=k.threads, smem=k.smem_bytes,
                reps=reps, linked_ms=ms3(s["linked"]), control_ms=ms3(s["control"]), control_again_ms=ms3(s["control_again"]),
                sample_ratio_linked_control=ratio_stats(s["linked"], s["control"]),
                sample_ratio_aa=ratio_stats(s["control_again"], s["control"]), check=check,
                samples_linked=len(s["linked"]), samples_control=len(s["control"]), samples_control_again=len(s["control_again"]))


def attention_configs(kdir, rounds, seed, log):
    sel = pipelink.Selection(os.path.join(kdir, "attention", "select.json"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = []
    for variant, name in (("a", "attn_a"), ("b", "attn_b")):
        ks = trio(kdir, "attention", name)
        for Bt, L in ((1, 16), (1, 1024), (1, 4096), (1, 8192), (16, 16), (16, 4096), (64, 16), (64, 4096)):
            g = torch.Generator(device="cuda")
            g.manual_seed(Bt * 100003 + L)
            rows = Bt * KVH * L
            K = torch.randn(rows, HD, generator=g, device="cuda").to(torch.bfloat16)
            V = torch.randn(rows, HD, generator=g, device="cuda").to(torch.bfloat16)
            q = (torch.randn(Bt, QH, HD, generator=g, device="cuda") * 2.0).to(torch.bfloat16)
            S = sel.params(variant, B=Bt, L=L, kv_heads=KVH, sms=sms)["S"]
            sw = kv_swizzle(ks[0].map_path)
            maps = (pipelink.tensor_map(K, box=(KV_TILE, HD), swizzle=sw), pipelink.tensor_map(V, box=(KV_TILE, HD), swizzle=sw))
            outs = [torch.empty(Bt, QH * HD, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
            cnt = torch.zeros(Bt * KVH, device="cuda", dtype=torch.int32)
            ws = torch.empty(Bt * KVH * 64 * 4 * (HD + 2), device="cuda", dtype=torch.float32)
            grid = Bt * KVH * S

            def run(i, outs=outs, maps=maps, q=q, L=L, S=S, Bt=Bt, cnt=cnt, ws=ws, ks=ks, grid=grid):
                k = ks[i]
                a = dict(k_map=maps[0], v_map=maps[1], q=q, attn_out=outs[i], L=L, kv_stride=L, L_new=1, S=S, BH=Bt * KVH, ws=ws, cnt=cnt)
                k.launch(grid, **{n: v for n, v in a.items() if n in k.params})

            for o in outs:
                o.fill_(float("nan"))
            run(0)
            run(1)
            torch.cuda.synchronize()
            kf = K.view(Bt, KVH, L, HD).float().repeat_interleave(QH // KVH, dim=1)
            vf = V.view(Bt, KVH, L, HD).float().repeat_interleave(QH // KVH, dim=1)
            p = torch.softmax(torch.einsum("bhd,bhld->bhl", q.float(), kf) / math.sqrt(HD), dim=-1)
            ref = torch.einsum("bhl,bhld->bhd", p, vf).reshape(Bt, QH * HD)
            c = B.tol_check(outs[0], ref, 2 ** -9, 2 ** -7)
            wd = words_differing(outs[0], outs[1])
            ok = c["ok"] and int(cnt.abs().sum().item()) == 0
            check = dict(ok=ok, words_differing=wd, unwritten_linked=int(torch.isnan(outs[0].float()).sum().item()),
                         unwritten_control=int(torch.isnan(outs[1].float()).sum().item()),
                         rel_diff_linked_control=float((outs[0].float() - outs[1].float()).norm() / outs[1].float().norm()),
                         ref_rel_err=c["rel_l2"], ref="fp32 torch attention, |err| <= 2^-7 |ref| + 2^-9")
            samples, reps = measure(run, rounds, seed)
            r = record("attention", name, f"core {variant}, S={S}", f"B={Bt} L={L}", grid, ks[0], samples, reps, check)
            out.append(r)
            log(f"attention/{name} B={Bt} L={L} S={S}: linked {r['linked_ms']['median']:.4f} control {r['control_ms']['median']:.4f} "
                f"ms, ratio q1-q3 {r['sample_ratio_linked_control']['q1']:.4f}-{r['sample_ratio_linked_control']['q3']:.4f}, "
                f"check {'ok' if ok else 'FAIL'} (words differing {wd}, worst err/tol {c['worst_err_over_tol']:.3f})")
            del K, V, q, outs, ws
    return out


def qwen_configs(kdir, rounds, seed, log):
    out = []
    e = dict(device="cuda", dtype=torch.bfloat16)
    Wgu = (torch.randn(2 * FFN, HIDDEN, device="cuda") * 0.02).to(torch.bfloat16)
    E = (torch.randn(VOCAB, HIDDEN, device="cuda") * 0.02).to(torch.bfloat16)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for name in ("fused_small", "gemm_small"):
        ks = trio(kdir, "llama_qwen", name)
        tm, tn, tk = ks[0].fact("tile_m"), ks[0].fact("tile_n"), ks[0].fact("tile_k")
        for Bt in (1, 16, 64):
            x = torch.randn(Bt, HIDDEN, **e)
            if name == "fused_small":
                outs = [torch.empty(Bt, FFN, **e) for _ in range(3)]
                grid = min(sms, -(-Bt // tm) * -(-FFN // tn))
                common = dict(x_map=pipelink.tensor_map(x, box=(tm, tk), swizzle="128B", l2_promotion="256B"),
                              w_map=pipelink.tensor_map(Wgu, box=(tn, tk), swizzle="128B", l2_promotion="256B"),
                              K=HIDDEN, M=Bt, N=FFN, n_step=tn, b_stride=FFN)
                omaps = [pipelink.tensor_map(o, box=(64, tn), swizzle="none", l2_promotion="none") for o in outs]
                xf = x.float()
                g_, u_ = xf @ Wgu[:FFN].float().t(), xf @ Wgu[FFN:].float().t()
                ref = g_ * torch.sigmoid(g_) * u_
                shape = f"M={Bt} N={FFN} K={HIDDEN} (Llama gate/up)"
            else:
                outs = [torch.empty(Bt, VOCAB, **e) for _ in range(3)]
                half = -(-VOCAB // 2)
                grid = min(sms, -(-Bt // tm) * -(-half // tn))
                common = dict(x_map=pipelink.tensor_map(x, box=(tm, tk), swizzle="128B", l2_promotion="256B"),
                              w_map=pipelink.tensor_map(E, box=(tn, tk), swizzle="128B", l2_promotion="256B"),
                              K=HIDDEN, M=Bt, N=half, n_step=2 * tn, b_stride=tn)
                omaps = [pipelink.tensor_map(o, box=(tm, 2 * tn), swizzle="none", l2_promotion="none") for o in outs]
                ref = x.float() @ E.float().t()
                shape = f"M={Bt} N={VOCAB} K={HIDDEN} (Llama lm_head)"

            def run(i, ks=ks, grid=grid, common=common, omaps=omaps):
                ks[i].launch(grid, out_map=omaps[i], **common)

            for o in outs:
                o.fill_(float("nan"))
            run(0)
            run(1)
            torch.cuda.synchronize()
            rms = float(ref.pow(2).mean().sqrt())
            c = B.tol_check(outs[0], ref, rms / 64, 2 ** -6)
            wd = words_differing(outs[0], outs[1])
            check = dict(ok=c["ok"], words_differing=wd, unwritten_linked=int(torch.isnan(outs[0].float()).sum().item()),
                         unwritten_control=int(torch.isnan(outs[1].float()).sum().item()),
                         rel_diff_linked_control=float((outs[0].float() - outs[1].float()).norm() / outs[1].float().norm()),
                         ref_rel_err=c["rel_l2"], ref="fp32 torch, |err| <= 2^-6 |ref| + rms/64")
            samples, reps = measure(run, rounds, seed)
            r = record("llama_qwen", name, f"{tm}x{tn}", shape, grid, ks[0], samples, reps, check)
            out.append(r)
            log(f"llama_qwen/{name} M={Bt}: linked {r['linked_ms']['median']:.4f} control {r['control_ms']['median']:.4f} ms, "
                f"ratio q1-q3 {r['sample_ratio_linked_control']['q1']:.4f}-{r['sample_ratio_linked_control']['q3']:.4f}, "
                f"check {'ok' if c['ok'] else 'FAIL'} (words differing {wd}, worst err/tol {c['worst_err_over_tol']:.3f})")
            del x, outs
    return out


def splitk_configs(kdir, rounds, seed, log):
    """The Llama decode's split-K GEMM (examples/llama_decode/components/splitk) at the QKV, O and
    down shapes, B = 1, 16, 64: f32 partial sums added into y, so the check is against an f32
    product of the same bf16 operands, and linked and control may differ in the last bits (the
    order of the atomic adds)."""
    out = []
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for name, N, K, what in (("splitk", 3072, 2048, "QKV"), ("splitk", 2048, 2048, "O"), ("splitk_k1024", 2048, 8192, "down")):
        ks = trio(kdir, "llama_splitk", name)
        tm, tn, tk, kc = ks[0].fact("tile_m"), ks[0].fact("tile_n"), ks[0].fact("tile_k"), ks[0].fact("k_chunk")
        W = (torch.randn(N, K, device="cuda") * 0.02).to(torch.bfloat16)
        wmap = pipelink.tensor_map(W, box=(tn, tk), swizzle="128B", l2_promotion="256B")
        grid = min(sms, (K // kc) * (N // tn))
        for Bt in (1, 16, 64):
            x = torch.randn(Bt, K, device="cuda").to(torch.bfloat16)
            xmap = pipelink.tensor_map(x, box=(tm, tk), swizzle="128B", l2_promotion="256B")
            ys = [torch.zeros(Bt, N, device="cuda") for _ in range(3)]

            def run(i, ks=ks, grid=grid, xmap=xmap, ys=ys, Bt=Bt, N=N, K=K):
                ks[i].launch(grid, x_map=xmap, w_map=wmap, K=K, N=N, M=Bt, y=ys[i])

            run(0)
            run(1)
            torch.cuda.synchronize()
            ref = x.float() @ W.float().t()
            rms = float(ref.pow(2).mean().sqrt())
            c = B.tol_check(ys[0], ref, rms / 1024, 2 ** -12)
            c1 = B.tol_check(ys[1], ref, rms / 1024, 2 ** -12)
            check = dict(ok=c["ok"] and c1["ok"], words_differing=int((ys[0] != ys[1]).sum().item()),
                         rel_diff_linked_control=float((ys[0] - ys[1]).norm() / ys[1].norm()), ref_rel_err=c["rel_l2"],
                         ref="fp32 torch product of the bf16 operands, |err| <= 2^-12 |ref| + rms/1024 (linked and control)")
            samples, reps = measure(run, rounds, seed)
            r = record("llama_splitk", name, f"{tm}x{tn}, k_chunk {kc}", f"M={Bt} N={N} K={K} (Llama {what})", grid, ks[0], samples,
                       reps, check)
            out.append(r)
            log(f"llama_splitk/{name} {what} M={Bt}: linked {r['linked_ms']['median']:.4f} control {r['control_ms']['median']:.4f} ms, "
                f"ratio q1-q3 {r['sample_ratio_linked_control']['q1']:.4f}-{r['sample_ratio_linked_control']['q3']:.4f}, "
                f"A/A q1-q3 {r['sample_ratio_aa']['q1']:.4f}-{r['sample_ratio_aa']['q3']:.4f}, check {'ok' if check['ok'] else 'FAIL'} "
                f"(rel diff linked/control {check['rel_diff_linked_control']:.1e})")
            del x, ys
    return out


def rope_configs(kdir, rounds, seed, log):
    """The Llama decode's QKV GEMM with RoPE and the KV-cache append in its reduction (sk_rope;
    splitk_rope and its --pdl link) at B = 1, 16, 64: each of linked / control / control again
    with its own accumulator, counters, q and caches (the kernel leaves accumulator and counters
    zero). Checked: q and the new cache rows against the rope of the f32 product rounded to bf16
    (rel L2 <= 2^-7, no NaN), accumulators and counters zero afterwards."""
    out = []
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    N, K, QH, KVH, HD, ctx, pos = 3072, 2048, 32, 8, 64, 64, 37
    ang = torch.outer(torch.arange(ctx, device="cuda", dtype=torch.float32),
                      500000.0 ** (-torch.arange(0, HD, 2, device="cuda", dtype=torch.float32) / HD))
    emb = torch.cat([ang, ang], dim=-1)
    cos, sin = emb.cos().contiguous(), emb.sin().contiguous()

    def rope(x):
        xf = x.float()
        rot = torch.cat([-xf[..., HD // 2:], xf[..., :HD // 2]], dim=-1)
        return (xf * cos[pos] + rot * sin[pos]).to(torch.bfloat16)

    for name in ("splitk_rope", "splitk_rope_pdl"):
        if not os.path.exists(os.path.join(kdir, "llama_splitk", name + ".cubin")):
            continue
        ks = trio(kdir, "llama_splitk", name)
        tm, tn, tk, kc = ks[0].fact("tile_m"), ks[0].fact("tile_n"), ks[0].fact("tile_k"), ks[0].fact("k_chunk")
        W = (torch.randn(N, K, device="cuda") * 0.03).to(torch.bfloat16)
        wmap = pipelink.tensor_map(W, box=(tn, tk), swizzle="128B", l2_promotion="256B")
        grid = min(sms, (K // kc) * (N // tn))
        for Bt in (1, 16, 64):
            x = torch.randn(Bt, K, device="cuda").to(torch.bfloat16)
            xmap = pipelink.tensor_map(x, box=(tm, tk), swizzle="128B", l2_promotion="256B")
            bufs = [dict(y=torch.zeros(Bt, N, device="cuda"), count=torch.zeros(N // 64, device="cuda", dtype=torch.int32),
                         q=torch.full((Bt, QH, HD), float("nan"), device="cuda", dtype=torch.bfloat16),
                         k=torch.full((Bt, KVH, ctx, HD), float("nan"), device="cuda", dtype=torch.bfloat16),
                         v=torch.full((Bt, KVH, ctx, HD), float("nan"), device="cuda", dtype=torch.bfloat16)) for _ in range(3)]

            def run(i, ks=ks, grid=grid, xmap=xmap, bufs=bufs, Bt=Bt):
                b = bufs[i]
                ks[i].launch(grid, x_map=xmap, w_map=wmap, K=K, N=N, M=Bt, y=b["y"], count=b["count"], q_heads=QH, kv_heads=KVH,
                             pos=pos, cos_t=cos, sin_t=sin, q_out=b["q"], k_cache=b["k"], v_cache=b["v"], max_ctx=ctx)

            run(0)
            run(1)
            torch.cuda.synchronize()
            ref = (x.float() @ W.float().t()).to(torch.bfloat16)
            refs = dict(q=rope(ref[:, :QH * HD].view(Bt, QH, HD)), k=rope(ref[:, QH * HD:(QH + KVH) * HD].view(Bt, KVH, HD)),
                        v=ref[:, (QH + KVH) * HD:].view(Bt, KVH, HD))
            rel, ok = {}, True
            for i in (0, 1):
                b = bufs[i]
                for t, got in (("q", b["q"]), ("k", b["k"][:, :, pos]), ("v", b["v"][:, :, pos])):
                    g, r_ = got.float(), refs[t].float()
                    e = float((g - r_).norm() / r_.norm()) if not torch.isnan(g).any() else float("nan")
                    rel[f"{'linked' if i == 0 else 'control'}_{t}"] = e
                    ok &= e <= 2 ** -7
                ok &= bool((b["y"] == 0).all()) and bool((b["count"] == 0).all())
            check = dict(ok=ok, rel_l2=rel, ref="q, k and v rows vs rope(bf16(fp32 product)), rel L2 <= 2^-7; y and counters zero after")
            samples, reps = measure(run, rounds, seed)
            r = record("llama_splitk", name, f"{tm}x{tn}, k_chunk {kc}, sk_rope", f"M={Bt} N={N} K={K} (Llama QKV + RoPE)", grid, ks[0],
                       samples, reps, check)
            out.append(r)
            log(f"llama_splitk/{name} QKV+RoPE M={Bt}: linked {r['linked_ms']['median']:.4f} control {r['control_ms']['median']:.4f} ms, "
                f"ratio q1-q3 {r['sample_ratio_linked_control']['q1']:.4f}-{r['sample_ratio_linked_control']['q3']:.4f}, "
                f"A/A q1-q3 {r['sample_ratio_aa']['q1']:.4f}-{r['sample_ratio_aa']['q3']:.4f}, check {'ok' if ok else 'FAIL'}")
            del x, bufs
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    seed = time.time_ns() % (1 << 62)
    torch.manual_seed(seed)
    log = lambda s: print(s, flush=True)  # noqa: E731
    props = torch.cuda.get_device_properties(0)
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    log(f"{props.name}, {date}, torch {torch.__version__}, seed {seed}, {a.rounds} rounds")
    configs = attention_configs(a.kernels, a.rounds, seed, log) + qwen_configs(a.kernels, a.rounds, seed, log)
    if os.path.isdir(os.path.join(a.kernels, "llama_splitk")):
        configs += splitk_configs(a.kernels, a.rounds, seed, log)
        configs += rope_configs(a.kernels, a.rounds, seed, log)
    ok = all(c["check"]["ok"] for c in configs)
    B.write_json(a.json, dict(bench="linked_vs_control_torch", device=props.name, date=date, rounds=a.rounds, warmup=3, seed=seed,
                              timer="bench/common/bench.py RoundRobin (spin, rotating order), target 0.3 ms per sample",
                              all_checks_ok=ok, configs=configs))
    log("PASS: every check passed" if ok else "FAIL: a check failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
