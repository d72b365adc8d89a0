"""Probe (session 8): does the Llama decode's split-K GEMM (sk_loader + sk_mma + sk_red, K chunks
as a tile dimension, f32 partial sums added into y) stream the Qwen3-32B gate/up weights at small M
faster than the Qwen 64-row kernels? GEMM only, no SwiGLU: GU32 [M, 51200] += X [M, 5120] W^T.
Timed with bench/common's round-robin timer against torch.mm and the Qwen gemm_small / fused_small
in one process; every output checked against an fp32 reference.

    PYTHONPATH=build/python python3 bench/qwen_mlp/splitk_probe.py --qwen build/examples/qwen_mlp \
        --llama build/examples/llama_decode [--M 16,64] [--json F]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench as B  # noqa: E402
import pipelink  # noqa: E402

HID, INTER = 5120, 25600
GU_N = 2 * INTER


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--qwen", required=True)
    ap.add_argument("--llama", required=True)
    ap.add_argument("--M", default="16,64")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json")
    a = ap.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(1)
    W = torch.randn(GU_N, HID, dtype=torch.bfloat16, device=dev) * 0.02
    links = {n: pipelink.Kernel(os.path.join(a.llama, n + ".cubin"), os.path.join(a.llama, n + ".map"))
             for n in ("splitk_k1024", "splitk", "splitk_k2048_mr_pdl") if os.path.exists(os.path.join(a.llama, n + ".cubin"))}
    gs = pipelink.Kernel(os.path.join(a.qwen, "gemm_small.cubin"), os.path.join(a.qwen, "gemm_small.map"))
    res = dict(device=torch.cuda.get_device_name(0), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), points=[])
    ok_all = True
    for M in (int(m) for m in a.M.split(",")):
        X = torch.randn(M, HID, dtype=torch.bfloat16, device=dev)
        ref = X.float() @ W.float().t()
        cont, outs = {}, {}
        for n, k in links.items():
            kc, tn = k.fact("k_chunk"), k.fact("tile_n")
            y = torch.zeros(M, GU_N, dtype=torch.float32, device=dev)
            k.set(x_map=pipelink.tensor_map(X, box=(k.fact("tile_m"), 64), swizzle="128B", l2_promotion="256B"),
                  w_map=pipelink.tensor_map(W, box=(tn, 64), swizzle="128B", l2_promotion="256B"), K=HID, y=y, M=M, N=GU_N)
            grid = min(sms, (HID // kc) * (GU_N // tn))
            outs[n] = y
            cont[f"splitk {n}"] = (lambda k=k, g=grid: k.launch(g))
        # the Qwen GEMM-only 64-row kernel
        tm, tn = gs.fact("tile_m"), gs.fact("tile_n")
        gu = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
        gs.set(x_map=pipelink.tensor_map(X, box=(tm, 64), swizzle="128B", l2_promotion="256B"),
               w_map=pipelink.tensor_map(W, box=(tn, 64), swizzle="128B", l2_promotion="256B"),
               out_map=pipelink.tensor_map(gu, box=(tm, 2 * tn), swizzle="none", l2_promotion="none"),
               K=HID, M=M, N=INTER, n_step=2 * tn, b_stride=tn)
        g_gs = min(sms, math.ceil(M / tm) * math.ceil(INTER / tn))
        cont["gemm_small (64 x 104)"] = lambda: gs.launch(g_gs)
        gm = torch.empty(M, GU_N, dtype=torch.bfloat16, device=dev)
        cont["torch.mm"] = lambda: torch.mm(X, W.t(), out=gm)
        # checks: one run each from zero
        checks = {}
        for n in links:
            outs[n].zero_()
            cont[f"splitk {n}"]()
            torch.cuda.synchronize()
            err = (outs[n] - ref).abs()
            checks[n] = float((err / (1e-3 + 2 ** -7 * ref.abs())).max().item())
        cont["gemm_small (64 x 104)"]()
        cont["torch.mm"]()
        torch.cuda.synchronize()
        checks["gemm_small"] = float(((gu.float() - ref).abs() / (1e-3 + 2 ** -7 * ref.abs())).max().item())
        checks["torch.mm"] = float(((gm.float() - ref).abs() / (1e-3 + 2 ** -7 * ref.abs())).max().item())
        ok = all(v <= 1.0 for v in checks.values())
        ok_all &= ok
        s = B.RoundRobin(rounds=a.rounds, warmup=3).run(cont)
        st = {n: B.stats(v) for n, v in s.items()}
        print(f"M = {M}: worst err/tol {checks} ({'ok' if ok else 'FAIL'})")
        for n in cont:
            print(f"  {n:28s} {st[n]['median']:.4f} ms  [{st[n]['q1']:.4f}, {st[n]['q3']:.4f}]  "
                  f"{2 * M * HID * GU_N / st[n]['median'] / 1e9:.1f} TFLOP/s, W at {GU_N * HID * 2 / st[n]['median'] / 1e9:.2f} TB/s")
        res["points"].append(dict(M=M, checks=checks, ok=ok, times=st))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
