"""The PyTorch pipeline for the Qwen3-30B-A3B expert layer (the baseline of bench/moe): router
matmul, softmax top-8 renormalized, sort by expert, gather, torch._grouped_mm gate/up, SwiGLU,
torch._grouped_mm down, routing-weight scale, index_add combine. Timed with triton's do_bench
(median), written as JSON. Run on the GPU machine in the same command as bench_moe."""
import json
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

H, I, E, K = 2048, 768, 128, 8
dev = torch.device("cuda")
torch.manual_seed(torch.seed())
Wgu = torch.randn(E, H, 2 * I, dtype=torch.bfloat16, device=dev) * 0.03
Wd = torch.randn(E, I, H, dtype=torch.bfloat16, device=dev) * 0.03
Wr = torch.randn(H, E, dtype=torch.bfloat16, device=dev) * 0.05
gm = torch._grouped_mm


def layer(X):
    logits = X @ Wr
    w, idx = torch.topk(torch.softmax(logits.float(), -1), K, dim=-1)
    w = (w / w.sum(-1, keepdim=True)).to(X.dtype)
    flat = idx.flatten()
    order = torch.argsort(flat, stable=True)
    offs = torch.cumsum(torch.bincount(flat, minlength=E), 0).to(torch.int32)
    xs = X[order // K]
    gu = gm(xs, Wgu, offs=offs)
    h = F.silu(gu[:, :I]) * gu[:, I:]
    o = gm(h, Wd, offs=offs) * w.flatten()[order].unsqueeze(-1)
    out = torch.zeros_like(X)
    out.index_add_(0, order // K, o)
    return out


rows = []
for T in [int(t) for t in (sys.argv[2] if len(sys.argv) > 2 else "512,4096,16384").split(",")]:
    X = torch.randn(T, H, dtype=torch.bfloat16, device=dev)
    layer(X)
    torch.cuda.synchronize()
    ms = do_bench(lambda: layer(X), warmup=25, rep=200, return_mode="median")
    flops = 2 * T * K * H * 3 * I
    rows.append(dict(T=T, ms=ms, expert_tflops=flops / ms / 1e9))
    print(f"torch T={T}: {ms:.4f} ms ({flops / ms / 1e9:.1f} TFLOP/s)", flush=True)
json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "results": rows}, open(sys.argv[1], "w"), indent=1)
