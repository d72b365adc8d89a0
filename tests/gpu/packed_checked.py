#!/usr/bin/env python3
"""Run by gpu.python_qwen in a subprocess of its own (a trap ends the CUDA context): the checked
build of fused_small16_packed (build/examples/qwen_mlp/checked/) launched with a W packed for the
plain GEMM's row pairing (n_step = 2 tile_n, b_stride = tile_n) but the fused kernel's params
(n_step = tile_n, b_stride = I). The loader must refuse it: a trap, not an output.

    PYTHONPATH=build/python python3 tests/gpu/packed_checked.py BUILD_DIR

Prints "refused: ..." and exits 0 when the launch fails with a launch failure (the trap; the
loader's printf, "w_packed was not packed for this launch: header word 5 ...", reaches stdout
where the driver flushes it); exits 1 if it completes or fails otherwise."""
import math
import sys
from pathlib import Path

import torch

BUILD = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(BUILD / "python"))
import pipelink  # noqa: E402

K_HIDDEN, N_INTER, M = 5120, 25600, 16
QO = BUILD / "examples" / "qwen_mlp"
k = pipelink.Kernel(QO / "checked" / "fused_small16_packed.cubin", QO / "checked" / "fused_small16_packed.map")
tm, tn, tk = k.fact("tile_m"), k.fact("tile_n"), k.fact("tile_k")
W = (torch.randn(2 * N_INTER, K_HIDDEN, device="cuda") * 0.02).to(torch.bfloat16)
X = torch.randn(M, K_HIDDEN, device="cuda").to(torch.bfloat16)
H = torch.empty(M, N_INTER, device="cuda", dtype=torch.bfloat16)
packed = torch.empty(32768 + math.ceil(N_INTER / tn) * (K_HIDDEN // tk) * 2 * tn * tk, device="cuda", dtype=torch.bfloat16)
pack = k.function("gu_pack_w", ["ptr", "u32", "u32", "u32", "u32", "u32", "ptr", "u64"])
pack.launch(264, 256, W, W.shape[0], K_HIDDEN, N_INTER, 2 * tn, tn, packed, packed.numel() * 2)  # the plain GEMM's pairing
torch.cuda.synchronize()
k.set(x_map=pipelink.tensor_map(X, box=(tm, tk), swizzle="128B", l2_promotion="256B"),
      out_map=pipelink.tensor_map(H, box=(min(64, tm), tn), swizzle="none", l2_promotion="none"),
      K=K_HIDDEN, M=M, N=N_INTER, n_step=tn, b_stride=N_INTER, w_packed=packed)  # the fused kernel's
try:
    k.launch()
    torch.cuda.synchronize()
except (RuntimeError, pipelink.CudaError) as e:  # the trap surfaces here, as a launch failure
    msg = str(e).splitlines()[0] if str(e) else ""
    if "launch failure" not in msg and "illegal instruction" not in msg:
        print(f"FAILED otherwise: {type(e).__name__}: {msg}", flush=True)
        sys.exit(1)
    print(f"refused: {type(e).__name__}: {msg}", flush=True)
    sys.exit(0)
print("NOT refused: the checked loader read a pack made for another row pairing", flush=True)
sys.exit(1)
