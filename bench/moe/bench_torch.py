"""The Qwen3-30B-A3B expert layer (hidden 2048, intermediate 768, 128 experts, top-8 renormalized):
PipeLink's linked expert kernels against PyTorch's torch._grouped_mm pipeline, in one process, with
one timer, the same weights and the same inputs, outputs checked.

    PYTHONPATH=build/python python3 bench/moe/bench_torch.py --kernels build/examples/moe \
        [--T 512,4096,16384] [--rounds 20] [--json F] [--md F] [--profile]

Weights (bf16): Wr [128, 2048] ~ N(0, 0.05^2); Wgu [128 * 1536, 2048] ~ N(0, 0.03^2) (per expert 768
gate rows then 768 up rows: the PipeLink layout); Wd [128 * 2048, 768] ~ N(0, 0.03^2). PyTorch uses
the same tensors as strided views ([E, 2048, 1536] and [E, 768, 2048], K-major). X ~ N(0,1).

Routing: fp32 logits X·Wr^T, top-8, softmax over the chosen 8 (= the renormalized top-8 of the full
softmax). The torch pipeline does it with torch ops; the PipeLink layer with routing.cubin's kernels
(moe_topk, moe_offsets, moe_scatter, launched through pipelink.Function), as bench_moe does.
  torch     sort by expert, gather, torch._grouped_mm gate/up, SiLU * up, torch._grouped_mm down,
            × routing weight, index_add (the pipeline of the old bench/moe/torch_moe.py, with the
            expert counts made by scatter_add instead of bincount, which syncs with the host)
  pipelink  routing kernels (each expert's rows padded to expert_align, the expert of every 128-row
            tile, row -> token and row -> weight; the row total read back), then the linked gate/up
            kernel (gather + GEMM + SwiGLU × weight), the linked down_store kernel (GEMM, the expert
            rows stored to Hd by TMA) and routing.cubin's moe_topk_sum (each token's 8 rows added
            into Y fp32); the linked scatter-add down (GEMM + moe_combine's fp32 reductions into Y)
            is timed and checked beside it
Timed (bench/common/bench.py's spin + round-robin timer): the torch layer; its two halves (gather +
gate/up + SwiGLU, and down + scale + index_add) against the two PipeLink kernels. The PipeLink layer
(its routing reads the row total back to the host, so it cannot sit behind a spin) is timed in a
round robin without a spin, beside the torch layer again. Checks: both outputs per element against
an fp32 per-expert reference of the same routing (|err| <= rms(ref)/16 + 2^-6 |ref|), and against
each other (rtol 2^-5); Hm and Hd poisoned, every routed row must be written.
--profile: gate/up, down_store, moe_topk_sum and the scatter-add down at the largest T, once each, for ncu.
--router bf16: both pipelines compute the router logits with one bf16 tensor-core GEMM with fp32 output
(torch.mm(..., out_dtype=torch.float32)) instead of converting X to fp32 for an fp32 GEMM.
Also timed: the PipeLink layer without a host read (gate_up_dev / down_store_dev, and the 64-row-tile
links *64_dev), captured in one CUDA graph, beside the torch layer captured in one.
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
import bench as B  # noqa: E402
import pipelink  # noqa: E402

H, I, E, K = 2048, 768, 128, 8
TILE_M = 128
COUNT_STRIDE = 32  # words between the routing's expert counters in the padded routing (moe_topk_s)
dev = torch.device("cuda")


ROUTER = {"logits": "fp32"}  # --router: how both pipelines compute the router logits
_WR_BF16 = {}


def router_logits(X, Wr32):
    """The router logits X·Wr^T in fp32, as both pipelines compute them. "fp32" (the default): X
    converted to fp32, an fp32 GEMM (TF32 off). "bf16": one bf16 tensor-core GEMM with fp32
    accumulation and fp32 output (torch.mm(..., out_dtype=torch.float32)); Wr32 holds bf16 values,
    so the products are the same exact values, summed in another order."""
    if ROUTER["logits"] == "bf16":
        key = (Wr32.data_ptr(), tuple(Wr32.shape))
        if key not in _WR_BF16:  # converted once (exact: Wr32 holds bf16 values)
            _WR_BF16[key] = Wr32.to(torch.bfloat16)
        return torch.mm(X, _WR_BF16[key].t(), out_dtype=torch.float32)
    return X.float() @ Wr32.t()


def route(X, Wr32):
    """The routing both pipelines share: fp32 logits (no ties to break), softmax, top-8, renormalized."""
    logits = router_logits(X, Wr32)
    w, idx = torch.topk(torch.softmax(logits, -1), K, dim=-1)
    return w / w.sum(-1, keepdim=True), idx


class TorchMoE:
    def __init__(self, Wgu, Wd):
        self.Wgu = Wgu.view(E, 2 * I, H).transpose(1, 2)  # [E, H, 2I], K-major: the same storage
        self.Wd = Wd.view(E, H, I).transpose(1, 2)         # [E, I, H], K-major
        self.layout = "K-major views of the PipeLink weights (no copy)"
        try:  # torch._grouped_mm should take either layout; if not, the same values made contiguous
            offs = torch.tensor([64] * E, dtype=torch.int32, device=dev).cumsum(0).to(torch.int32)
            torch._grouped_mm(torch.randn(64 * E, H, dtype=torch.bfloat16, device=dev), self.Wgu, offs=offs)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            print(f"torch._grouped_mm refused the K-major views ({type(e).__name__}: {e}); using contiguous copies")
            self.Wgu, self.Wd = self.Wgu.contiguous(), self.Wd.contiguous()
            self.layout = "contiguous copies [E, K, N] of the PipeLink weights"

    def prepare(self, X, w, idx):
        flat = idx.flatten()
        order = torch.argsort(flat, stable=True)
        # counts by scatter_add, not bincount: bincount reads its input's max back to the host
        counts = torch.zeros(E, dtype=torch.int64, device=flat.device).scatter_add_(0, flat, torch.ones_like(flat))
        offs = torch.cumsum(counts, 0).to(torch.int32)
        return dict(X=X, w=w.to(X.dtype), order=order, offs=offs)

    def gate_up(self, p):
        xs = p["X"][p["order"] // K]
        gu = torch._grouped_mm(xs, self.Wgu, offs=p["offs"])
        return F.silu(gu[:, :I]) * gu[:, I:]

    def down(self, p, h):
        o = torch._grouped_mm(h, self.Wd, offs=p["offs"]) * p["w"].flatten()[p["order"]].unsqueeze(-1)
        out = torch.zeros_like(p["X"])
        out.index_add_(0, p["order"] // K, o)
        return out

    def layer(self, X, Wr32):
        w, idx = route(X, Wr32)
        p = self.prepare(X, w, idx)
        return self.down(p, self.gate_up(p))


class PipeLinkMoE:
    """The PipeLink layer from Python: the routing kernels of routing.cubin (pipelink.Function), the
    linked gate/up and down kernels (pipelink.Kernel), all on torch tensors, as bench_moe does in C++."""

    def __init__(self, kdir, Wgu, Wd, Wr32, T_max, sms):
        self.gu = pipelink.Kernel(os.path.join(kdir, "gate_up.cubin"), os.path.join(kdir, "gate_up.map"))
        self.dn = pipelink.Kernel(os.path.join(kdir, "down.cubin"), os.path.join(kdir, "down.map"))
        r = os.path.join(kdir, "routing.cubin")
        self.f_topk = pipelink.Function(r, "moe_topk", ["ptr", "u32", "u32", "ptr", "ptr", "ptr", "ptr"])
        self.f_offsets = pipelink.Function(r, "moe_offsets", ["ptr", "u32", "u32", "u32", "ptr", "ptr", "ptr"])
        self.f_scatter = pipelink.Function(r, "moe_scatter", ["u32", "ptr", "ptr", "ptr", "ptr", "ptr", "ptr"])
        # The layer's down: down_store.cubin (GEMM + TMA store of the rows to Hd) + moe_topk_sum.
        self.ds = pipelink.Kernel(os.path.join(kdir, "down_store.cubin"), os.path.join(kdir, "down_store.map"))
        self.f_sum = pipelink.Function(r, "moe_topk_sum", ["u32", "u32", "ptr", "ptr", "ptr", "ptr", "ptr"])
        # moe_topk_s / moe_offsets_s: each expert's counter in its own 128-byte line (COUNT_STRIDE
        # words apart), so the routed rows' atomics spread over the L2 instead of queueing on four lines
        self.f_topk_s = pipelink.Function(r, "moe_topk_s", ["ptr", "u32", "u32", "ptr", "u32", "ptr", "ptr", "ptr"])
        self.f_offsets_s = pipelink.Function(r, "moe_offsets_s", ["ptr", "u32", "u32", "u32", "u32", "ptr", "ptr", "ptr"])

        self.tn, self.out_rows, self.align = self.gu.fact("tile_n"), self.gu.fact("out_rows"), self.gu.fact("expert_align")
        self.sms, self.Wr32 = sms, Wr32
        self.w_gu = pipelink.tensor_map(Wgu, box=(self.tn, 64), swizzle="128B", l2_promotion="256B")
        self.w_dn = pipelink.tensor_map(Wd, box=(128, 64), swizzle="128B", l2_promotion="256B")
        self.max_rows = T_max * K + E * (self.align - 1)
        i32, f32 = dict(dtype=torch.int32, device=dev), dict(dtype=torch.float32, device=dev)
        self.counts, self.offsets, self.total_d = torch.zeros(E, **i32), torch.zeros(E, **i32), torch.zeros(1, **i32)
        self.counts_s = torch.zeros(E * COUNT_STRIDE, **i32)
        self.topk_e, self.topk_w, self.topk_pos = (torch.empty(T_max * K, **i32), torch.empty(T_max * K, **f32),
                                                   torch.empty(T_max * K, **i32))
        self.row_token = torch.empty(self.max_rows, **i32)
        self.row_weight = torch.empty(self.max_rows, **f32)
        self.tile_expert = torch.empty(self.max_rows // 64 + 1, **i32)  # per 128-row tile, or per 64-row one (layer_dev64)
        self.Hm = torch.empty(self.max_rows, I, dtype=torch.bfloat16, device=dev)
        self.Hd = torch.empty(self.max_rows, H, dtype=torch.bfloat16, device=dev)
        # The layer without a host read (layer_dev, CUDA-graph capturable): gate_up_dev / down_store_dev
        # are the same objects linked with w_loader_dev.toml, whose tile extent M is the address of the
        # routing's row total (total_d): the tile sequence reads it when the kernel runs.
        self.dev = os.path.exists(os.path.join(kdir, "gate_up_dev.cubin"))
        if self.dev:
            self.gu_dev = pipelink.Kernel(os.path.join(kdir, "gate_up_dev.cubin"), os.path.join(kdir, "gate_up_dev.map"))
            self.ds_dev = pipelink.Kernel(os.path.join(kdir, "down_store_dev.cubin"), os.path.join(kdir, "down_store_dev.map"))
        # The same with programmatic dependent launch (layer_dev_pdl): gate_up_dev_pdl /
        # down_store_dev_pdl (linked with --pdl) and routing_pdl.cubin's kernels (each triggers its
        # successor, then waits), all launched with the PDL attribute.
        self.pdl = self.dev and os.path.exists(os.path.join(kdir, "gate_up_dev_pdl.cubin"))
        if self.pdl:
            self.gu_pdl = pipelink.Kernel(os.path.join(kdir, "gate_up_dev_pdl.cubin"), os.path.join(kdir, "gate_up_dev_pdl.map"))
            self.ds_pdl = pipelink.Kernel(os.path.join(kdir, "down_store_dev_pdl.cubin"), os.path.join(kdir, "down_store_dev_pdl.map"))
            rp = os.path.join(kdir, "routing_pdl.cubin")
            self.p_topk = pipelink.Function(rp, "moe_topk", ["ptr", "u32", "u32", "ptr", "ptr", "ptr", "ptr"])
            self.p_offsets = pipelink.Function(rp, "moe_offsets", ["ptr", "u32", "u32", "u32", "ptr", "ptr", "ptr"])
            self.p_scatter = pipelink.Function(rp, "moe_scatter", ["u32", "ptr", "ptr", "ptr", "ptr", "ptr", "ptr"])
            self.p_sum = pipelink.Function(rp, "moe_topk_sum", ["u32", "u32", "ptr", "ptr", "ptr", "ptr", "ptr"])
        # The same in 64-row tiles (gate_up64_dev / down_store64_dev: experts padded to 64 rows).
        self.dev64 = os.path.exists(os.path.join(kdir, "gate_up64_dev.cubin"))
        if self.dev64:
            self.gu64 = pipelink.Kernel(os.path.join(kdir, "gate_up64_dev.cubin"), os.path.join(kdir, "gate_up64_dev.map"))
            self.ds64 = pipelink.Kernel(os.path.join(kdir, "down_store64_dev.cubin"), os.path.join(kdir, "down_store64_dev.map"))
            self.tm64, self.align64 = self.gu64.fact("tile_m"), self.gu64.fact("expert_align")
        # The "best" layer (session 9): the routing's counters 128 B apart and zeroed by the offsets
        # kernel, which also writes the padding rows (moe_offsets_pad_s: no fills), the gate/up
        # kernel in row_major order, down_store, and the top-k sum writing bf16 (moe_topk_sum_bf16).
        self.f_offsets_pad_s = pipelink.Function(r, "moe_offsets_pad_s",
                                                 ["ptr", "u32", "u32", "u32", "u32", "ptr", "ptr", "ptr", "ptr", "ptr"])
        self.f_sum_bf16 = pipelink.Function(r, "moe_topk_sum_bf16", ["u32", "u32", "ptr", "ptr", "ptr", "ptr", "ptr"])
        self.counts_p = torch.zeros(E * COUNT_STRIDE, **i32)  # only the best layer's: it leaves them zeroed
        # down_store_dev_sw: down_store with its accumulator stage in four 128B-swizzled 64-column
        # panels (wgmma_gu_sw + tma_store_sw: the accumulator stores free of bank conflicts)
        f = os.path.join(kdir, "down_store_dev_sw.cubin")
        self.ds_sw = pipelink.Kernel(f, f[:-len(".cubin")] + ".map") if self.dev and os.path.exists(f) else None
        f = os.path.join(kdir, "gate_up_dev_row_major_sw.cubin")  # the row_major gate/up with the same panels
        self.gu_sw = pipelink.Kernel(f, f[:-len(".cubin")] + ".map") if self.ds_sw is not None and os.path.exists(f) else None
        # the same two for 64-row tiles
        f, f2 = os.path.join(kdir, "gate_up64_dev_row_major_sw.cubin"), os.path.join(kdir, "down_store64_dev_sw.cubin")
        self.gu64_sw = self.ds64_sw = None
        if self.dev64 and os.path.exists(f) and os.path.exists(f2):
            self.gu64_sw = pipelink.Kernel(f, f[:-len(".cubin")] + ".map")
            self.ds64_sw = pipelink.Kernel(f2, f2[:-len(".cubin")] + ".map")
        # Session 13: the best layer's links reading the experts' weights packed (moe_w_loader_packed:
        # one contiguous bulk copy per stage), packed once by their own cubins' moe_pack_w.
        self.Wgu, self.Wd, self._packed = Wgu, Wd, {}
        self.pk = {}
        for t64, (a, b) in ((False, ("gate_up_dev_row_major_sw_packed", "down_store_dev_sw_packed")),
                            (True, ("gate_up64_dev_row_major_sw_packed", "down_store64_dev_sw_packed"))):
            fa, fb = os.path.join(kdir, a + ".cubin"), os.path.join(kdir, b + ".cubin")
            if os.path.exists(fa) and os.path.exists(fb) and (self.dev64 or not t64):
                self.pk[t64] = (pipelink.Kernel(fa, fa[:-len(".cubin")] + ".map"), pipelink.Kernel(fb, fb[:-len(".cubin")] + ".map"))
        # The gate/up kernel relinked in other tile orders (gate_up_dev_<order>, gate_up64_dev_<order>:
        # the same objects, --tile-order row_major or grouped:8; the default links walk col_major).
        self.gu_orders = {}
        for o in ("row_major", "grouped8"):
            for base, is64 in (("gate_up_dev", False), ("gate_up64_dev", True)):
                f = os.path.join(kdir, f"{base}_{o}.cubin")
                if os.path.exists(f) and (self.dev64 or not is64) and self.dev:
                    self.gu_orders[(o, is64)] = pipelink.Kernel(f, f[:-len(".cubin")] + ".map")

    def route(self, X):
        """bench_moe's route(): fp32 logits, moe_topk, moe_offsets, the row total read back, moe_scatter."""
        self.route_dev(X)
        return int(self.total_d.item())  # the host read

    def route_dev(self, X, align=None, tile_m=TILE_M, padded=False):
        """The routing kernels, nothing read back: the row total stays in total_d. padded: the
        counters COUNT_STRIDE words apart (moe_topk_s, moe_offsets_s)."""
        T = X.shape[0]
        align = align or self.align
        logits = router_logits(X, self.Wr32)
        if padded:
            self.counts_s.zero_()
            self.f_topk_s.launch((T * 32 + 255) // 256, 256, logits, T, E, self.counts_s, COUNT_STRIDE, self.topk_e, self.topk_w,
                                 self.topk_pos)
            self.f_offsets_s.launch(1, 128, self.counts_s, COUNT_STRIDE, E, align, tile_m, self.offsets, self.tile_expert,
                                    self.total_d)
        else:
            self.counts.zero_()
            self.f_topk.launch((T * 32 + 255) // 256, 256, logits, T, E, self.counts, self.topk_e, self.topk_w, self.topk_pos)
            self.f_offsets.launch(1, 128, self.counts, E, align, tile_m, self.offsets, self.tile_expert, self.total_d)
        self.row_token.fill_(-1)
        self.row_weight.zero_()
        self.f_scatter.launch((T * K + 255) // 256, 256, T, self.topk_e, self.topk_w, self.topk_pos, self.offsets, self.row_token,
                              self.row_weight)

    def setup_dev(self, X, Y, gu=None, ds=None):
        """Parameters of the layer without a host read: every buffer at its largest (max_rows), M the
        address of the row total, grids for the largest tile count (blocks past the tiles exit).
        gu, ds: other links of the same two kernels (the --pdl ones)."""
        if gu is not None:
            saved = self.gu_dev, self.ds_dev
            self.gu_dev, self.ds_dev = gu, ds
            try:
                self.setup_dev(X, Y)
            finally:
                self.gu_dev, self.ds_dev = saved
            return
        self.gu_dev.set(x=X, row_token=self.row_token, row_weight=self.row_weight, K=H, w_map=self.w_gu,
                        out_map=pipelink.tensor_map(self.Hm, box=(self.out_rows, self.tn), swizzle="none", l2_promotion="256B"),
                        n_step=self.tn, b_stride=I, expert_rows=2 * I, N=I, tile_expert=self.tile_expert, M=self.total_d)
        self.ds_dev.set(a_map=pipelink.tensor_map(self.Hm, box=(TILE_M, 64), swizzle="128B", l2_promotion="256B"),
                        out_map=pipelink.tensor_map(self.Hd, box=(TILE_M, 256), swizzle="none", l2_promotion="256B"),
                        K=I, w_map=self.w_dn, n_step=256, b_stride=128, expert_rows=H, N=H // 2,
                        tile_expert=self.tile_expert, M=self.total_d)
        self.Y, self.T = Y, X.shape[0]
        tiles_m = self.max_rows // TILE_M
        self.g_gu_dev = min(self.sms, tiles_m * math.ceil(I / self.tn))
        self.g_dn_dev = min(self.sms, tiles_m * (H // 256))

    def setup_dev64(self, X, Y, gu=None):
        """setup_dev for the 64-row-tile kernels. gu: another link of the 64-row gate/up kernel."""
        if gu is not None:
            saved = self.gu64
            self.gu64 = gu
            try:
                self.setup_dev64(X, Y)
            finally:
                self.gu64 = saved
            return
        tm = self.tm64
        self.gu64.set(x=X, row_token=self.row_token, row_weight=self.row_weight, K=H, w_map=self.w_gu,
                      out_map=pipelink.tensor_map(self.Hm, box=(self.gu64.fact("out_rows"), self.gu64.fact("tile_n")), swizzle="none",
                                                  l2_promotion="256B"),
                      n_step=self.gu64.fact("tile_n"), b_stride=I, expert_rows=2 * I, N=I, tile_expert=self.tile_expert, M=self.total_d)
        self.ds64.set(a_map=pipelink.tensor_map(self.Hm, box=(tm, 64), swizzle="128B", l2_promotion="256B"),
                      out_map=pipelink.tensor_map(self.Hd, box=(tm, 256), swizzle="none", l2_promotion="256B"),
                      K=I, w_map=self.w_dn, n_step=256, b_stride=128, expert_rows=H, N=H // 2,
                      tile_expert=self.tile_expert, M=self.total_d)
        self.Y, self.T = Y, X.shape[0]
        tiles_m = self.max_rows // tm
        self.g_gu64 = min(self.sms, tiles_m * math.ceil(I / self.gu64.fact("tile_n")))
        self.g_dn64 = min(self.sms, tiles_m * (H // 256))

    def layer_dev64(self, X, Y, gu=None):
        """layer_dev in 64-row tiles: experts padded to 64 rows. gu: another link of its gate/up."""
        self.route_dev(X, align=self.align64, tile_m=self.tm64)
        (gu or self.gu64).launch(self.g_gu64)
        self.ds64.launch(self.g_dn64)
        self.topk_sum()

    def setup_dev_pdl(self, X, Y):
        self.setup_dev(X, Y, self.gu_pdl, self.ds_pdl)

    def layer_dev_pdl(self, X, Y):
        """layer_dev with programmatic dependent launch: the buffers the routing fills are cleared
        first (memset nodes would cut the PDL chain), then the router GEMM (cuBLAS), then topk,
        offsets, scatter, gate/up, down_store and the top-k sum, each launched with PDL."""
        T = X.shape[0]
        self.counts.zero_()
        self.row_token.fill_(-1)
        self.row_weight.zero_()
        logits = router_logits(X, self.Wr32)
        self.p_topk.launch((T * 32 + 255) // 256, 256, logits, T, E, self.counts, self.topk_e, self.topk_w, self.topk_pos, pdl=True)
        self.p_offsets.launch(1, 128, self.counts, E, self.align, TILE_M, self.offsets, self.tile_expert, self.total_d, pdl=True)
        self.p_scatter.launch((T * K + 255) // 256, 256, T, self.topk_e, self.topk_w, self.topk_pos, self.offsets, self.row_token,
                              self.row_weight, pdl=True)
        self.gu_pdl.launch(self.g_gu_dev)
        self.ds_pdl.launch(self.g_dn_dev)
        self.p_sum.launch(self.T, H // 8, self.T, H, self.topk_e, self.topk_pos, self.offsets, self.Hd, self.Y, pdl=True)

    def layer_dev_s(self, X, Y):
        """layer_dev with the routing's counters 128 bytes apart (moe_topk_s, moe_offsets_s)."""
        self.route_dev(X, padded=True)
        self.gu_dev.launch(self.g_gu_dev)
        self.ds_dev.launch(self.g_dn_dev)
        self.topk_sum()

    def route_best(self, X, align, tile_m):
        """The routing with nothing cleared by the host: moe_topk_s on counts_p (zero on entry),
        moe_offsets_pad_s (offsets, tile experts, the total, the padding rows' token -1 / weight 0,
        counts_p zeroed again), moe_scatter (the routed rows)."""
        T = X.shape[0]
        logits = router_logits(X, self.Wr32)
        self.f_topk_s.launch((T * 32 + 255) // 256, 256, logits, T, E, self.counts_p, COUNT_STRIDE, self.topk_e, self.topk_w,
                             self.topk_pos)
        self.f_offsets_pad_s.launch(1, 512, self.counts_p, COUNT_STRIDE, E, align, tile_m, self.offsets, self.tile_expert,
                                    self.total_d, self.row_token, self.row_weight)
        self.f_scatter.launch((T * K + 255) // 256, 256, T, self.topk_e, self.topk_w, self.topk_pos, self.offsets, self.row_token,
                              self.row_weight)

    def setup_ds_sw(self):
        """down_store_dev_sw's parameters: down_store_dev's, with out_map's box [128 x 64] in the 128B swizzle."""
        self.ds_sw.set(a_map=pipelink.tensor_map(self.Hm, box=(TILE_M, 64), swizzle="128B", l2_promotion="256B"),
                       out_map=pipelink.tensor_map(self.Hd, box=(TILE_M, 64), swizzle="128B", l2_promotion="256B"),
                       K=I, w_map=self.w_dn, n_step=256, b_stride=128, expert_rows=H, N=H // 2,
                       tile_expert=self.tile_expert, M=self.total_d)

    def setup_ds64_sw(self):
        """down_store64_dev_sw's parameters: down_store64_dev's, with out_map's box [64 x 64] in the 128B swizzle."""
        tm = self.tm64
        self.ds64_sw.set(a_map=pipelink.tensor_map(self.Hm, box=(tm, 64), swizzle="128B", l2_promotion="256B"),
                         out_map=pipelink.tensor_map(self.Hd, box=(tm, 64), swizzle="128B", l2_promotion="256B"),
                         K=I, w_map=self.w_dn, n_step=256, b_stride=128, expert_rows=H, N=H // 2,
                         tile_expert=self.tile_expert, M=self.total_d)

    def setup_best(self, X, Yb, tiles64, panels=False):
        """Parameters of layer_best: the row_major gate/up link (64- or 128-row tiles), Yb bf16 [T, H]."""
        if tiles64:
            self.setup_dev64(X, Yb, gu=self.gu64_sw if panels else self.gu_orders[("row_major", True)])
            if panels:
                self.setup_ds64_sw()
        else:
            self.setup_dev(X, Yb, gu=self.gu_sw if panels else self.gu_orders[("row_major", False)], ds=self.ds_dev)
            if panels:
                self.setup_ds_sw()

    def layer_best(self, X, Yb, tiles64, panels=False):
        """Routing to Yb (bf16) with no host read and no host-side clears: route_best, the row_major
        gate/up, down_store (panels: down_store_dev_sw), moe_topk_sum_bf16. tiles64: experts padded
        to 64 rows, else 128."""
        if tiles64:
            self.route_best(X, self.align64, self.tm64)
            (self.gu64_sw if panels else self.gu_orders[("row_major", True)]).launch(self.g_gu64)
            (self.ds64_sw if panels else self.ds64).launch(self.g_dn64)
        else:
            self.route_best(X, self.align, TILE_M)
            (self.gu_sw if panels else self.gu_orders[("row_major", False)]).launch(self.g_gu_dev)
            (self.ds_sw if panels else self.ds_dev).launch(self.g_dn_dev)
        T = X.shape[0]
        self.f_sum_bf16.launch(T, H // 8, T, H, self.topk_e, self.topk_pos, self.offsets, self.Hd, Yb)

    def packed(self, k, which):
        """The experts' gate/up ("gu") or down ("dn") weights packed by k's own cubin's moe_pack_w
        (its layout is the one k's loader reads); once per cubin and weight, not timed."""
        key = (k.cubin_path, which)
        if key not in self._packed:
            tn, tk = k.fact("tile_n"), k.fact("tile_k")
            W, rows, Kd, N, n_step, b_stride = ((self.Wgu, 2 * I, H, I, tn, I) if which == "gu"
                                                else (self.Wd, H, I, H // 2, 2 * tn, tn))
            n_tiles = -(-N // tn)
            out = torch.empty(32768 + E * n_tiles * (Kd // tk) * 2 * tn * tk, dtype=torch.bfloat16, device=dev)  # 64 KB header + data
            f = k.function("moe_pack_w", ["ptr", "u32", "u32", "u32", "u32", "u32", "u32", "ptr", "u64"])  # the same cubin's pack
            f.launch(1024, 256, W, E, rows, Kd, N, n_step, b_stride, out, out.numel() * 2)
            torch.cuda.synchronize()
            f.close()
            self._packed[key] = out
        return self._packed[key]

    def setup_best_packed(self, X, Yb, tiles64):
        """layer_best's parameters (with the acc panels) for the links reading packed weights."""
        gu, ds = self.pk[tiles64]
        tm = self.tm64 if tiles64 else TILE_M
        gu.set(x=X, row_token=self.row_token, row_weight=self.row_weight, K=H, w_packed=self.packed(gu, "gu"),
               out_map=pipelink.tensor_map(self.Hm, box=(gu.fact("out_rows"), gu.fact("tile_n")), swizzle="none", l2_promotion="256B"),
               N=I, tile_expert=self.tile_expert, M=self.total_d, n_step=gu.fact("tile_n"), b_stride=I, expert_rows=2 * I)
        ds.set(a_map=pipelink.tensor_map(self.Hm, box=(tm, 64), swizzle="128B", l2_promotion="256B"),
               out_map=pipelink.tensor_map(self.Hd, box=(tm, 64), swizzle="128B", l2_promotion="256B"),
               K=I, w_packed=self.packed(ds, "dn"), N=H // 2, tile_expert=self.tile_expert, M=self.total_d,
               n_step=2 * ds.fact("tile_n"), b_stride=ds.fact("tile_n"), expert_rows=H)
        self.Y, self.T = Yb, X.shape[0]
        tiles_m = self.max_rows // tm
        self.g_pk = (min(self.sms, tiles_m * math.ceil(I / gu.fact("tile_n"))), min(self.sms, tiles_m * (H // 256)))

    def layer_best_packed(self, X, Yb, tiles64):
        """layer_best (acc panels) with the links reading packed weights."""
        gu, ds = self.pk[tiles64]
        if tiles64:
            self.route_best(X, self.align64, self.tm64)
        else:
            self.route_best(X, self.align, TILE_M)
        gu.launch(self.g_pk[0])
        ds.launch(self.g_pk[1])
        T = X.shape[0]
        self.f_sum_bf16.launch(T, H // 8, T, H, self.topk_e, self.topk_pos, self.offsets, self.Hd, Yb)

    def topk_only(self, logits, padded):
        """moe_topk (or moe_topk_s) alone on given logits, its counters zeroed first (timing)."""
        T = logits.shape[0]
        if padded:
            self.counts_s.zero_()
            self.f_topk_s.launch((T * 32 + 255) // 256, 256, logits, T, E, self.counts_s, COUNT_STRIDE, self.topk_e, self.topk_w,
                                 self.topk_pos)
        else:
            self.counts.zero_()
            self.f_topk.launch((T * 32 + 255) // 256, 256, logits, T, E, self.counts, self.topk_e, self.topk_w, self.topk_pos)

    def layer_dev(self, X, Y, gu=None):
        """Routing to Y with no host read: capturable in one CUDA graph. gu: another link of gate_up_dev."""
        self.route_dev(X)
        (gu or self.gu_dev).launch(self.g_gu_dev)
        self.ds_dev.launch(self.g_dn_dev)
        self.topk_sum()

    def setup(self, X, Y, total):
        hm = self.Hm[:total]
        self.gu.set(x=X, row_token=self.row_token, row_weight=self.row_weight, K=H, w_map=self.w_gu,
                    out_map=pipelink.tensor_map(hm, box=(self.out_rows, self.tn), swizzle="none", l2_promotion="256B"),
                    n_step=self.tn, b_stride=I, expert_rows=2 * I, N=I, tile_expert=self.tile_expert, M=total)
        self.dn.set(a_map=pipelink.tensor_map(hm, box=(TILE_M, 64), swizzle="128B", l2_promotion="256B"),
                    row_token=self.row_token, y=Y, hidden=H, K=I, w_map=self.w_dn, n_step=256, b_stride=128,
                    expert_rows=H, N=H // 2, tile_expert=self.tile_expert, M=total)
        self.ds.set(a_map=pipelink.tensor_map(hm, box=(TILE_M, 64), swizzle="128B", l2_promotion="256B"),
                    out_map=pipelink.tensor_map(self.Hd[:total], box=(TILE_M, 256), swizzle="none", l2_promotion="256B"),
                    K=I, w_map=self.w_dn, n_step=256, b_stride=128, expert_rows=H, N=H // 2,
                    tile_expert=self.tile_expert, M=total)
        self.total, self.Y, self.T = total, Y, X.shape[0]
        self.g_gu = min(self.sms, (total // TILE_M) * math.ceil(I / self.tn))
        self.g_dn = min(self.sms, (total // TILE_M) * (H // 256))

    def gate_up(self):
        self.gu.launch(self.g_gu)

    def down_atomic(self):
        self.Y.zero_()  # the combine scatter-adds
        self.dn.launch(self.g_dn)

    def down_store(self):
        self.ds.launch(self.g_dn)

    def topk_sum(self):
        self.f_sum.launch(self.T, H // 8, self.T, H, self.topk_e, self.topk_pos, self.offsets, self.Hd, self.Y)

    def down(self):
        """The layer's down: the rows stored to Hd, then each token's 8 rows added into Y."""
        self.down_store()
        self.topk_sum()

    def layer(self, X, Y, down=None):
        self.setup(X, Y, self.route(X))
        self.gate_up()
        (down or self.down)()
        return self.total


def best_bit_equal(c):
    """(what, key) of a best layer's bit-equality check: the col_major layer's Y rounded to bf16, or
    for the layers reading packed weights the same layer reading them row-major."""
    if "bit_equal_to_unpacked_layer" in c:
        return "the same layer with W row-major", "bit_equal_to_unpacked_layer"
    return "the col_major layer's Y rounded to bf16", "bit_equal_to_col_major_layer_rounded"


def check_dev_layer(pl, setup, layer, X, Y, ref, atol, rtol, other):
    """A layer without a host read (layer_dev or layer_dev64), eager and then captured in one CUDA
    graph: Y against the reference, every routed row of Hm and Hd written (poisoned first), and bit
    for bit against Y of the layer checked before it (`other`), and the routing's rows: every row
    below the total either a routed token's or a padding row with token -1 and weight 0 (poisoned
    first with token 0 / weight 1, an in-range token: Y never reads a padding row, so only this
    sees a padding row the routing left unwritten, as moe_offsets_pad_s must write them). Returns
    (check, graph, the graph's output buffer): the caller keeps the buffer alive while it replays
    the graph, which writes it."""
    T = X.shape[0]

    def rows_ok(rows):
        rt, rw = pl.row_token[:rows], pl.row_weight[:rows]
        pad = rt == -1
        routed = int(((rt >= 0) & (rt < T)).sum())
        return int(pad.sum()) + routed == rows and routed == T * K and bool((rw[pad] == 0).all())

    Yd = torch.full_like(Y, float("nan"))
    pl.Hm.fill_(float("nan"))
    pl.Hd.fill_(float("nan"))
    pl.row_token.fill_(0)
    pl.row_weight.fill_(1.0)
    setup(X, Yd)
    layer(X, Yd)
    torch.cuda.synchronize()
    rows = int(pl.total_d.item())  # for the check only
    c = B.tol_check(Yd, ref, atol, rtol)
    c["rows"] = rows
    c["hm_rows_unwritten"] = int(torch.isnan(pl.Hm[:rows].float()).any(dim=1).sum())
    c["hd_rows_unwritten"] = int(torch.isnan(pl.Hd[:rows].float()).any(dim=1).sum())
    c["routing_rows_ok"] = rows_ok(rows)
    c[f"bit_equal_to_{other}"] = bool(torch.equal(Yd, Y))
    c["ok"] = c["ok"] and c["hm_rows_unwritten"] == 0 and c["hd_rows_unwritten"] == 0 and c["routing_rows_ok"]
    g = B.capture_graph(lambda: layer(X, Yd))
    Yd.fill_(float("nan"))
    pl.row_token.fill_(0)
    pl.row_weight.fill_(1.0)
    g.replay()
    torch.cuda.synchronize()
    c["graph_ok"] = B.tol_check(Yd, ref, atol, rtol)["ok"] and rows_ok(rows)
    c[f"graph_bit_equal_to_{other}"] = bool(torch.equal(Yd, Y))
    c["ok"] = c["ok"] and c["graph_ok"]
    return c, g, Yd


def reference(X, Wgu, Wd, w, idx):
    """fp32, expert by expert, from the same routing."""
    Xf = X.float()
    out = torch.zeros(X.shape[0], H, dtype=torch.float32, device=dev)
    Wg3, Wd3 = Wgu.view(E, 2 * I, H), Wd.view(E, H, I)
    for e in torch.unique(idx).tolist():
        tok, slot = torch.nonzero(idx == e, as_tuple=True)
        gu = Xf[tok] @ Wg3[e].float().t()
        h = F.silu(gu[:, :I]) * gu[:, I:]
        out.index_add_(0, tok, (h @ Wd3[e].float().t()) * w[tok, slot].float().unsqueeze(-1))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--T", default="512,4096,16384")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--router", choices=("fp32", "bf16"), default="fp32",
                    help="router logits for both pipelines: fp32 GEMM of X converted to fp32 (default), or a bf16 tensor-core "
                         "GEMM with fp32 output")
    a = ap.parse_args()
    ROUTER["logits"] = a.router
    Ts = [int(t) for t in a.T.split(",")]
    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    seed = int(time.time_ns() % (1 << 62))
    torch.manual_seed(seed)
    Wr = torch.randn(E, H, dtype=torch.bfloat16, device=dev) * 0.05
    Wr32 = Wr.float()
    Wgu = torch.randn(E * 2 * I, H, dtype=torch.bfloat16, device=dev) * 0.03
    Wd = torch.randn(E * H, I, dtype=torch.bfloat16, device=dev) * 0.03
    tm = TorchMoE(Wgu, Wd)
    pl = PipeLinkMoE(a.kernels, Wgu, Wd, Wr32, max(Ts), sms)

    if a.profile:
        T = max(Ts)
        X = torch.randn(T, H, dtype=torch.bfloat16, device=dev)
        Y = torch.empty(T, H, dtype=torch.float32, device=dev)
        if pl.gu_sw is not None and ("row_major", False) in pl.gu_orders:
            # session 9's kernels: the row-major gate/up without and with the accumulator panels,
            # then down_store without and with them (4 pipelink_kernel launches, same routing)
            Yb = torch.empty(T, H, dtype=torch.bfloat16, device=dev)
            pl.setup_best(X, Yb, False, False)
            pl.route_best(X, pl.align, TILE_M)
            pl.gu_orders[("row_major", False)].launch(pl.g_gu_dev)
            pl.setup_best(X, Yb, False, True)
            pl.gu_sw.launch(pl.g_gu_dev)
            pl.ds_dev.launch(pl.g_dn_dev)
            pl.ds_sw.launch(pl.g_dn_dev)
            torch.cuda.synchronize()
            print(f"profile: launched gate_up_dev_row_major, gate_up_dev_row_major_sw, down_store_dev, down_store_dev_sw at T = {T}")
            return 0
        pl.layer(X, Y)  # gate_up, down_store, moe_topk_sum
        pl.down_atomic()
        torch.cuda.synchronize()
        print(f"profile: launched gate_up (grid {pl.g_gu}), down_store (grid {pl.g_dn}), moe_topk_sum (grid {T}) and the "
              f"scatter-add down (grid {pl.g_dn}) at T = {T}, {pl.total} rows")
        return 0

    print(f"device: {props.name} ({sms} SMs); torch {torch.__version__}; seed {seed}; {a.rounds} rounds; router logits {a.router}")
    res = dict(bench="qwen3_30b_a3b_moe_torch_same_process", device=props.name, sms=sms, torch=torch.__version__,
               python=sys.version.split()[0], seed=seed, rounds=a.rounds, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               data="X ~ N(0,1), Wr ~ N(0,0.05^2), Wgu, Wd ~ N(0,0.03^2), bf16 (torch.randn); the same tensors for both",
               torch_weight_layout=tm.layout, router_logits=a.router,
               timer="bench/common/bench.py: torch.cuda._sleep + round robin, CUDA events; median, spread = (q3-q1)/(2 median)",
               results=[])
    all_ok = True
    spin_timer = B.RoundRobin(rounds=a.rounds, warmup=3, spin_ms=3.0)  # the torch layer enqueues ~25 ops
    for T in Ts:
        X = torch.randn(T, H, dtype=torch.bfloat16, device=dev)
        Y = torch.empty(T, H, dtype=torch.float32, device=dev)
        w, idx = route(X, Wr32)
        ref = reference(X, Wgu, Wd, w, idx)
        rms = float(ref.pow(2).mean().sqrt())
        atol, rtol = rms / 16, 2.0 ** -6  # bf16 intermediates: errors scale with the output's typical size
        # -- checks --
        pl.Hm.fill_(float("nan"))
        pl.Hd.fill_(float("nan"))
        Y.fill_(float("nan"))
        total = pl.layer(X, Y)
        torch.cuda.synchronize()
        hm_unwritten = int(torch.isnan(pl.Hm[:total].float()).any(dim=1).sum())  # every row, padding included
        hd_unwritten = int(torch.isnan(pl.Hd[:total].float()).any(dim=1).sum())
        c_pl = B.tol_check(Y, ref, atol, rtol)
        c_pl["hm_rows_unwritten"] = hm_unwritten
        c_pl["hd_rows_unwritten"] = hd_unwritten
        c_pl["ok"] = c_pl["ok"] and hm_unwritten == 0 and hd_unwritten == 0
        Y2 = torch.full_like(Y, float("nan"))  # the scatter-add down, checked too
        pl.layer(X, Y2, down=pl.down_atomic)
        torch.cuda.synchronize()
        c_at = B.tol_check(Y2, ref, atol, rtol)
        del Y2
        # the layer without a host read, eager and captured in one CUDA graph: Y against the same
        # reference, every routed row written, and bit for bit against the layer with the host read
        c_dev, g_dev, y_dev = check_dev_layer(pl, pl.setup_dev, pl.layer_dev, X, Y, ref, atol, rtol, "host_read_layer") \
            if pl.dev else (None, None, None)
        c_dev64, g_dev64, y_dev64 = check_dev_layer(pl, pl.setup_dev64, pl.layer_dev64, X, Y, ref, atol, rtol, "128_row_layer") \
            if pl.dev64 else (None, None, None)
        c_pdl, g_pdl, y_pdl = check_dev_layer(pl, pl.setup_dev_pdl, pl.layer_dev_pdl, X, Y, ref, atol, rtol, "host_read_layer") \
            if pl.pdl else (None, None, None)
        c_devs, g_devs, y_devs = check_dev_layer(pl, pl.setup_dev, pl.layer_dev_s, X, Y, ref, atol, rtol, "host_read_layer") \
            if pl.dev else (None, None, None)
        # the gate/up relinked in other tile orders: the same layer (eager and graph), Y bit for bit
        # against the col_major layer of the same tile height
        c_ord, g_ord = {}, {}
        for (o, is64), k in pl.gu_orders.items():
            name = f"{o}, {'64' if is64 else '128'}-row tiles"
            if is64:
                c, g, y = check_dev_layer(pl, lambda X_, Y_, k=k: pl.setup_dev64(X_, Y_, gu=k),
                                          lambda X_, Y_, k=k: pl.layer_dev64(X_, Y_, gu=k), X, y_dev64, ref, atol, rtol, "col_major_layer")
            else:
                c, g, y = check_dev_layer(pl, lambda X_, Y_, k=k: pl.setup_dev(X_, Y_, gu=k, ds=pl.ds_dev),
                                          lambda X_, Y_, k=k: pl.layer_dev(X_, Y_, gu=k), X, y_dev, ref, atol, rtol, "col_major_layer")
            c_ord[name], g_ord[name] = c, (g, y, k, is64)
            all_ok &= c["ok"]
        # the best layer, 128- and 64-row tiles: Y in bf16, equal bit for bit to the col_major
        # layer's fp32 Y rounded to bf16 (the same sums in the same order), and against the reference
        c_best, g_best = {}, {}
        if ("row_major", False) in pl.gu_orders and ("row_major", True) in pl.gu_orders:
            for t64, yref, pan in ((False, y_dev, False), (True, y_dev64, False)) + (((False, y_dev, True),) if pl.gu_sw else ()) \
                    + (((True, y_dev64, True),) if pl.gu64_sw else ()):
                name = ("64-row tiles" if t64 else "128-row tiles") + (", acc panels" if pan else "")
                c, g, y = check_dev_layer(pl, lambda X_, Y_, t64=t64, pan=pan: pl.setup_best(X_, Y_, t64, pan),
                                          lambda X_, Y_, t64=t64, pan=pan: pl.layer_best(X_, Y_, t64, pan), X, yref.to(torch.bfloat16),
                                          ref, atol, rtol, "col_major_layer_rounded")
                c_best[name], g_best[name] = c, (g, y)
                all_ok &= c["ok"]
            # the same layer reading packed weights: its stages hold the same bytes, so Y must equal
            # the unpacked acc-panels layer's bit for bit
            for t64 in sorted(pl.pk):
                base_name = ("64-row tiles" if t64 else "128-row tiles") + ", acc panels"
                if base_name not in g_best:
                    continue
                name = base_name + ", W packed"
                c, g, y = check_dev_layer(pl, lambda X_, Y_, t64=t64: pl.setup_best_packed(X_, Y_, t64),
                                          lambda X_, Y_, t64=t64: pl.layer_best_packed(X_, Y_, t64), X, g_best[base_name][1],
                                          ref, atol, rtol, "unpacked_layer")
                c["ok"] = c["ok"] and c["bit_equal_to_unpacked_layer"] and c["graph_bit_equal_to_unpacked_layer"]
                c_best[name], g_best[name] = c, (g, y)
                all_ok &= c["ok"]
        if pl.dev:
            pl.setup_dev(X, Y)  # the col_major kernels' parameters again, and the 128-row routing for
            pl.route_dev(X)     # the kernels timed alone below (the last check routed for 64-row tiles)
        total64 = c_dev64["rows"] if c_dev64 else 0
        all_ok &= all(c["ok"] for c in (c_dev, c_dev64, c_pdl, c_devs) if c is not None)
        # the torch layer in a CUDA graph too, where it captures (its counts come from scatter_add: no sync)
        g_t, t_graph_err = None, ""
        try:
            hold_t = {}
            g_t = B.capture_graph(lambda: hold_t.__setitem__("y", tm.layer(X, Wr32)))
            out_tg = hold_t["y"]
            g_t.replay()
            torch.cuda.synchronize()
            c_tg = B.tol_check(out_tg, ref, atol, rtol)
            if not c_tg["ok"]:
                t_graph_err, g_t = "the captured torch layer fails its check", None
        except Exception as e:  # noqa: BLE001
            t_graph_err, g_t = f"{type(e).__name__}: {e}", None
            torch.cuda.synchronize()
        pl.setup(X, Y, total)
        out_t = tm.layer(X, Wr32)
        torch.cuda.synchronize()
        c_t = B.tol_check(out_t, ref, atol, rtol)
        c_x = B.tol_check(Y, out_t.float(), atol, 2.0 ** -5)  # against each other (torch rounds h, o and the sum to bf16)
        all_ok &= c_pl["ok"] and c_t["ok"] and c_x["ok"] and c_at["ok"]
        # -- timing: the halves and the torch layer behind a spin, round robin --
        p = tm.prepare(X, w, idx)
        h_t = tm.gate_up(p)
        logits_t = router_logits(X, Wr32)
        hold = {}
        cont = {
            "torch layer": lambda: hold.__setitem__("y", tm.layer(X, Wr32)),
            "torch gate/up (gather + grouped_mm + SwiGLU)": lambda: hold.__setitem__("h", tm.gate_up(p)),
            "torch down (grouped_mm + scale + index_add)": lambda: hold.__setitem__("o", tm.down(p, h_t)),
            "pipelink gate/up": pl.gate_up,
            "pipelink down (+ combine, Y zeroed)": pl.down_atomic,
            "pipelink down_store (GEMM + row store)": pl.down_store,
            "pipelink top-k sum": pl.topk_sum,
            "pipelink down_store + top-k sum": pl.down,
            "pipelink moe_topk (counters contiguous)": lambda: pl.topk_only(logits_t, False),
            # the no-host-read kernels on the routing the last checked layer left in the buffers
            "pipelink gate_up_dev": lambda: pl.gu_dev.launch(pl.g_gu_dev),
            "pipelink down_store_dev": lambda: pl.ds_dev.launch(pl.g_dn_dev),
            "pipelink moe_topk_s (counters 128 B apart)": lambda: pl.topk_only(logits_t, True),
        }
        if pl.ds_sw is not None:
            pl.setup_ds_sw()
            cont["pipelink down_store_dev_sw (acc panels)"] = lambda: pl.ds_sw.launch(pl.g_dn_dev)
        if pl.gu_sw is not None:
            pl.setup_dev(X, Y, gu=pl.gu_sw, ds=pl.ds_dev)
            cont["pipelink gate_up_dev (row_major, acc panels)"] = lambda: pl.gu_sw.launch(pl.g_gu_dev)
        for name, (g, y, k, is64) in g_ord.items():
            if not is64:  # the 128-row kernel alone on the 128-row routing (the 64-row ones: in their layer graph only)
                cont[f"pipelink gate_up_dev ({name})"] = lambda k=k: k.launch(pl.g_gu_dev)
        c0 = B.clocks()
        samples = spin_timer.run(cont)
        # -- the layers, round robin without relying on a spin (the PipeLink routing syncs) --
        layer_timer = B.RoundRobin(rounds=a.rounds, warmup=3, spin_ms=3.0)
        lcont = {"pipelink layer (routing kernels, 1 host read)": lambda: pl.layer(X, Y),
                 "torch layer (same rounds)": lambda: hold.__setitem__("y", tm.layer(X, Wr32))}
        if g_dev is not None:
            lcont["pipelink layer, CUDA graph (no host read)"] = g_dev.replay
        if g_dev64 is not None:
            lcont["pipelink layer, 64-row tiles, CUDA graph (no host read)"] = g_dev64.replay
        if g_pdl is not None:
            lcont["pipelink layer, CUDA graph, PDL (no host read)"] = g_pdl.replay
        if g_devs is not None:
            lcont["pipelink layer, CUDA graph, padded counters (no host read)"] = g_devs.replay
        for name, (g, y, k, is64) in g_ord.items():
            lcont[f"pipelink layer, CUDA graph, gate/up {name}"] = g.replay
        for name, (g, y) in g_best.items():
            lcont[f"pipelink best layer, CUDA graph, {name}"] = g.replay
        if g_t is not None:
            lcont["torch layer, CUDA graph"] = g_t.replay
        lsamples = layer_timer.run(lcont)
        c1 = B.clocks()
        samples.update(lsamples)
        st = {n: B.stats(v) for n, v in samples.items()}
        flops_gu, flops_dn = 2.0 * T * K * H * 2 * I, 2.0 * T * K * H * I
        claims = {
            "pipelink gate/up / torch gate/up": B.paired_ratio(samples["pipelink gate/up"], samples["torch gate/up (gather + grouped_mm + SwiGLU)"]),
            "pipelink down / torch down": B.paired_ratio(samples["pipelink down_store + top-k sum"], samples["torch down (grouped_mm + scale + index_add)"]),
            "pipelink down_store + sum / scatter-add down": B.paired_ratio(samples["pipelink down_store + top-k sum"],
                                                                          samples["pipelink down (+ combine, Y zeroed)"]),
            "pipelink layer / torch layer (no spin, same rounds)": B.paired_ratio(
                samples["pipelink layer (routing kernels, 1 host read)"], samples["torch layer (same rounds)"]),
        }
        if g_dev is not None:
            claims["pipelink graph layer / torch layer (same rounds)"] = B.paired_ratio(
                samples["pipelink layer, CUDA graph (no host read)"], samples["torch layer (same rounds)"])
        if g_dev64 is not None:
            claims["pipelink 64-row graph layer / torch layer (same rounds)"] = B.paired_ratio(
                samples["pipelink layer, 64-row tiles, CUDA graph (no host read)"], samples["torch layer (same rounds)"])
            if g_dev is not None:
                claims["pipelink 64-row graph layer / 128-row graph layer"] = B.paired_ratio(
                    samples["pipelink layer, 64-row tiles, CUDA graph (no host read)"], samples["pipelink layer, CUDA graph (no host read)"])
        for name, (g, y, k, is64) in g_ord.items():
            base = "pipelink layer, 64-row tiles, CUDA graph (no host read)" if is64 else "pipelink layer, CUDA graph (no host read)"
            claims[f"graph layer, gate/up {name} / col_major"] = B.paired_ratio(samples[f"pipelink layer, CUDA graph, gate/up {name}"],
                                                                              samples[base])
            if not is64:
                claims[f"gate_up_dev {name} / col_major"] = B.paired_ratio(samples[f"pipelink gate_up_dev ({name})"],
                                                                          samples["pipelink gate_up_dev"])
        if pl.ds_sw is not None:
            claims["down_store_dev_sw / down_store_dev"] = B.paired_ratio(samples["pipelink down_store_dev_sw (acc panels)"],
                                                                         samples["pipelink down_store_dev"])
        if pl.gu_sw is not None and ("row_major", False) in pl.gu_orders:
            claims["gate_up_dev row_major + acc panels / row_major"] = B.paired_ratio(
                samples["pipelink gate_up_dev (row_major, acc panels)"], samples["pipelink gate_up_dev (row_major, 128-row tiles)"])
        if "64-row tiles, acc panels" in g_best:
            claims["best layer, 64-row acc panels / best layer, 64-row tiles"] = B.paired_ratio(
                samples["pipelink best layer, CUDA graph, 64-row tiles, acc panels"],
                samples["pipelink best layer, CUDA graph, 64-row tiles"])
        for name in [n for n in g_best if n.endswith(", W packed")]:
            claims[f"best layer, {name} / the same, W row-major"] = B.paired_ratio(
                samples[f"pipelink best layer, CUDA graph, {name}"], samples[f"pipelink best layer, CUDA graph, {name[:-len(', W packed')]}"])
        if "128-row tiles, acc panels" in g_best:
            claims["best layer, acc panels / best layer, 128-row tiles"] = B.paired_ratio(
                samples["pipelink best layer, CUDA graph, 128-row tiles, acc panels"],
                samples["pipelink best layer, CUDA graph, 128-row tiles"])
        # The rule for the best layer, fixed (session 9) before the run that measured it: 64-row tiles
        # when the average expert has fewer routed rows than one 128-row tile (T * K / E < 128), else
        # 128-row tiles; both with the accumulator panels.
        rule_name = ("64-row tiles" if T * K / E < 128 else "128-row tiles") + ", acc panels"
        rule = dict(T=T, choice=rule_name, ms=B.stats(samples[f"pipelink best layer, CUDA graph, {rule_name}"])) \
            if rule_name in g_best else None
        for name in g_best:
            base = "pipelink layer, 64-row tiles, CUDA graph (no host read)" if name.startswith("64") else \
                "pipelink layer, CUDA graph (no host read)"
            claims[f"best layer, {name} / the graph layer of its tile height"] = B.paired_ratio(
                samples[f"pipelink best layer, CUDA graph, {name}"], samples[base])
            if g_t is not None:
                claims[f"best layer, {name} / torch graph layer"] = B.paired_ratio(samples[f"pipelink best layer, CUDA graph, {name}"],
                                                                                  samples["torch layer, CUDA graph"])
        if g_devs is not None:
            claims["pipelink padded-counter graph layer / graph layer"] = B.paired_ratio(
                samples["pipelink layer, CUDA graph, padded counters (no host read)"], samples["pipelink layer, CUDA graph (no host read)"])
        claims["moe_topk_s / moe_topk"] = B.paired_ratio(samples["pipelink moe_topk_s (counters 128 B apart)"],
                                                         samples["pipelink moe_topk (counters contiguous)"])
        if g_pdl is not None and g_dev is not None:
            claims["pipelink PDL graph layer / graph layer"] = B.paired_ratio(
                samples["pipelink layer, CUDA graph, PDL (no host read)"], samples["pipelink layer, CUDA graph (no host read)"])
        if g_pdl is not None and g_t is not None:
            claims["pipelink PDL graph layer / torch graph layer"] = B.paired_ratio(
                samples["pipelink layer, CUDA graph, PDL (no host read)"], samples["torch layer, CUDA graph"])
        if g_dev is not None and g_t is not None:
            claims["pipelink graph layer / torch graph layer"] = B.paired_ratio(
                samples["pipelink layer, CUDA graph (no host read)"], samples["torch layer, CUDA graph"])
        print(f"\n== T = {T}: {T * K} routed rows, padded to {total}")
        if c_dev is not None:
            print(f"  pipelink Y, no host read (eager, then graph) vs fp32 ref: {B.tol_line(c_dev)}; graph ok {c_dev['graph_ok']}; "
                  f"bit-equal to the host-read layer: eager {c_dev['bit_equal_to_host_read_layer']}, graph "
                  f"{c_dev['graph_bit_equal_to_host_read_layer']}; Hm / Hd rows unwritten {c_dev['hm_rows_unwritten']} / {c_dev['hd_rows_unwritten']}")
        if c_dev64 is not None:
            print(f"  pipelink Y, 64-row tiles, no host read ({total64} rows) vs fp32 ref: {B.tol_line(c_dev64)}; graph ok "
                  f"{c_dev64['graph_ok']}; bit-equal to the 128-row layer {c_dev64['bit_equal_to_128_row_layer']}; Hm / Hd rows unwritten "
                  f"{c_dev64['hm_rows_unwritten']} / {c_dev64['hd_rows_unwritten']}")
        if c_pdl is not None:
            print(f"  pipelink Y, no host read, PDL (eager, then graph) vs fp32 ref: {B.tol_line(c_pdl)}; graph ok {c_pdl['graph_ok']}; "
                  f"bit-equal to the host-read layer: eager {c_pdl['bit_equal_to_host_read_layer']}, graph "
                  f"{c_pdl['graph_bit_equal_to_host_read_layer']}; Hm / Hd rows unwritten {c_pdl['hm_rows_unwritten']} / {c_pdl['hd_rows_unwritten']}")
        if c_devs is not None:
            print(f"  pipelink Y, no host read, padded counters (eager, then graph) vs fp32 ref: {B.tol_line(c_devs)}; graph ok "
                  f"{c_devs['graph_ok']}; bit-equal to the host-read layer: eager {c_devs['bit_equal_to_host_read_layer']}, graph "
                  f"{c_devs['graph_bit_equal_to_host_read_layer']}; Hm / Hd rows unwritten {c_devs['hm_rows_unwritten']} / "
                  f"{c_devs['hd_rows_unwritten']}")
        for name, c in c_best.items():
            what, key = best_bit_equal(c)
            print(f"  pipelink Y (bf16), best layer, {name} (eager, then graph) vs fp32 ref: {B.tol_line(c)}; graph ok {c['graph_ok']}; "
                  f"bit-equal to {what}: eager {c[key]}, graph "
                  f"{c['graph_' + key]}; Hm / Hd rows unwritten {c['hm_rows_unwritten']} / {c['hd_rows_unwritten']}")
        for name, c in c_ord.items():
            print(f"  pipelink Y, gate/up {name} (eager, then graph) vs fp32 ref: {B.tol_line(c)}; graph ok {c['graph_ok']}; "
                  f"bit-equal to the col_major layer: eager {c['bit_equal_to_col_major_layer']}, graph "
                  f"{c['graph_bit_equal_to_col_major_layer']}; Hm / Hd rows unwritten {c['hm_rows_unwritten']} / {c['hd_rows_unwritten']}")
        if t_graph_err:
            print(f"  torch layer not captured: {t_graph_err}")
        print(f"  clocks before: {B.clocks_line(c0)}\n  clocks after:  {B.clocks_line(c1)}")
        print(f"  pipelink Y vs fp32 ref: {B.tol_line(c_pl)}; Hm rows unwritten {hm_unwritten}")
        print(f"  pipelink Y (scatter-add down) vs fp32 ref: {B.tol_line(c_at)}; Hd rows unwritten {hd_unwritten}")
        print(f"  torch    Y vs fp32 ref: {B.tol_line(c_t)}")
        print(f"  pipelink vs torch:      {B.tol_line(c_x)}")
        for n in samples:
            tf = {"pipelink gate/up": flops_gu, "torch gate/up (gather + grouped_mm + SwiGLU)": flops_gu,
                  "pipelink down (+ combine, Y zeroed)": flops_dn, "torch down (grouped_mm + scale + index_add)": flops_dn,
                  "pipelink down_store (GEMM + row store)": flops_dn, "pipelink down_store + top-k sum": flops_dn,
                  "pipelink down_store_dev": flops_dn, "pipelink down_store_dev_sw (acc panels)": flops_dn,
                  "pipelink gate_up_dev": flops_gu, "pipelink gate_up_dev (row_major, 128-row tiles)": flops_gu,
                  "pipelink gate_up_dev (row_major, acc panels)": flops_gu}.get(n)
            print(f"  {n:52s} {B.fmt_ms(st[n]):>18s} ms" + (f"  {tf / st[n]['median'] / 1e9:6.1f} TFLOP/s" if tf else ""))
        for n, c in claims.items():
            print(f"  {n:52s} {B.fmt_ratio(c)}")
        if rule is not None:
            print(f"  best layer by the fixed rule: {rule['choice']}: {B.fmt_ms(rule['ms'])} ms")
        res["results"].append(dict(T=T, rows=total, clocks_before=c0, clocks_after=c1, flops_gate_up=flops_gu, flops_down=flops_dn,
                                   check_pipelink=c_pl, check_pipelink_scatter_add=c_at, check_torch=c_t, check_pipelink_vs_torch=c_x,
                                   check_pipelink_no_host_read=c_dev, check_pipelink_64_row_no_host_read=c_dev64, rows_64=total64,
                                   check_pipelink_no_host_read_pdl=c_pdl, check_pipelink_no_host_read_padded=c_devs,
                                   check_gate_up_orders=c_ord, check_best_layer=c_best, best_layer_rule=rule,
                                   torch_graph_error=t_graph_err,
                                   entries={n: dict(ms=st[n], runs_ms=samples[n]) for n in samples}, claims=claims))
        del X, Y, ref, p, h_t, hold, g_dev, g_dev64, y_dev, y_dev64, g_pdl, y_pdl, g_devs, y_devs, logits_t, g_ord, g_best
        torch.cuda.empty_cache()
    res["all_ok"] = all_ok
    if a.json:
        B.write_json(a.json, res)
    if a.md:
        write_md(a.md, res)
    print("\nPASS: every check passed" if all_ok else "\nFAIL: a check failed")
    return 0 if all_ok else 1


def write_md(path, res):
    L = [f"# Qwen3-30B-A3B expert layer against PyTorch, same process (bench/moe/bench_torch.py)\n",
         f"{res['device']}, {res['date']}, torch {res['torch']}, seed {res['seed']}. Data: {res['data']}. Timer: {res['timer']}; "
         f"{res['rounds']} rounds. Kernels loaded and launched on torch tensors with `import pipelink` (linked kernels: "
         f"pipelink.Kernel; the routing kernels of routing.cubin: pipelink.Function). The PipeLink layer reads its row total "
         f"back to the host once, so it is timed in its own round robin beside the torch layer (same rounds); the halves and "
         f"the torch layer also behind a spin. "
         f"All checks {'passed' if res['all_ok'] else '**did not pass**'}.\n",
         "PipeLink down = down_store (GEMM + TMA store of the expert rows) + moe_topk_sum; the scatter-add down (GEMM + "
         "moe_combine's fp32 reductions into Y) is shown beside it.\n",
         "| tokens | PipeLink gate/up ms | torch gate/up ms | ratio | PipeLink down ms | (GEMM + store / sum) | scatter-add down ms | "
         "torch down ms | ratio | PipeLink layer ms | torch layer ms (spin) | torch layer ms (same rounds) | layer ratio | "
         "PipeLink layer, CUDA graph (no host read) ms | PipeLink layer, 64-row tiles, CUDA graph ms | torch layer, CUDA graph ms | "
         "graph layer / torch layer (same rounds) | graph / torch graph | SM MHz |",
         "|---:|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["results"]:
        e, c = r["entries"], r["claims"]
        m = lambda n: B.fmt_ms(e[n]["ms"])  # noqa: E731
        L.append(f"| {r['T']} | {m('pipelink gate/up')} | {m('torch gate/up (gather + grouped_mm + SwiGLU)')} | "
                 f"{B.fmt_ratio(c['pipelink gate/up / torch gate/up'])} | {m('pipelink down_store + top-k sum')} | "
                 f"{m('pipelink down_store (GEMM + row store)')} / {m('pipelink top-k sum')} | {m('pipelink down (+ combine, Y zeroed)')} | "
                 f"{m('torch down (grouped_mm + scale + index_add)')} | {B.fmt_ratio(c['pipelink down / torch down'])} | "
                 f"{m('pipelink layer (routing kernels, 1 host read)')} | {m('torch layer')} | {m('torch layer (same rounds)')} | "
                 f"{B.fmt_ratio(c['pipelink layer / torch layer (no spin, same rounds)'])} | "
                 f"{m('pipelink layer, CUDA graph (no host read)') if 'pipelink layer, CUDA graph (no host read)' in e else '-'} | "
                 f"{m('pipelink layer, 64-row tiles, CUDA graph (no host read)') if 'pipelink layer, 64-row tiles, CUDA graph (no host read)' in e else '-'} | "
                 f"{m('torch layer, CUDA graph') if 'torch layer, CUDA graph' in e else '- (' + (r.get('torch_graph_error') or 'not run') + ')'} | "
                 f"{B.fmt_ratio(c['pipelink graph layer / torch layer (same rounds)']) if 'pipelink graph layer / torch layer (same rounds)' in c else '-'} | "
                 f"{B.fmt_ratio(c['pipelink graph layer / torch graph layer']) if 'pipelink graph layer / torch graph layer' in c else '-'} | "
                 f"{r['clocks_before'].get('sm_mhz')}→{r['clocks_after'].get('sm_mhz')} |")
    best = []
    for r in res["results"]:
        e, c = r["entries"], r["claims"]
        for name in sorted(r.get("check_best_layer") or {}):
            base = "pipelink layer, 64-row tiles, CUDA graph (no host read)" if name.startswith("64") else \
                "pipelink layer, CUDA graph (no host read)"
            tg = "torch layer, CUDA graph"
            mark = " (the rule's)" if (r.get("best_layer_rule") or {}).get("choice") == name else ""
            best.append(f"| {r['T']} | {name}{mark} | {B.fmt_ms(e[f'pipelink best layer, CUDA graph, {name}']['ms'])} | {B.fmt_ms(e[base]['ms'])} | "
                        f"{B.fmt_ratio(c[f'best layer, {name} / the graph layer of its tile height'])} | "
                        + (f"{B.fmt_ms(e[tg]['ms'])} | {B.fmt_ratio(c[f'best layer, {name} / torch graph layer'])} |" if tg in e else "- | - |"))
    if best:
        L.append("\n## The best layer (routing counters 128 B apart and zeroed by the offsets kernel, which writes the padding rows; "
                 "row_major gate/up; down_store; the top-k sum writing bf16 Y), one CUDA graph. The rule, fixed before the run: 64-row "
                 "tiles where T * 8 / 128 < 128 routed rows per expert, else 128-row, both with the acc panels\n")
        L.append("| tokens | tiles | best layer ms | graph layer of that tile height ms | ratio | torch layer, CUDA graph ms | ratio |\n"
                 "|---:|---|---|---|---|---|---|")
        L += best
    rows = []
    for r in res["results"]:
        e, c = r["entries"], r["claims"]
        for name in sorted(r.get("check_gate_up_orders") or {}):
            lay, ker = f"pipelink layer, CUDA graph, gate/up {name}", f"pipelink gate_up_dev ({name})"
            base = "pipelink layer, 64-row tiles, CUDA graph (no host read)" if name.endswith("64-row tiles") else \
                "pipelink layer, CUDA graph (no host read)"
            rows.append(f"| {r['T']} | {name} | {B.fmt_ms(e[lay]['ms'])} | {B.fmt_ms(e[base]['ms'])} | "
                        f"{B.fmt_ratio(c[f'graph layer, gate/up {name} / col_major'])} | "
                        + (f"{B.fmt_ms(e[ker]['ms'])} | {B.fmt_ms(e['pipelink gate_up_dev']['ms'])} | "
                           f"{B.fmt_ratio(c[f'gate_up_dev {name} / col_major'])} |" if ker in e else "- | - | - |"))
    if rows:
        L.append("\n## The gate/up kernel relinked in other tile orders (the same objects; `--tile-order`)\n")
        L.append("| tokens | gate/up order, tile height | layer, CUDA graph ms | the same layer, col_major gate/up ms | ratio | "
                 "gate/up kernel alone ms | col_major kernel ms | ratio |\n|---:|---|---|---|---|---|---|---|")
        L += rows
    L.append("\n## Checks (per element, |err| <= rms(ref)/16 + 2^-6 |ref| against an fp32 reference of the same routing; PipeLink vs torch with rtol 2^-5)\n")
    L.append("| tokens | output | over tol | worst err/tol | rel L2 | ok |\n|---:|---|---:|---:|---:|---|")
    for r in res["results"]:
        for n, k in (("PipeLink Y", "check_pipelink"), ("PipeLink Y, scatter-add down", "check_pipelink_scatter_add"),
                     ("PipeLink Y, no host read (eager and graph)", "check_pipelink_no_host_read"),
                     ("PipeLink Y, 64-row tiles, no host read (eager and graph)", "check_pipelink_64_row_no_host_read"), ("torch", "check_torch"),
                     ("PipeLink vs torch", "check_pipelink_vs_torch")) + tuple(
                         (f"PipeLink Y, gate/up {o} (eager and graph; bit-equal to col_major: "
                          f"{r['check_gate_up_orders'][o]['bit_equal_to_col_major_layer']} / "
                          f"{r['check_gate_up_orders'][o]['graph_bit_equal_to_col_major_layer']})", ("check_gate_up_orders", o))
                         for o in sorted(r.get("check_gate_up_orders") or {})) + tuple(
                         (f"PipeLink Y (bf16), best layer, {o} (eager and graph; bit-equal to {best_bit_equal(r['check_best_layer'][o])[0]}: "
                          f"{r['check_best_layer'][o][best_bit_equal(r['check_best_layer'][o])[1]]} / "
                          f"{r['check_best_layer'][o]['graph_' + best_bit_equal(r['check_best_layer'][o])[1]]})", ("check_best_layer", o))
                         for o in sorted(r.get("check_best_layer") or {})):
            c = r[k[0]][k[1]] if isinstance(k, tuple) else r.get(k)
            if c is None:
                continue
            L.append(f"| {r['T']} | {n} | {c['over_tolerance']} | {c['worst_err_over_tol']:.3f} | {c['rel_l2']:.2e} | "
                     f"{'OK' if c['ok'] else '**FAIL**'} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    sys.exit(main())
