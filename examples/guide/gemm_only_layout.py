#!/usr/bin/env python3
"""What the GEMM-only Qwen link computes (docs/components.md, "--connect"): gu_loader + wgmma_gu x2 +
tma_store with --connect out=acc, no epilogue. The main loop's "acc" tile [tile_m x 2 tile_n] goes
straight to the store, at output columns t.n * 2 tile_n. Two launches of the same cubin:

  n_step = 2 tile_n, b_stride = tile_n (the bench's GEMM):  out [M, 2I] = X · W^T, W in row order
  n_step = tile_n,   b_stride = I      (the fused launch):  out [M, 2I] holds, per column tile j,
      [G[:, j tile_n : (j+1) tile_n] | U[:, j tile_n : (j+1) tile_n]]  (gate/up blocks interleaved)

with W = [gate; up] [2I, K], G = X · W_gate^T, U = X · W_up^T. Tolerance per element:
|out - ref| <= 2^-7 |ref| + 1e-3. Exit 0 pass, 1 fail, 77 "skipped: no GPU".

    PYTHONPATH=build/python python3 examples/guide/gemm_only_layout.py [BUILD_DIR]
"""
import math
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
BUILD = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else SRC / "build"
try:
    import pipelink
except ImportError:
    sys.path.insert(0, str(BUILD / "python"))
    import pipelink

Q = SRC / "examples" / "qwen_mlp"
K, I, M = 1024, 3328, 200


def main():
    tmp = Path(tempfile.mkdtemp())
    contracts = [Q / "loader/contract.toml", Q / "mma/contract.toml", Q / "mma/contract.toml", Q / "store/contract.toml"]
    pipelink.link(contracts, output=tmp / "gemm.cubin", map=tmp / "gemm.map", connect={"out": "acc"},
                  library_dirs=[BUILD / "examples" / "qwen_mlp"])
    try:
        import torch
    except ImportError:
        print("skipped: no GPU (PyTorch is not installed)")
        return 77
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    k = pipelink.Kernel(tmp / "gemm.cubin", tmp / "gemm.map")
    tm, tn, tk = k.fact("tile_m"), k.fact("tile_n"), k.fact("tile_k")
    gen = torch.Generator(device="cuda").manual_seed(11)
    W = (torch.randn(2 * I, K, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
    X = torch.randn(M, K, device="cuda", generator=gen).to(torch.bfloat16)
    full = X.float() @ W.float().t()                 # [M, 2I] = X · W^T
    G, U = full[:, :I], full[:, I:]
    interleaved = torch.cat([G.reshape(M, I // tn, tn), U.reshape(M, I // tn, tn)], dim=2).reshape(M, 2 * I)
    failures = 0
    for label, n_step, b_stride, ref in (("n_step=2*tile_n, b_stride=tile_n", 2 * tn, tn, full),
                                         ("n_step=tile_n, b_stride=I", tn, I, interleaved)):
        out = torch.full((M, 2 * I), float("nan"), device="cuda", dtype=torch.bfloat16)
        grid = min(sms, math.ceil(M / tm) * math.ceil(I / tn))
        k.launch(grid, x_map=pipelink.tensor_map(X, box=(tm, tk), swizzle="128B"),
                 w_map=pipelink.tensor_map(W, box=(tn, tk), swizzle="128B"),
                 out_map=pipelink.tensor_map(out, box=(tm, 2 * tn), swizzle="none"),
                 K=K, M=M, N=I, n_step=n_step, b_stride=b_stride)
        torch.cuda.synchronize()
        err = (out.float() - ref).abs().nan_to_num(nan=float("inf"))
        over = int((err > 2.0 ** -7 * ref.abs() + 1e-3).sum())
        ok = over == 0
        failures += not ok
        print(f"gemm-only, {label}: max abs err {float(err.max()):.3e}, over tol {over}: {'OK' if ok else 'FAIL'}")
    k.close()
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
