#!/usr/bin/env python3
"""One launch of the linked attention per (B, L, variant), for ncu: each config is launched twice
(the first warms), so `ncu -k pipelink_kernel --launch-skip 0` sees 2 launches per config.
    ncu -k pipelink_kernel --section SpeedOfLight --section Occupancy python3 attn_once.py --kernels DIR"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llama_decode"))
import decode as D  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kernels", required=True)
a = ap.parse_args()
import pipelink  # noqa: E402
import torch  # noqa: E402

sel = pipelink.Selection(os.path.join(a.kernels, "select.json"))
for B, L, mode in ((1, 4096, "a"), (1, 4096, "b"), (16, 4096, "b"), (64, 4096, "a")):
    K = torch.randn(1, B, D.KVH, L, D.HD, device="cuda").to(torch.bfloat16)
    V = torch.randn(1, B, D.KVH, L, D.HD, device="cuda").to(torch.bfloat16)
    q = torch.randn(B, D.QH, D.HD, device="cuda").to(torch.bfloat16)
    att = D.PipeLinkAttention(sel, (K, V), mode=mode)
    for _ in range(2):
        att(0, q, L)
    torch.cuda.synchronize()
    print(f"B={B} L={L} {mode}: variant {att.last[0]} S={att.last[1]} grid {B * D.KVH * att.last[1]}", flush=True)
