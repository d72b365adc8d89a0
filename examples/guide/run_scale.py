#!/usr/bin/env python3
"""The walkthrough of docs/components.md, end to end: compile scale_epilogue.cu, link it between the
Qwen3-32B loader / main loop and the TMA store, launch it on torch tensors, check against torch.

    bash scripts/setup.sh && export PYTHONPATH=$PWD/build/python
    python3 examples/guide/run_scale.py [BUILD_DIR] [--out DIR]

--out DIR keeps the object, the cubins and the maps there (default: a temporary directory).

The kernel computes out[M, I] = bf16(bf16(X · W_gate^T) * scale), with W = [gate; up] [2I, K]
(the fused gate/up weight layout). Two links: tile 128x128 (two consumer warpgroups) and 64x104
(one). Each output is poisoned with NaN first and has NaN guard rows after it. Tolerance, per
element: |out - ref| <= 2^-7 |ref| + 1e-3 |scale|, ref = (X · W_gate^T in fp32) * scale: the kernel
rounds the gate to bf16 and the product again (at most 2^-8 relative each).

Linking needs no GPU. Exit status: 0 if every check passed, 1 if one failed, 77 with
"skipped: no GPU" after the links when PyTorch or a CUDA device is missing.
"""
import math
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
ARGS = sys.argv[1:]
OUT_DIR = None
if "--out" in ARGS:
    i = ARGS.index("--out")
    OUT_DIR = Path(ARGS[i + 1]).resolve()
    del ARGS[i:i + 2]
BUILD = Path(ARGS[0]).resolve() if ARGS else SRC / "build"
try:
    import pipelink
except ImportError:
    sys.path.insert(0, str(BUILD / "python"))
    import pipelink

HERE = Path(__file__).resolve().parent
Q = SRC / "examples" / "qwen_mlp"
QO = BUILD / "examples" / "qwen_mlp"  # the build's gu_loader.o, wgmma_gu*.o, tma_store.o
K, I = 1024, 3328                     # I = 26 * 128 = 32 * 104: whole column tiles in both variants
VARIANTS = {
    # name: (the main loop's contracts, M values to run)
    "scale_128x128": ([Q / "loader/contract.toml", Q / "mma/contract.toml", Q / "mma/contract.toml"], [256, 200]),
    "scale_64x104": ([Q / "loader/contract_small.toml", Q / "mma/contract_small.toml"], [64, 40]),
}
GUARD = 64


def link_all(out_dir):
    """Step 4 of the walkthrough: compile the epilogue (NVRTC), link each variant."""
    pipelink.compile(HERE / "scale_epilogue.cu", out_dir / "scale_epilogue.ltoir")
    kernels = {}
    for name, (main, _) in VARIANTS.items():
        contracts = main + [HERE / "contract.toml", Q / "store/contract.toml"]
        r = pipelink.link(contracts, output=out_dir / f"{name}.cubin", map=out_dir / f"{name}.map",
                          library_dirs=[out_dir, QO])
        print(f"linked {name}: {len(r.cubin)} bytes, {r.threads} threads, {r.smem_bytes} B smem, "
              f"{len(r.warnings)} warnings")
        for w in r.warnings:
            print(f"  {w}")
        kernels[name] = (out_dir / f"{name}.cubin", out_dir / f"{name}.map")
    return kernels


def main():
    tmp = tempfile.TemporaryDirectory()
    out_dir = OUT_DIR or Path(tmp.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        kernels = link_all(out_dir)
    except pipelink.LinkError as e:
        print(e.text, end="")
        print("FAIL: the link was refused")
        return 1
    try:
        import torch
    except ImportError:
        print("skipped: no GPU (PyTorch is not installed)")
        return 77
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77

    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    sms = props.multi_processor_count
    print(f"device: {props.name}, {sms} SMs; torch {torch.__version__}")
    gen = torch.Generator(device="cuda").manual_seed(7)
    W = (torch.randn(2 * I, K, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)  # [gate; up]
    failures = 0
    for name, (_, Ms) in VARIANTS.items():
        cubin, map_path = kernels[name]
        k = pipelink.Kernel(cubin, map_path)
        tm, tn, tk = k.fact("tile_m"), k.fact("tile_n"), k.fact("tile_k")
        print(f"== {name}: tile {tm}x{tn}, {k.threads} threads, {k.smem_bytes} B smem, params {k.params}")
        for M, scale in zip(Ms, (0.37, -2.5)):
            X = torch.randn(M, K, device="cuda", generator=gen).to(torch.bfloat16)
            buf = torch.full((M + GUARD, I), float("nan"), device="cuda", dtype=torch.bfloat16)
            out = buf[:M]
            grid = min(sms, math.ceil(M / tm) * math.ceil(I / tn))
            k.launch(grid,
                     x_map=pipelink.tensor_map(X, box=(tm, tk), swizzle="128B"),
                     w_map=pipelink.tensor_map(W, box=(tn, tk), swizzle="128B"),
                     out_map=pipelink.tensor_map(out, box=(64, tn), swizzle="none"),
                     K=K, M=M, N=I, n_step=tn, b_stride=I, scale=scale)
            torch.cuda.synchronize()
            ref = (X.float() @ W[:I].float().t()) * scale
            got = out.float()
            err = (got - ref).abs().nan_to_num(nan=float("inf"))
            tol = 2.0 ** -7 * ref.abs() + 1e-3 * abs(scale)
            over = int((err > tol).sum())
            unwritten = int(torch.isnan(got).sum())
            guard = int((~torch.isnan(buf[M:].float())).sum())
            rel = float(torch.linalg.vector_norm((got - ref).nan_to_num()) / torch.linalg.vector_norm(ref))
            ok = over == 0 and unwritten == 0 and guard == 0
            failures += not ok
            print(f"  M={M} scale={scale} grid {grid}: max abs err {float(err.max()):.3e}, rel L2 {rel:.2e}, "
                  f"worst err/tol {float((err / tol).max()):.3f}, over tol {over}, unwritten {unwritten}, "
                  f"guard rows written {guard}: {'OK' if ok else 'FAIL'}", flush=True)
        k.close()
    print("PASS" if failures == 0 else f"FAIL: {failures} checks failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
