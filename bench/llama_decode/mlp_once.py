#!/usr/bin/env python3
"""Launches of the fused decode MLP (the fast step's kernel, decode.LinkedStep(**bench.FAST_MLP))
alone, for ncu, and a timing of it alone: layer 0's kernel at B = 1, twice (the first warms), so
`ncu -k pipelink_kernel --launch-skip 1 --launch-count 1` sees the second. With --time it also
prints the time per launch of back-to-back launches (CUDA events) and the weight bytes per second.
    PYTHONPATH=DIR/py ncu ... python3 mlp_once.py --kernels DIR/kernels [--B 1] [--time]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "llama_decode"))
import decode as D  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--kernels", required=True)
ap.add_argument("--B", type=int, default=1)
ap.add_argument("--time", action="store_true")
a = ap.parse_args()
import torch  # noqa: E402
import bench as BL  # noqa: E402

model = D.Llama1B()
cache = D.alloc_cache(a.B, 64)
st = D.LinkedStep(model, a.kernels, a.B, cache, pdl=True, **BL.FAST_MLP)
k = st.k[st.mlp_kernel]
st.h.normal_()
st.d32.zero_()
launch = lambda l=0: k.launch(st.mlp_grid, **st.mlp_common, **st.mlp_w[l])  # noqa: E731
for _ in range(2):
    launch()
torch.cuda.synchronize()
print(f"fused MLP {st.mlp_kernel}: grid {st.mlp_grid}, B = {a.B}", flush=True)
if a.time:
    wbytes = (model.wgu[0].numel() + model.wd[0].numel()) * 2
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    ts = []
    for r in range(21):  # 21 samples of 64 back-to-back launches (layers round robin, no PDL between them)
        ev[0].record()
        for i in range(64):
            launch(i % D.LAYERS)
        ev[1].record()
        ev[1].synchronize()
        ts.append(ev[0].elapsed_time(ev[1]) / 64)
    ts.sort()
    med = ts[len(ts) // 2]
    print(f"back to back (64 launches a sample, median of 21): {med * 1e3:.1f} us a launch, {wbytes / med / 1e9:.2f} TB/s of "
          f"weights ({wbytes / 1e6:.1f} MB)")
