#!/usr/bin/env python3
"""One decode step of Llama-3.2-1B on torch tensors, with each layer's attention a PipeLink-linked
kernel (issue 8), and the checks against a PyTorch reference.

Model: 16 layers, hidden 2048, 32 query heads, 8 KV heads, head_dim 64, SwiGLU 8192, vocabulary
128256 with tied embeddings, RMSNorm eps 1e-5, RoPE theta 500000 (rotate-half form). Llama-3's
RoPE frequency scaling (factor 32, low/high frequency bands) is LEFT OUT: it only changes the
inverse frequencies, not any kernel. Weights are random bf16 from a seeded generator; nothing is
downloaded.

What is linked: the attention (kv_loader + attn_core_a | attn_core_split + attn_writer, one
launch per layer). In `Llama1B.step` everything else (embedding, RMSNorm, QKV / O projections,
RoPE, the KV-cache append, SwiGLU MLP, lm_head) is PyTorch (cuBLAS GEMMs); both the PipeLink step
and the reference step run that same PyTorch code outside the attention, so any difference in
their logits comes from the attention. `LinkedStep.step` replaces the rest as well: plain kernels
(rest/rest_kernels.cu: RMSNorm with the residual add, RoPE + KV-cache append, SiLU * up) and
qwen_mlp's linked fused_small (gate/up + SwiGLU) and gemm_small (lm_head) kernels; QKV, O and down
stay cuBLAS. The bench captures each step in one CUDA graph.

Context convention: at context C the cache holds C - 1 earlier tokens, the new token's K and V
are appended at position C - 1, and attention covers L = C keys.

    PYTHONPATH=build/python python3 examples/llama_decode/decode.py --kernels build/examples/llama_decode
exits 77 ("skipped: no GPU") without a GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

LAYERS, HIDDEN, QH, KVH, HD, FFN, VOCAB = 16, 2048, 32, 8, 64, 8192, 128256
EPS, THETA = 1e-5, 500000.0
KV_TILE = 64


def _torch():
    import torch  # noqa: PLC0415
    return torch


# ---- the model (PyTorch parts) -------------------------------------------------------------------


class Llama1B:
    """Random seeded bf16 weights of Llama-3.2-1B's shapes. `step` runs one decode step with an
    attention function `attn(layer, q [B, 32, 64] bf16 contiguous, L) -> [B, 2048] bf16`."""

    def __init__(self, seed: int = 1234, device: str = "cuda", max_pos: int = 8192 + 64) -> None:
        torch = _torch()
        g = torch.Generator(device=device)
        g.manual_seed(seed)
        bf = torch.bfloat16

        def rnd(*shape, std):
            return (torch.randn(*shape, generator=g, device=device, dtype=torch.float32) * std).to(bf)

        self.embed = rnd(VOCAB, HIDDEN, std=0.02)  # tied: also lm_head
        self.wqkv = [rnd(QH * HD + 2 * KVH * HD, HIDDEN, std=0.03) for _ in range(LAYERS)]
        self.wo = [rnd(HIDDEN, QH * HD, std=0.02) for _ in range(LAYERS)]
        self.wgu = [rnd(2 * FFN, HIDDEN, std=0.02) for _ in range(LAYERS)]  # [gate; up]
        self.wd = [rnd(HIDDEN, FFN, std=0.02) for _ in range(LAYERS)]
        self.ln1 = [(1.0 + rnd(HIDDEN, std=0.1).float()).to(bf) for _ in range(LAYERS)]
        self.ln2 = [(1.0 + rnd(HIDDEN, std=0.1).float()).to(bf) for _ in range(LAYERS)]
        self.lnf = (1.0 + rnd(HIDDEN, std=0.1).float()).to(bf)
        inv_freq = 1.0 / (THETA ** (torch.arange(0, HD, 2, device=device, dtype=torch.float32) / HD))
        freqs = torch.arange(max_pos, device=device, dtype=torch.float32)[:, None] * inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()  # [max_pos, 64] fp32

    def weight_bytes(self) -> int:
        n = self.embed.numel() + self.lnf.numel()
        for ws in (self.wqkv, self.wo, self.wgu, self.wd, self.ln1, self.ln2):
            n += sum(w.numel() for w in ws)
        return 2 * n

    # fused_norm: RMSNorm as torch.nn.functional.rms_norm (one op) instead of the Hugging Face
    # Llama formula below (x in fp32, scaled, rounded to bf16, then times w): a second torch
    # baseline (bench.py's "torch_rmsnorm"), not the reference of the checks.
    fused_norm = False

    def rmsnorm(self, x, w):
        torch = _torch()
        if self.fused_norm:
            return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w

    def rope(self, x, pos: int):
        torch = _torch()
        xf = x.float()
        half = xf.shape[-1] // 2
        rot = torch.cat([-xf[..., half:], xf[..., :half]], dim=-1)
        return (xf * self.cos[pos] + rot * self.sin[pos]).to(x.dtype)

    def step(self, tok, pos: int, cache, attn):
        """tok [B] int64, cache = (K, V) each [LAYERS, B, 8, max_ctx, 64] bf16; appends at `pos`,
        attends over L = pos + 1 keys. Returns logits [B, VOCAB] bf16."""
        torch = _torch()
        F = torch.nn.functional
        K, V = cache
        B = tok.shape[0]
        x = self.embed[tok]
        for l in range(LAYERS):
            h = self.rmsnorm(x, self.ln1[l])
            qkv = h @ self.wqkv[l].t()
            q = self.rope(qkv[:, : QH * HD].view(B, QH, HD), pos).contiguous()
            k = self.rope(qkv[:, QH * HD: QH * HD + KVH * HD].view(B, KVH, HD), pos)
            v = qkv[:, QH * HD + KVH * HD:].view(B, KVH, HD)
            K[l, :, :, pos] = k
            V[l, :, :, pos] = v
            o = attn(l, q, pos + 1)
            x = x + o @ self.wo[l].t()
            h = self.rmsnorm(x, self.ln2[l])
            gu = h @ self.wgu[l].t()
            x = x + (F.silu(gu[:, :FFN]) * gu[:, FFN:]) @ self.wd[l].t()
        x = self.rmsnorm(x, self.lnf)
        return x @ self.embed.t()


def alloc_cache(B: int, max_ctx: int, fill_std: float = 1.0, seed: int = 7):
    """K and V caches [LAYERS, B, 8, max_ctx, 64] bf16, filled with N(0, fill_std) (the earlier
    tokens' keys and values of a benchmark point)."""
    torch = _torch()
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    shape = (LAYERS, B, KVH, max_ctx, HD)
    K = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
    V = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
    for t in (K, V):
        for l in range(LAYERS):
            t[l].copy_(torch.randn(shape[1:], generator=g, device="cuda") * fill_std)
    return K, V


class TorchAttention:
    """The reference: SDPA with enable_gqa over the cache's first L keys."""

    def __init__(self, cache) -> None:
        self.K, self.V = cache

    def __call__(self, l: int, q, L: int):
        torch = _torch()
        B = q.shape[0]
        o = torch.nn.functional.scaled_dot_product_attention(
            q.view(B, QH, 1, HD), self.K[l, :, :, :L], self.V[l, :, :, :L], enable_gqa=True)
        return o.reshape(B, QH * HD)


def kv_swizzle(selection) -> str:
    """The swizzle of the "kv" pipe's tensors as every variant's map states it ("none" or "128B"):
    the host's K / V tensor maps must match it, so all variants must agree."""
    import re  # noqa: PLC0415
    found = set()
    for name in selection.variants:
        with open(selection.kernel(name).map_path) as f:
            m = re.search(r"tensor k bf16\[\d+x\d+\] row/(\S+)", f.read())
        found.add(m.group(1) if m else "?")
    if len(found) != 1 or "?" in found:
        raise ValueError(f"the variants' kv tensors disagree on the swizzle: {found}")
    return found.pop()


class Fp32Attention:
    """A second reference for the noise scale: the attention in fp32 (scores, softmax and P V from
    the bf16 cache upcast), rounded to bf16 once. Two correct attentions differ by rounding only;
    how far apart the step's logits land then is the scale PipeLink's difference is judged by."""

    def __init__(self, cache) -> None:
        self.K, self.V = cache

    def __call__(self, l: int, q, L: int):
        torch = _torch()
        B = q.shape[0]
        qf = q.float().view(B, KVH, QH // KVH, HD)
        k = self.K[l, :, :, :L].float()
        v = self.V[l, :, :, :L].float()
        p = torch.softmax(torch.einsum("bgqd,bgld->bgql", qf, k) / math.sqrt(HD), dim=-1)
        return torch.einsum("bgql,bgld->bgqd", p, v).reshape(B, QH * HD).to(torch.bfloat16)


class PipeLinkAttention:
    """Each layer's attention through the linked kernels of a pipelink.Selection. mode: "a" or
    "b" (that variant at every shape, with its own launch parameters) or "selected" (the table's
    rule picks per (B, L))."""

    def __init__(self, selection, cache, mode: str = "selected", sms: int = 0, l_new=1) -> None:
        import pipelink  # noqa: PLC0415
        torch = _torch()
        self.sel, self.mode = selection, mode
        self.K, self.V = cache
        _, self.B, _, self.max_ctx, _ = self.K.shape
        self.sms = sms or torch.cuda.get_device_properties(0).multi_processor_count
        rows = self.B * KVH * self.max_ctx
        sw = kv_swizzle(selection)
        self.maps = [(pipelink.tensor_map(self.K[l].view(rows, HD), box=(KV_TILE, HD), swizzle=sw),
                      pipelink.tensor_map(self.V[l].view(rows, HD), box=(KV_TILE, HD), swizzle=sw))
                     for l in range(self.K.shape[0])]
        self.out = torch.empty(self.B, QH * HD, device="cuda", dtype=torch.bfloat16)
        self.cnt = torch.zeros(self.B * KVH, device="cuda", dtype=torch.int32)
        self.s_max = 64
        self.ws = torch.empty(self.B * KVH * self.s_max * 4 * (HD + 2), device="cuda", dtype=torch.float32)
        self.last = None  # (variant, S) of the last launch
        # variants whose writer applies the O projection (attn_o_writer: the kernel takes wo_map):
        # ready / done flags per (sequence, KV head), zero between launches
        self.ready = torch.zeros(self.B * KVH, device="cuda", dtype=torch.int32)
        self.done = torch.zeros(self.B * KVH, device="cuda", dtype=torch.int32)
        self._wo_maps = {}  # (W_o address, o_rows) -> its tensor map
        # l_new: the keys at the context's end that the kernels before the attention write (1: the
        # new token's append), passed as the loader's L_new; with --pdl the loader reads the other
        # key tiles before its dependency wait. None passes L_new = L: every tile after the wait
        # (for comparisons). A smaller value than the truth is wrong (a negative control only).
        self.l_new = l_new

    def choice(self, L: int):
        shape = dict(B=self.B, L=L, kv_heads=KVH, sms=self.sms)
        if self.mode == "selected":
            return self.sel.choose(**shape)
        return self.mode, self.sel.params(self.mode, **shape)

    def __call__(self, l: int, q, L: int, o_into=None):
        """Launches layer l's attention; returns its output [B, 2048] (bf16). o_into = (W_o [2048,
        2048] bf16, f32 accumulator y [B, 2048]): where the chosen variant's writer applies the O
        projection (select_o_pdl.json's "bo"), it adds o W_o^T into y and this returns None; a
        call without o_into gets "b" in its place (the same core and S)."""
        name, params = self.choice(L)
        k = self.sel.kernel(name)
        fuses_o = "wo_map" in k.params
        if fuses_o and o_into is None:
            name = "b"
            params = self.sel.params(name, B=self.B, L=L, kv_heads=KVH, sms=self.sms)
            k = self.sel.kernel(name)
            fuses_o = False
        S = params["S"]
        if not 1 <= S <= self.s_max:
            raise ValueError(f"S = {S} outside 1..{self.s_max}")
        args = dict(k_map=self.maps[l][0], v_map=self.maps[l][1], q=q, attn_out=self.out, L=L, kv_stride=self.max_ctx,
                    L_new=L if self.l_new is None else self.l_new,
                    S=S, BH=self.B * KVH, ws=self.ws, cnt=self.cnt)
        if fuses_o:
            # its blocks wait for each other: the grid must be resident at once, one block per SM
            # (the device's SM count, not self.sms, which a caller may set for the rule)
            import pipelink  # noqa: PLC0415
            torch = _torch()
            sms = torch.cuda.get_device_properties(q.device).multi_processor_count
            if self.B * KVH * S > sms:
                raise ValueError(f"attention {name}: {self.B * KVH * S} blocks > {sms} SMs")
            wo, y = o_into
            key = (wo.data_ptr(), k.fact("o_rows"))  # the TMA box must be the writer's o_rows x 256
            if key not in self._wo_maps:
                self._wo_maps[key] = pipelink.tensor_map(wo, box=(k.fact("o_rows"), 256), swizzle="none", l2_promotion="256B")
            args.update(wo_map=self._wo_maps[key], y=y, hidden=HIDDEN, kv_heads=KVH, ready=self.ready, done=self.done)
        k.launch(self.B * KVH * S, **{n: v for n, v in args.items() if n in k.params})
        self.last = (name, S)
        return None if fuses_o else self.out


# ---- the rest of the step as linked and plain kernels --------------------------------------------


class _DriverFunction:
    """A plain kernel from a cubin through the CUDA driver (ctypes), used when the pipelink module
    has no pipelink.Function (that class is on the `bench` branch). Same call shape:
    launch(grid, block, *args) on torch's current stream; signature entries "ptr" / "u32"."""

    _lib = None

    def __init__(self, cubin: str, name: str, signature) -> None:
        import ctypes  # noqa: PLC0415
        torch = _torch()
        if _DriverFunction._lib is None:
            _DriverFunction._lib = ctypes.CDLL("libcuda.so.1")
        lib = self._lib
        torch.cuda.init()
        torch.empty(1, device="cuda")  # makes torch's (primary) context current on this thread
        ctx = ctypes.c_void_p()
        self._check(lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            self._check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), torch.cuda.current_device()), "cuDevicePrimaryCtxRetain")
            self._check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        with open(cubin, "rb") as f:
            self._image = f.read()
        self._mod, self._fn = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(lib.cuModuleLoadData(ctypes.byref(self._mod), self._image), f"cuModuleLoadData({cubin})")
        self._check(lib.cuModuleGetFunction(ctypes.byref(self._fn), self._mod, name.encode()), f"cuModuleGetFunction({name})")
        self.name, self.signature = name, list(signature)

    def _check(self, r: int, what: str) -> None:
        if r != 0:
            raise RuntimeError(f"{what}: CUresult {r}")

    def launch(self, grid: int, block: int, *args, smem_bytes: int = 0, pdl: bool = False) -> None:
        import ctypes  # noqa: PLC0415
        torch = _torch()
        if pdl:
            raise RuntimeError("programmatic dependent launch needs pipelink.Function (launch(..., pdl=True))")
        if len(args) != len(self.signature):
            raise TypeError(f"{self.name}: {len(self.signature)} arguments expected, got {len(args)}")
        vals = []
        for ty, v in zip(self.signature, args):
            if ty == "ptr":
                vals.append(ctypes.c_uint64(v.data_ptr() if hasattr(v, "data_ptr") else int(v)))
            elif ty == "u32":
                if not 0 <= int(v) < (1 << 32):
                    raise ValueError(f"{self.name}: u32 argument {v} out of range")
                vals.append(ctypes.c_uint32(int(v)))
            else:
                raise ValueError(f"{self.name}: argument type {ty}")
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in vals])
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self._check(self._lib.cuLaunchKernel(self._fn, ctypes.c_uint(grid), 1, 1, ctypes.c_uint(block), 1, 1,
                                             ctypes.c_uint(smem_bytes), st, ptrs, None), f"cuLaunchKernel({self.name})")


def plain_function(cubin: str, name: str, signature):
    import pipelink  # noqa: PLC0415
    if hasattr(pipelink, "Function"):
        return pipelink.Function(cubin, name, signature)
    return _DriverFunction(cubin, name, signature)


_KERNEL_CACHE = {}
_LINKED_CACHE = {}


def _linked(kdir: str, name: str):
    """The linked kernel kdir/name.cubin (with its map), loaded once per process: the step options
    that swap one kernel for another link (o_link, min_registers, qkv_stages, ...) share it."""
    import pipelink  # noqa: PLC0415
    path = os.path.join(kdir, name)
    if path not in _LINKED_CACHE:
        _LINKED_CACHE[path] = pipelink.Kernel(path + ".cubin", path + ".map")
    return _LINKED_CACHE[path]


def _kernels(kdir: str, pdl: bool = False, blocks_per_sm: int = 1, trigger_first: bool = False, early_trigger: bool = False):
    """The plain kernels (rest.cubin), the linked Qwen GEMM kernels (fused_small: gate/up +
    SwiGLU epilogue; fused_small64: the same in 64 x 64 tiles, its --pdl link's loader streaming
    W before its own dependency wait; gemm_small: the same loader, main loop and store, out=acc) and the linked
    split-K GEMMs (splitk: k_chunk 512, splitk_k1024: 1024; components/splitk), loaded once.
    pdl=True: their programmatic-dependent-launch builds (rest_pdl.cubin: the same kernels with
    griddepcontrol.wait first; fused_small_pdl / gemm_small_pdl: linked with --pdl).
    blocks_per_sm=2 (with pdl): the split-K GEMMs and the 64 x 64 gate/up linked with
    --blocks-per-sm 2 (splitk*_2pb_pdl, fused_small64_2pb_pdl) in place of sk512, sk1024 and
    fused64. trigger_first (with pdl): rest_pdl_tf.cubin, whose kernels let the next kernel launch
    before their own wait. early_trigger (with pdl): the linked kernels that have one, linked with
    --pdl-early-trigger too (*_pdl_et: fused64, gemm, sk512, sk1024, skrope; the others are absent)."""
    import pipelink  # noqa: PLC0415
    if (blocks_per_sm != 1 or trigger_first or early_trigger) and not pdl:
        raise ValueError("blocks_per_sm = 2, trigger_first and early_trigger need pdl = True")
    if early_trigger and blocks_per_sm != 1:
        raise ValueError("early_trigger: the build links no --blocks-per-sm 2 kernel with --pdl-early-trigger")
    if blocks_per_sm not in (1, 2):
        raise ValueError(f"blocks_per_sm = {blocks_per_sm}: the build links 1 or 2")
    key = (kdir, pdl, blocks_per_sm, trigger_first, early_trigger)
    if key not in _KERNEL_CACHE and early_trigger:
        base = _kernels(kdir, pdl, 1, trigger_first)

        def et(name: str):
            return pipelink.Kernel(os.path.join(kdir, f"{name}_pdl_et.cubin"), os.path.join(kdir, f"{name}_pdl_et.map"))
        _KERNEL_CACHE[key] = dict({k: v for k, v in base.items() if k in ("norm", "rope", "norm32", "rope32", "silu")},
                                  fused64=et("fused_small64"), gemm=et("gemm_small"), sk512=et("splitk"),
                                  sk1024=et("splitk_k1024"), skrope=et("splitk_rope"))
    if key not in _KERNEL_CACHE:
        sfx = "_pdl" if pdl else ""
        two = "_2pb" if blocks_per_sm == 2 else ""
        rest = os.path.join(kdir, f"rest{sfx}{'_tf' if trigger_first else ''}.cubin")
        _KERNEL_CACHE[key] = dict(
            norm=plain_function(rest, "llama_add_rmsnorm", ["ptr", "ptr", "ptr", "ptr", "ptr", "ptr", "u32"]),
            rope=plain_function(rest, "llama_rope_append", ["ptr", "ptr", "ptr", "u32", "ptr", "ptr", "ptr", "u32"]),
            norm32=plain_function(rest, "llama_add_rmsnorm_f32", ["ptr", "ptr", "ptr", "ptr", "ptr", "ptr", "u32"]),
            rope32=plain_function(rest, "llama_rope_append_f32", ["ptr", "ptr", "ptr", "u32", "ptr", "ptr", "ptr", "u32"]),
            silu=plain_function(rest, "llama_silu_mul", ["ptr", "ptr", "u32"]),
            **{f"{n}_r{r}": plain_function(rest, f"llama_add_rmsnorm{sfx32}_r{r}", ["ptr"] * 6 + ["u32", "u32"])
               for r in (2, 4, 8) for n, sfx32 in (("norm", ""), ("norm32", "_f32"))},
            fused=pipelink.Kernel(os.path.join(kdir, f"fused_small{sfx}.cubin"), os.path.join(kdir, f"fused_small{sfx}.map")),
            fused64=pipelink.Kernel(os.path.join(kdir, f"fused_small64{two}{sfx}.cubin"), os.path.join(kdir, f"fused_small64{two}{sfx}.map")),
            gemm=pipelink.Kernel(os.path.join(kdir, f"gemm_small{sfx}.cubin"), os.path.join(kdir, f"gemm_small{sfx}.map")),
            sk512=pipelink.Kernel(os.path.join(kdir, f"splitk{two}{sfx}.cubin"), os.path.join(kdir, f"splitk{two}{sfx}.map")),
            sk1024=pipelink.Kernel(os.path.join(kdir, f"splitk_k1024{two}{sfx}.cubin"), os.path.join(kdir, f"splitk_k1024{two}{sfx}.map")),
            skrope=pipelink.Kernel(os.path.join(kdir, f"splitk_rope{sfx}.cubin"), os.path.join(kdir, f"splitk_rope{sfx}.map")),
            sk256=pipelink.Kernel(os.path.join(kdir, f"splitk_k256{sfx}.cubin"), os.path.join(kdir, f"splitk_k256{sfx}.map")),
            skrope256=pipelink.Kernel(os.path.join(kdir, f"splitk_rope_k256{sfx}.cubin"), os.path.join(kdir, f"splitk_rope_k256{sfx}.map")),
            mlp=pipelink.Kernel(os.path.join(kdir, f"mlp{sfx}.cubin"), os.path.join(kdir, f"mlp{sfx}.map")))
        if pdl:  # the fused MLP with other ring depths (mlp_loader_g6d5.toml, mlp_loader_g8d2.toml)
            for v in ("g6d5", "g8d2"):
                _KERNEL_CACHE[key]["mlp_" + v] = pipelink.Kernel(os.path.join(kdir, f"mlp_{v}_pdl.cubin"), os.path.join(kdir, f"mlp_{v}_pdl.map"))
        for n in ("fused", "fused64", "gemm", "sk512", "sk1024", "skrope", "sk256", "skrope256", "mlp"):
            if getattr(_KERNEL_CACHE[key][n], "pdl", False) != pdl:
                raise ValueError(f"{n}: the cubin's manifest says pdl={not pdl}, wanted pdl={pdl}")
    return _KERNEL_CACHE[key]


def selection(kdir: str, pdl: bool = False, table: str = "select"):
    """The attention variants' selection table: select.json, or select_pdl.json (the same rules,
    the variants linked with --pdl); table="select_revised": select_revised(_pdl).json."""
    import pipelink  # noqa: PLC0415
    sel = pipelink.Selection(os.path.join(kdir, f"{table}_pdl.json" if pdl else f"{table}.json"))
    for name in sel.variants:
        if getattr(sel.kernel(name), "pdl", False) != pdl:
            raise ValueError(f"attention variant {name}: the cubin's manifest says pdl={not pdl}, wanted pdl={pdl}")
    return sel


class LinkedStep:
    """The decode step with the rest of the step replaced (issue 8): per layer
       add_rmsnorm (plain; the residual add of the previous layer's down projection, and the
                    embedding gather at layer 0, folded in)
       QKV GEMM (cuBLAS, torch.mm into a fixed buffer)
       rope_append (plain: RoPE of q and k, k and v written to the cache)
       attention (PipeLink, the given attention object)
       O GEMM (cuBLAS)
       add_rmsnorm (plain; the residual add of the O projection folded in)
       gate/up GEMM + SwiGLU: the linked `fused_small` kernel (gemms="linked"; "linked64": its 64 x 64
                    tile variant `fused_small64`), or cuBLAS + the plain silu_mul kernel (gemms="cublas")
       down GEMM (cuBLAS)
    then add_rmsnorm (final norm) and the lm_head: the linked `gemm_small` kernel or cuBLAS.
    8 kernels per layer instead of about 40. pdl=True: programmatic dependent launch for every
    kernel that is not cuBLAS (the plain kernels from rest_pdl.cubin launched with pdl=True, the
    linked Qwen kernels linked with --pdl; give it an attention from selection(kdir, pdl=True)):
    each may start while its predecessor ends and waits (griddepcontrol.wait) before touching
    memory. The cuBLAS GEMMs are launched as before (a normal dependency).
    proj="linked": the QKV, O and down GEMMs are the linked split-K GEMM (components/splitk:
    sk_loader + sk_mma + sk_red; k_chunk 512 for K = 2048, 1024 for the down projection's 8192)
    instead of cuBLAS. Each adds its f32 partial tiles into an f32 buffer (qkv32, d32) that the
    next kernel reads through the _f32 variants of rope_append / add_rmsnorm, which round each
    value to bf16 (what the bf16 cuBLAS output holds) and zero the buffer for the next GEMM. Those
    two buffers start at zero and are zero again after every step; poison() leaves them so.
    All buffers are fixed (allocated here), so the step can be captured in one CUDA graph.
    rope="fused" (proj="linked"): the QKV GEMM is the split-K GEMM linked with sk_rope in sk_red's
    place (splitk_rope): the last warp to add into a head's 64 columns applies RoPE, writes q and
    the cache rows and zeroes them, so no rope_append kernel runs (16 kernels fewer per step).
    early_trigger=True (pdl, gemms="linked64", proj="linked"): the linked GEMMs linked with
    --pdl-early-trigger (each lets the next kernel launch before its own wait; give it an attention
    from selection(kdir, pdl=True, table="select_et"), whose cubins are linked so too).
    qkv_k_chunk=256 (proj="linked"): the QKV GEMM in 256-column K chunks (384 tiles) instead of 512;
    1024 (pdl, rope="fused"): in 1024-column chunks (96 tiles, two arrivals per head).
    down_k_chunk=2048 (pdl, proj="linked", mlp="split"): the down GEMM in 2048-column chunks (128
    tiles, one wave, four partials per output) instead of 1024 (256 tiles)
    mlp="fused" (proj="linked"): the gate/up + SwiGLU and the down GEMM as one linked kernel
    (components/mlp: mlp_loader + mlp_mma; per 64 intermediate columns a block computes G | U,
    H = SwiGLU in registers, and adds H W_down^T into d32): 6 kernels per layer.
    blocks_per_sm=2 (pdl, proj="linked", gemms="linked64"): those GEMMs linked with --blocks-per-sm 2,
    so two blocks share an SM and the next GEMM's blocks stream their weights beside the current
    one's (see _kernels); with rope="fused" and a fused MLP that is the O projection alone (the
    QKV + RoPE and the MLP kernels stay at one block per SM), whose blocks then fit beside the
    attention's (114816 B and 128 registers a thread) and can stream W_o while it runs: measured
    level with the one-block step, within the noise (results/step_variants_o2pb.json). trigger_first: the plain kernels let their successor
    launch before their own wait (rest_pdl_tf.cubin). norm_rows=R (2, 4, 8): every norm with R rows
    per block (llama_add_rmsnorm*_rR), ceil(B / R) blocks instead of B; bit-identical output.
    min_registers=True (pdl): the split-K GEMMs (k_chunk 512, 1024 and 2048, QKV + RoPE), the 64 x 64
    gate/up and the fused MLP (g6d5) linked with --min-registers (*_mr_pdl: 88-136 registers a thread at entry instead of
    the whole register file), so the plain kernels' blocks fit on an SM beside theirs. qkv_stages=6
    or 8 (with min_registers): the QKV + RoPE GEMM with a 6- or 8-stage ring (112 / 144 KB), so an
    attention block fits beside one of its blocks."""

    def __init__(self, model, kdir: str, B: int, cache, gemms: str = "linked", pdl: bool = False,
                 proj: str = "cublas", blocks_per_sm: int = 1, trigger_first: bool = False, rope: str = "kernel",
                 qkv_k_chunk: int = 512, early_trigger: bool = False, mlp: str = "split", o_blocks_per_sm: int = 1,
                 norm_rows: int = 1, down_k_chunk: int = 1024, min_registers: bool = False, qkv_stages: int = 12,
                 o_link: str = "", o_in_attention: bool = False, l2_prefetch: str = "") -> None:
        import pipelink  # noqa: PLC0415
        torch = _torch()
        if gemms not in ("linked", "linked64", "cublas"):
            raise ValueError(f"gemms = {gemms!r}")
        if proj not in ("linked", "cublas"):
            raise ValueError(f"proj = {proj!r}")
        self.m, self.B, self.gemms, self.pdl, self.proj = model, B, gemms, pdl, proj
        self.K, self.V = cache
        # o_in_attention=True (pdl, proj="linked"): the step hands the attention W_o and the f32
        # accumulator; where its selection table picks a variant with the O projection in its
        # writer (select_o_pdl.json's bo: attn_o_writer), the attention adds o W_o^T into the
        # accumulator itself and the step launches no O GEMM for that layer.
        if o_in_attention and (not pdl or proj != "linked"):
            raise ValueError("o_in_attention: the attention adds into the split-K f32 accumulator; give pdl=True, proj='linked'")
        self.o_in_attention = o_in_attention
        # (the attention builds W_o's tensor maps, with its writer's box, from model.wo)
        self.max_ctx = self.K.shape[3]
        if rope not in ("kernel", "fused"):
            raise ValueError(f"rope = {rope!r}")
        if rope == "fused" and proj != "linked":
            raise ValueError("rope = 'fused' is the split-K QKV GEMM's reduction: give proj='linked'")
        self.rope = rope
        # linked with --min-registers only: the small rings (session 7) and fused_u (session 8: one
        # weight ring for both phases, X once per kernel; batches of at most 8 rows)
        small_rings = ("fused_g3d2", "fused_g2d4", "fused_g4d3", "fused_u")
        if mlp not in ("split", "fused", "fused_g6d5", "fused_g8d2") + small_rings or (mlp in small_rings and not min_registers):
            raise ValueError(f"mlp = {mlp!r}" + (": the build links it with --min-registers only" if mlp in small_rings else ""))
        if mlp == "fused_u" and B > 8:
            raise ValueError("mlp = 'fused_u' holds 8 rows of X per K step: B <= 8")
        if mlp != "split" and (proj != "linked" or early_trigger or (mlp != "fused" and not pdl)):
            raise ValueError("mlp = 'fused' writes the split-K f32 output: give proj='linked' (no early_trigger)")
        self.mlp = mlp
        if qkv_k_chunk not in (256, 512, 1024) or (qkv_k_chunk == 1024 and (not pdl or rope != "fused")):
            raise ValueError(f"qkv_k_chunk = {qkv_k_chunk}: the build links 256 and 512, and 1024 for the --pdl QKV + RoPE GEMM")
        if down_k_chunk not in (1024, 2048) or (down_k_chunk == 2048 and (not pdl or proj != "linked" or mlp != "split")):
            raise ValueError(f"down_k_chunk = {down_k_chunk}: the build links 1024, and 2048 for the --pdl split-K down GEMM")
        if blocks_per_sm == 2 and (proj != "linked" or gemms != "linked64"):
            raise ValueError("blocks_per_sm = 2 links the split-K GEMMs and the 64 x 64 gate/up: give proj='linked', gemms='linked64'")
        if early_trigger and (gemms != "linked64" or proj != "linked" or qkv_k_chunk != 512):
            raise ValueError("early_trigger: the build links gemms='linked64', proj='linked', qkv_k_chunk=512 with --pdl-early-trigger")
        self.k = _kernels(kdir, pdl, blocks_per_sm, trigger_first, early_trigger)
        # norm_rows=R: the norms with R rows per block (llama_add_rmsnorm*_rR), ceil(B / R) blocks
        if norm_rows not in (1, 2, 4, 8):
            raise ValueError(f"norm_rows = {norm_rows}: rest_kernels.cu has 1, 2, 4 and 8")
        self.norm_rows = norm_rows
        # o_blocks_per_sm=2 (pdl, proj="linked"): only the O projection linked with --blocks-per-sm 2
        # (splitk_2pb_pdl), so its blocks fit beside the attention's and stream W_o while it runs
        if o_blocks_per_sm not in (1, 2) or (o_blocks_per_sm == 2 and (not pdl or proj != "linked")):
            raise ValueError("o_blocks_per_sm = 2 is the --pdl split-K O GEMM at two blocks per SM: give pdl=True, proj='linked'")
        swap = {}  # kernel key -> the link that replaces it
        if o_blocks_per_sm == 2 or o_link:  # o_link: another link of the O GEMM by name (e.g. splitk_s4_2pb_mr_pdl)
            swap["sk512_o"] = o_link or "splitk_2pb_pdl"
        if min_registers:  # the fast step's split-K GEMMs, 64 x 64 gate/up and fused MLP linked with --min-registers
            if not pdl or early_trigger or blocks_per_sm != 1 or qkv_k_chunk == 1024 or mlp not in ("split", "fused_g6d5") + small_rings:
                raise ValueError("min_registers: the build links the --pdl split-K GEMMs (k_chunk 256 with RoPE, 512, 1024), the "
                                 "64 x 64 gate/up and the fused MLP 'fused_g6d5' (and the small-ring ones) so")
            swap.update(sk512="splitk_mr_pdl", sk1024="splitk_k1024_mr_pdl", fused64="fused_small64_mr_pdl")
            if rope == "fused":
                swap["skrope256" if qkv_k_chunk == 256 else "skrope"] = ("splitk_rope_k256_mr_pdl" if qkv_k_chunk == 256
                                                                         else "splitk_rope_mr_pdl")
            if mlp != "split":
                swap["mlp_" + mlp[6:]] = f"mlp_{mlp[6:]}_mr_pdl"
        self.min_registers = min_registers
        # l2_prefetch: "+"-separated regions that loaders ask the L2 for once their last load is
        # issued (components/l2_prefetch.cuh; links splitk_rope_pf_mr_pdl, mlp_g6d5_pf_mr_pdl):
        #   qkv, o: the fused MLP of layer l prefetches layer l + 1's W_qkv, W_o;
        #   kv:     the QKV + RoPE GEMM of layer l prefetches layer l's K and V caches (each up to 32 MB).
        pf = set(filter(None, l2_prefetch.split("+")))
        if pf - {"qkv", "o", "kv"}:
            raise ValueError(f"l2_prefetch = {l2_prefetch!r}: '+'-separated qkv, o, kv")
        if pf and (not min_registers or mlp != "fused_g6d5" or rope != "fused" or qkv_k_chunk != 512 or qkv_stages != 12):
            raise ValueError("l2_prefetch: the build links the fused MLP 'fused_g6d5' and the QKV + RoPE GEMM (k_chunk 512, 12 "
                             "stages) with --min-registers and the prefetching loaders")
        self.l2_prefetch = pf
        if pf & {"qkv", "o"}:
            swap["mlp_g6d5"] = "mlp_g6d5_pf_mr_pdl"
        if "kv" in pf:
            swap["skrope"] = "splitk_rope_pf_mr_pdl"
        if qkv_stages != 12:  # splitk_rope_s{6,8}_mr_pdl: room for an attention block beside a QKV block
            if qkv_stages not in (6, 8) or not min_registers or qkv_k_chunk != 512 or rope != "fused":
                raise ValueError(f"qkv_stages = {qkv_stages}: the build links 6 and 8 for the QKV + RoPE GEMM with min_registers")
            swap["skrope"] = f"splitk_rope_s{qkv_stages}_mr_pdl"
        if qkv_k_chunk == 1024:  # splitk_rope_k1024_pdl: the QKV + RoPE GEMM in 1024-column chunks
            swap["skrope1024"] = "splitk_rope_k1024_pdl"
        if down_k_chunk == 2048:  # splitk_k2048_pdl (or _mr_pdl): the down GEMM in 2048-column chunks
            swap["sk2048"] = f"splitk_k2048{'_mr' if min_registers else ''}_pdl"
        self.k = dict(self.k, **{key: _linked(kdir, name) for key, name in swap.items()})
        e = dict(device="cuda", dtype=torch.bfloat16)
        self.x = torch.empty(B, HIDDEN, **e)
        self.h = torch.empty(B, HIDDEN, **e)
        self.qkv = torch.empty(B, QH * HD + 2 * KVH * HD, **e)
        self.q = torch.empty(B, QH, HD, **e)
        self.d = torch.empty(B, HIDDEN, **e)
        self.H = torch.empty(B, FFN, **e)
        self.gu = torch.empty(B, 2 * FFN, **e) if gemms == "cublas" else None
        self.fused = self.k["fused64"] if gemms == "linked64" else self.k.get("fused")
        gemms = "linked" if gemms == "linked64" else gemms
        self.gemms = gemms
        self.logits = torch.empty(B, VOCAB, **e)
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count
        if gemms == "linked":
            f, g = self.fused, self.k["gemm"]
            tm, tn, tk = f.fact("tile_m"), f.fact("tile_n"), f.fact("tile_k")
            self.f_grid = min(self.sms, -(-B // tm) * -(-FFN // tn))
            self.f_common = dict(x_map=pipelink.tensor_map(self.h, box=(tm, tk), swizzle="128B", l2_promotion="256B"),
                                 out_map=pipelink.tensor_map(self.H, box=(64, tn), swizzle="none", l2_promotion="none"),
                                 K=HIDDEN, M=B, N=FFN, n_step=tn, b_stride=FFN)
            self.f_w = [pipelink.tensor_map(w, box=(tn, tk), swizzle="128B", l2_promotion="256B") for w in model.wgu]
            gm, gn, gk = g.fact("tile_m"), g.fact("tile_n"), g.fact("tile_k")
            half = -(-VOCAB // 2)  # the tile sequence runs over N in tile_n steps; each tile covers 2 tile_n columns
            self.g_grid = min(self.sms, -(-B // gm) * -(-half // gn))
            self.g_params = dict(x_map=pipelink.tensor_map(self.h, box=(gm, gk), swizzle="128B", l2_promotion="256B"),
                                 w_map=pipelink.tensor_map(model.embed, box=(gn, gk), swizzle="128B", l2_promotion="256B"),
                                 out_map=pipelink.tensor_map(self.logits, box=(gm, 2 * gn), swizzle="none", l2_promotion="none"),
                                 K=HIDDEN, M=B, N=half, n_step=2 * gn, b_stride=gn)
        if proj == "linked":
            fp = dict(device="cuda", dtype=torch.float32)
            self.qkv32 = torch.zeros(B, QH * HD + 2 * KVH * HD, **fp)
            self.d32 = torch.zeros(B, HIDDEN, **fp)
            sk = self.k["sk512"]
            self.sk_tm, self.sk_tk = sk.fact("tile_m"), sk.fact("tile_k")
            if B > self.sk_tm:
                raise ValueError(f"the split-K GEMM takes at most {self.sk_tm} rows (tile_m), B = {B}")
            self._sk_x = {}
            qk = "256" if qkv_k_chunk == 256 else "512"  # (1024: only the QKV + RoPE GEMM, below)
            self.sk_qkv = [self._splitk("sk" + qk, self.h, w, self.qkv32) for w in model.wqkv]
            self.sk_o = [self._splitk("sk512_o" if o_blocks_per_sm == 2 else "sk512", None, w, self.d32) for w in model.wo]
            self.sk_down = [self._splitk("sk2048" if down_k_chunk == 2048 else "sk1024", self.H, w, self.d32) for w in model.wd]
            # rope="fused": the QKV GEMM linked with sk_rope (splitk_rope), whose reduction also
            # applies RoPE and appends k, v to the cache; its counters start at zero and end there
            self.mlp_kernel = "mlp" if mlp == "fused" else "mlp_" + mlp[6:]
            if mlp != "split":
                mk = self.k[self.mlp_kernel]
                self.mlp_grid = min(self.sms, FFN // mk.fact("tile_n"))
                x_rows = 8 if mlp == "fused_u" else mk.fact("tile_m")  # fused_u: X in blocks of 8 rows per K step
                if mlp == "fused_u" and mk.fact("x_rows") // 8 * mk.fact("tile_k") != HIDDEN:  # its X buffer is compiled in
                    raise ValueError(f"mlp = 'fused_u' holds X for K = {mk.fact('x_rows') // 8 * mk.fact('tile_k')}, not {HIDDEN}")
                self.mlp_common = dict(x_map=pipelink.tensor_map(self.h, box=(x_rows, mk.fact("tile_k")), swizzle="128B",
                                                                 l2_promotion="256B"),
                                       K=HIDDEN, b_stride=FFN, hidden=HIDDEN, M=B, N=FFN, y=self.d32)
                self.mlp_w = [dict(wgu_map=pipelink.tensor_map(wgu, box=(mk.fact("tile_n"), mk.fact("tile_k")), swizzle="128B",
                                                               l2_promotion="256B"),
                                   wd_map=pipelink.tensor_map(wd, box=(mk.fact("dn_n"), mk.fact("tile_k")), swizzle="128B",
                                                              l2_promotion="256B"))
                              for wgu, wd in zip(model.wgu, model.wd)]
                if pf & {"qkv", "o"}:  # layer l's MLP prefetches layer l + 1's W_qkv (pf0) and W_o (pf1)
                    for l, d in enumerate(self.mlp_w):
                        nxt = l + 1 < LAYERS
                        wq, wo = (model.wqkv[l + 1], model.wo[l + 1]) if nxt else (None, None)
                        d.update(pf0=wq if nxt and "qkv" in pf else 0, pf0_bytes=wq.numel() * 2 if nxt and "qkv" in pf else 0,
                                 pf1=wo if nxt and "o" in pf else 0, pf1_bytes=wo.numel() * 2 if nxt and "o" in pf else 0)
            self.rope_count = torch.zeros((QH + 2 * KVH) * HD // 64, device="cuda", dtype=torch.int32)
            self.sk_qkv_rope = []
            for l, w in enumerate(model.wqkv):
                kern, grid, params = self._splitk({256: "skrope256", 512: "skrope", 1024: "skrope1024"}[qkv_k_chunk], self.h, w, self.qkv32)
                params.update(count=self.rope_count, q_heads=QH, kv_heads=KVH, cos_t=model.cos, sin_t=model.sin,
                              q_out=self.q, k_cache=self.K[l], v_cache=self.V[l], max_ctx=self.max_ctx)
                if "kv" in pf:  # layer l's K and V caches, whole (max_ctx rows per head), where each is <= 32 MB
                    kvb = self.K[l].numel() * 2
                    small = kvb <= 32 << 20
                    params.update(pf0=self.K[l] if small else 0, pf0_bytes=kvb if small else 0,
                                  pf1=self.V[l] if small else 0, pf1_bytes=kvb if small else 0)
                self.sk_qkv_rope.append((kern, grid, params))

    def _xmap(self, x):
        """X's tensor map for the split-K GEMM (all of X's rows in one box of tile_m rows)."""
        import pipelink  # noqa: PLC0415
        key = (x.data_ptr(), tuple(x.shape))
        if key not in self._sk_x:
            self._sk_x[key] = pipelink.tensor_map(x, box=(self.sk_tm, self.sk_tk), swizzle="128B", l2_promotion="256B")
        return self._sk_x[key]

    def _splitk(self, which: str, x, w, y):
        """One split-K GEMM y (f32, += ) = x · w^T: its kernel, grid and parameters (x_map filled in
        at launch where x is None: the attention's output)."""
        import pipelink  # noqa: PLC0415
        kern = self.k[which]
        N, K = w.shape
        kc, tn = kern.fact("k_chunk"), kern.fact("tile_n")
        if K % kc or N % tn or y.shape != (self.B, N):
            raise ValueError(f"split-K GEMM {which}: K = {K}, N = {N}, y {tuple(y.shape)} (k_chunk {kc}, tile_n {tn})")
        params = dict(w_map=pipelink.tensor_map(w, box=(tn, self.sk_tk), swizzle="128B", l2_promotion="256B"),
                      K=K, N=N, M=self.B, y=y)
        if x is not None:
            params["x_map"] = self._xmap(x)
        return kern, min(self.sms, (K // kc) * (N // tn)), params

    def poison(self, pos=None) -> None:
        """NaN into every buffer the step writes; with pos, also the KV-cache row at pos of every
        layer (the new token's, which the step appends before its attention reads it): an attention
        that read that row before the QKV kernel wrote it, e.g. a loader requesting it before its
        dependency wait, then yields NaN logits."""
        for t in (self.x, self.h, self.qkv, self.q, self.d, self.H, self.logits):
            t.fill_(float("nan"))
        if pos is not None:
            self.K[:, :, :, pos].fill_(float("nan"))
            self.V[:, :, :, pos].fill_(float("nan"))
        if self.proj == "linked":  # split-K accumulators: they must hold zeros, and do after a step
            self.qkv32.zero_()
            self.d32.zero_()
            self.rope_count.zero_()

    def _sk(self, spec, x=None, **extra) -> None:
        kern, grid, params = spec
        if x is not None:
            params = dict(params, x_map=self._xmap(x))
        if extra:
            params = dict(params, **extra)
        kern.launch(grid, **params)

    # the kernel classes of a step, for step(skip=...)
    PARTS = ("norm", "qkv", "rope", "attn", "o", "gu", "down", "head")

    def step(self, tok, pos: int, attn, skip=()):
        """One decode step. skip: kernel classes (PARTS) left out, for timing what each costs on
        the step's critical path (bench/llama_decode/ablate.py); the logits are then wrong."""
        torch = _torch()
        m, k, B, pdl = self.m, self.k, self.B, self.pdl
        bad = set(skip) - set(self.PARTS)
        if bad:
            raise ValueError(f"skip: unknown parts {sorted(bad)}")
        run = lambda part: part not in skip  # noqa: E731
        lp = self.proj == "linked"
        d = self.d32 if lp else self.d
        def norm(key, delta, w, flags):
            if self.norm_rows == 1:
                k[key].launch(B, 256, self.x, delta, w, self.h, tok, m.embed, flags, pdl=pdl)
            else:
                R = self.norm_rows
                k[f"{key}_r{R}"].launch(-(-B // R), 256, self.x, delta, w, self.h, tok, m.embed, flags, B, pdl=pdl)
        nk = "norm32" if lp else "norm"
        if run("norm"):
            norm("norm", self.x, m.ln1[0], 2)
        for l in range(LAYERS):
            if l > 0 and run("norm"):
                norm(nk, d, m.ln1[l], 1)
            if lp and self.rope == "fused":
                if run("qkv"):
                    self._sk(self.sk_qkv_rope[l], pos=pos)
            elif lp:
                if run("qkv"):
                    self._sk(self.sk_qkv[l])
                if run("rope"):
                    k["rope32"].launch(B, 256, self.qkv32, m.cos, m.sin, pos, self.q, self.K[l], self.V[l], self.max_ctx, pdl=pdl)
            else:
                if run("qkv"):
                    torch.mm(self.h, m.wqkv[l].t(), out=self.qkv)
                if run("rope"):
                    k["rope"].launch(B, 256, self.qkv, m.cos, m.sin, pos, self.q, self.K[l], self.V[l], self.max_ctx, pdl=pdl)
            if not run("attn"):
                o = self.q.view(B, QH * HD)
            elif self.o_in_attention:
                o = attn(l, self.q, pos + 1, o_into=(self.m.wo[l], self.d32))  # None: O is done
            else:
                o = attn(l, self.q, pos + 1)
            if run("o") and o is not None:  # (with o_in_attention, skip=["o"] leaves the attention's own O in)
                if lp:
                    self._sk(self.sk_o[l], x=o)
                else:
                    torch.mm(o, m.wo[l].t(), out=self.d)
            if run("norm"):
                norm(nk, d, m.ln2[l], 1)
            if self.mlp != "split":
                if run("gu"):
                    self.k[self.mlp_kernel].launch(self.mlp_grid, **self.mlp_common, **self.mlp_w[l])
            elif run("gu"):
                if self.gemms == "linked":
                    self.fused.launch(self.f_grid, w_map=self.f_w[l], **self.f_common)
                else:
                    torch.mm(self.h, m.wgu[l].t(), out=self.gu)
                    k["silu"].launch(-(-B * FFN // 256), 256, self.gu, self.H, B, pdl=pdl)
            if run("down") and self.mlp == "split":
                if lp:
                    self._sk(self.sk_down[l])
                else:
                    torch.mm(self.H, m.wd[l].t(), out=self.d)
        if run("norm"):
            norm(nk, d, m.lnf, 1)
        if run("head"):
            if self.gemms == "linked":
                k["gemm"].launch(self.g_grid, **self.g_params)
            else:
                torch.mm(self.h, m.embed.t(), out=self.logits)
        return self.logits


# ---- checks --------------------------------------------------------------------------------------


def attention_reference(q, K, V, L):
    """fp32 reference of one layer's decode attention: q [B, 32, 64], K/V [B, 8, ctx, 64]."""
    torch = _torch()
    qf = q.float()
    k = K[:, :, :L].float().repeat_interleave(QH // KVH, dim=1)
    v = V[:, :, :L].float().repeat_interleave(QH // KVH, dim=1)
    s = torch.einsum("bhd,bhld->bhl", qf, k) / math.sqrt(HD)
    p = torch.softmax(s, dim=-1)
    return torch.einsum("bhl,bhld->bhd", p, v).reshape(q.shape[0], QH * HD)


def _random_attention_inputs(B, max_ctx, seed, q_std):
    """A seeded generator and the attention checks' inputs: K, V [1, B, 8, max_ctx, 64] ~ N(0, 1)
    and q [B, 32, 64] ~ N(0, q_std^2), all bf16 (the generator continues for further draws)."""
    torch = _torch()
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    K = (torch.randn(1, B, KVH, max_ctx, HD, generator=g, device="cuda")).to(torch.bfloat16)
    V = (torch.randn(1, B, KVH, max_ctx, HD, generator=g, device="cuda")).to(torch.bfloat16)
    q = (torch.randn(B, QH, HD, generator=g, device="cuda") * q_std).to(torch.bfloat16)
    return g, K, V, q


def check_attention(sel, shapes, log, q_std=2.0, forced_s=()):
    """The attention kernels alone against an fp32 reference: every variant (a, b with its own S,
    b with forced S values, selected), output poisoned with NaN first, the split counters checked
    back at zero. Tolerance |out - ref| <= 2^-7 |ref| + 2^-9 (inputs are exact bf16; the kernel
    rounds once to bf16, 2^-9 relative, and accumulates in fp32)."""
    torch = _torch()
    ok = True
    rows = []
    for (B, L, max_ctx) in shapes:
        g, K, V, q = _random_attention_inputs(B, max_ctx, B * 100003 + L, q_std)
        ref = attention_reference(q, K[0], V[0], L)
        runs = [("a", None), ("b", None), ("selected", None)] + [("b", s) for s in forced_s]
        for mode, force in runs:
            att = PipeLinkAttention(sel, (K, V), mode=mode)
            if force is not None:
                att.choice = (lambda L_, s=force: ("b", {"S": s}))
            att.out.fill_(float("nan"))
            o = att(0, q, L)
            torch.cuda.synchronize()
            of = o.float()
            err = (of - ref).abs()
            tol = ref.abs() * 2 ** -7 + 2 ** -9
            bad = int((err > tol).sum().item()) + int(torch.isnan(of).sum().item())
            report = sel.kernel(att.last[0]).checked_report()  # "" unless a PL_CHECKED wait timed out
            if report:
                log("  checked report: " + report)
                bad += 1
            cnt_left = int(att.cnt.abs().sum().item())
            worst = float((err / tol).max().item())
            row = dict(B=B, L=L, mode=mode, variant=att.last[0], S=att.last[1], max_abs_err=float(err.max().item()),
                       worst_err_over_tol=worst, bad=bad, counters_left=cnt_left)
            rows.append(row)
            good = bad == 0 and cnt_left == 0
            ok &= good
            log(f"  attn B={B:3d} L={L:5d} {mode:8s} -> {att.last[0]} S={att.last[1]:2d}: max abs err {row['max_abs_err']:.3e}, "
                f"worst err/tol {worst:.3f}, bad {bad}, counters left {cnt_left}: {'OK' if good else 'FAIL'}")
            del att
        del K, V
    return ok, rows


def check_attention_o(sel, log, shapes=((1, 4096, 4096), (1, 2048, 2048), (1, 600, 1024)), forced_s=(1, 3, 7, 16)):
    """The attention with the O projection in its writer (select_o_pdl.json's "bo") against an fp32
    reference: y = y0 + attention(q, K, V) W_o^T, y0 random (the kernel adds into y), W_o ~ N(0,
    0.02^2), the publish buffer poisoned with NaN first; at the table's S and at forced S values
    (S = 1: 16 pieces of W_o rows through the two-buffer loop; 3, 7: row ranges that are not whole
    pieces). Tolerance |y - ref| <= 2^-7 |o| |W_o row| + 2^-12 per element, i.e. the bf16 rounding
    of o (2^-9 relative) summed over 256 products with a 4x margin, and the flags checked back at 0."""
    torch = _torch()
    ok = True
    rows = []
    for (B, L, max_ctx) in shapes:
        g, K, V, q = _random_attention_inputs(B, max_ctx, B * 100019 + L, 2.0)
        wo = (torch.randn(HIDDEN, QH * HD, generator=g, device="cuda") * 0.02).to(torch.bfloat16)
        y0 = torch.randn(B, HIDDEN, generator=g, device="cuda")
        o_ref = attention_reference(q, K[0], V[0], L)
        ref = y0 + o_ref @ wo.float().t()
        scale = o_ref.abs() @ wo.float().abs().t()
        for force in (None,) + tuple(forced_s):
            att = PipeLinkAttention(sel, (K, V), mode="selected")
            if force is not None:
                att.choice = (lambda L_, s=force: ("bo", {"S": s}))
            if att.choice(L)[0] != "bo":
                log(f"  attn+O B={B} L={L}: the table picks {att.choice(L)[0]}, not bo: skipped")
                continue
            att.out.fill_(float("nan"))
            y = y0.clone()
            r = att(0, q, L, o_into=(wo, y))
            torch.cuda.synchronize()
            err = (y - ref).abs()
            tol = scale * 2 ** -7 + 2 ** -12
            bad = int((err > tol).sum().item()) + int(torch.isnan(y).sum().item()) + (r is not None)
            report = sel.kernel(att.last[0]).checked_report()  # "" unless a PL_CHECKED wait timed out
            if report:
                log("  checked report: " + report)
                bad += 1
            left = int(att.cnt.abs().sum().item() + att.ready.abs().sum().item() + att.done.abs().sum().item())
            worst = float((err / tol).max().item())
            row = dict(B=B, L=L, forced_S=force, variant=att.last[0], S=att.last[1], max_abs_err=float(err.max().item()),
                       worst_err_over_tol=worst, bad=bad, flags_left=left)
            rows.append(row)
            good = bad == 0 and left == 0
            ok &= good
            log(f"  attn+O B={B:3d} L={L:5d} -> {att.last[0]} S={att.last[1]:2d}: max abs err {row['max_abs_err']:.3e}, "
                f"worst err/tol {worst:.3f}, bad {bad}, flags left {left}: {'OK' if good else 'FAIL'}")
            del att
        del K, V
    return ok, rows


def check_rest(model, kdir: str, log, pdl: bool = False):
    """Each replaced part of the step alone against the PyTorch code it replaces, at B = 1, 16,
    64, outputs poisoned first: add_rmsnorm (with the residual add), rope_append (q and the cache
    rows), the linked gate/up + SwiGLU, silu_mul, and the linked lm_head. Criterion: no NaN and
    rel L2 <= 2^-7 (bf16 has 8 significant bits; the GEMMs accumulate in another order).
    pdl=True: the PDL builds, launched with programmatic dependent launch."""
    torch = _torch()
    F = torch.nn.functional
    ok, rows = True, []
    for B in (1, 16, 64):
        g = torch.Generator(device="cuda")
        g.manual_seed(99 + B)
        cache = (torch.zeros(LAYERS, B, KVH, 64, HD, device="cuda", dtype=torch.bfloat16),
                 torch.zeros(LAYERS, B, KVH, 64, HD, device="cuda", dtype=torch.bfloat16))
        for gemms_ in ("linked", "linked64", "cublas"):
            r = LinkedStep(model, kdir, B, cache, gemms=gemms_, pdl=pdl, proj="cublas" if gemms_ == "cublas" else "linked")
            gemms = r.gemms
            r.poison()
            x0 = torch.randn(B, HIDDEN, generator=g, device="cuda").to(torch.bfloat16)
            d0 = torch.randn(B, HIDDEN, generator=g, device="cuda").to(torch.bfloat16)
            r.x.copy_(x0)
            r.d.copy_(d0)
            pos = 37
            k = r.k
            k["norm"].launch(B, 256, r.x, r.d, model.ln1[3], r.h, r.x, model.embed, 1, pdl=pdl)
            xs = x0 + d0
            got = {"residual": (r.x.clone(), xs), "rmsnorm": (r.h.clone(), model.rmsnorm(xs, model.ln1[3]))}
            r.qkv.copy_(torch.randn(B, r.qkv.shape[1], generator=g, device="cuda").to(torch.bfloat16))
            k["rope"].launch(B, 256, r.qkv, model.cos, model.sin, pos, r.q, r.K[2], r.V[2], r.max_ctx, pdl=pdl)
            got["rope_q"] = (r.q.clone(), model.rope(r.qkv[:, :QH * HD].view(B, QH, HD), pos))
            got["rope_k_cache"] = (r.K[2, :, :, pos].clone(), model.rope(r.qkv[:, QH * HD:QH * HD + KVH * HD].view(B, KVH, HD), pos))
            got["v_cache"] = (r.V[2, :, :, pos].clone(), r.qkv[:, QH * HD + KVH * HD:].view(B, KVH, HD))
            r.h.copy_((torch.randn(B, HIDDEN, generator=g, device="cuda")).to(torch.bfloat16))
            gu = r.h @ model.wgu[5].t()
            ref_H = F.silu(gu[:, :FFN]) * gu[:, FFN:]
            r.H.fill_(float("nan"))
            if gemms == "linked":
                r.fused.launch(r.f_grid, w_map=r.f_w[5], **r.f_common)
                got["gate_up_swiglu(linked64)" if gemms_ == "linked64" else "gate_up_swiglu(linked)"] = (r.H.clone(), ref_H)
                r.logits.fill_(float("nan"))
                k["gemm"].launch(r.g_grid, **r.g_params)
                got["lm_head(linked)"] = (r.logits.clone(), r.h @ model.embed.t())
                # the split-K GEMMs into their f32 buffers (against an f32 product of the same bf16
                # operands), and the _f32 readers, which round to bf16 and leave zeros behind
                zero = {}
                xs = torch.randn(B, HIDDEN, generator=g, device="cuda").to(torch.bfloat16)
                r.h.copy_(xs)
                r._sk(r.sk_qkv[4])
                got["qkv(linked split-K)"] = (r.qkv32.clone(), xs.float() @ model.wqkv[4].float().t())
                qkv_b = r.qkv32.to(torch.bfloat16)
                k["rope32"].launch(B, 256, r.qkv32, model.cos, model.sin, pos, r.q, r.K[2], r.V[2], r.max_ctx, pdl=pdl)
                got["rope_q(f32 in)"] = (r.q.clone(), model.rope(qkv_b[:, :QH * HD].view(B, QH, HD), pos))
                got["v_cache(f32 in)"] = (r.V[2, :, :, pos].clone(), qkv_b[:, QH * HD + KVH * HD:].view(B, KVH, HD))
                zero["qkv32 after rope_append_f32"] = r.qkv32.clone()
                # the same GEMM with RoPE and the cache append in its reduction (sk_rope): q and
                # the cache rows against the rope of the f32 product rounded to bf16
                xr = torch.randn(B, HIDDEN, generator=g, device="cuda").to(torch.bfloat16)
                r.h.copy_(xr)
                r.q.fill_(float("nan"))
                r.K[3, :, :, pos].fill_(float("nan"))
                r.V[3, :, :, pos].fill_(float("nan"))
                ref_b = (xr.float() @ model.wqkv[3].float().t()).to(torch.bfloat16)
                r._sk(r.sk_qkv_rope[3], pos=pos)
                got["rope_q(fused in QKV)"] = (r.q.clone(), model.rope(ref_b[:, :QH * HD].view(B, QH, HD), pos))
                got["rope_k_cache(fused)"] = (r.K[3, :, :, pos].clone(), model.rope(ref_b[:, QH * HD:QH * HD + KVH * HD].view(B, KVH, HD), pos))
                got["v_cache(fused)"] = (r.V[3, :, :, pos].clone(), ref_b[:, QH * HD + KVH * HD:].view(B, KVH, HD))
                zero["qkv32 after sk_rope"] = r.qkv32.clone()
                zero["rope counters after sk_rope"] = r.rope_count.clone()
                # the fused MLP (mlp_loader + mlp_mma) into d32, against fp32 products of the same
                # bf16 operands with G, U and H rounded to bf16 as the kernel does
                if not hasattr(r, "mlp_w"):
                    rm = LinkedStep(model, kdir, B, cache, gemms="linked64", pdl=pdl, proj="linked", mlp="fused")
                    xm = torch.randn(B, HIDDEN, generator=g, device="cuda").to(torch.bfloat16)
                    rm.h.copy_(xm)
                    rm.d32.zero_()
                    rm.k["mlp"].launch(rm.mlp_grid, **rm.mlp_common, **rm.mlp_w[5])
                    gu32 = (xm.float() @ model.wgu[5].float().t()).to(torch.bfloat16).float()
                    hm = (F.silu(gu32[:, :FFN]) * gu32[:, FFN:]).to(torch.bfloat16)
                    got["mlp(fused gate/up + down)"] = (rm.d32.clone(), hm.float() @ model.wd[5].float().t())
                    del rm
                o_in = torch.randn(B, QH * HD, generator=g, device="cuda").to(torch.bfloat16)
                r._sk(r.sk_o[6], x=o_in)
                got["o_proj(linked split-K)"] = (r.d32.clone(), o_in.float() @ model.wo[6].float().t())
                x1 = torch.randn(B, HIDDEN, generator=g, device="cuda").to(torch.bfloat16)
                r.x.copy_(x1)
                xs1 = x1 + r.d32.to(torch.bfloat16)
                k["norm32"].launch(B, 256, r.x, r.d32, model.ln2[6], r.h, r.x, model.embed, 1, pdl=pdl)
                got["residual(f32 in)"] = (r.x.clone(), xs1)
                got["rmsnorm(f32 in)"] = (r.h.clone(), model.rmsnorm(xs1, model.ln2[6]))
                zero["d32 after add_rmsnorm_f32"] = r.d32.clone()
                H_in = (0.1 * torch.randn(B, FFN, generator=g, device="cuda")).to(torch.bfloat16)
                r.H.copy_(H_in)
                r._sk(r.sk_down[7])
                got["down(linked split-K)"] = (r.d32.clone(), H_in.float() @ model.wd[7].float().t())
                r.d32.zero_()
            else:
                r.gu.copy_(gu)
                k["silu"].launch(-(-B * FFN // 256), 256, r.gu, r.H, B, pdl=pdl)
                got["silu_mul"] = (r.H.clone(), ref_H)
            torch.cuda.synchronize()
            if gemms == "linked":
                for name, t_ in zero.items():
                    good = bool((t_ == 0).all().item())
                    ok &= good
                    rows.append(dict(B=B, part=name, pdl=pdl, all_zero=good, ok=good))
                    log(f"  rest{' pdl' if pdl else ''} B={B:2d} {name:24s}: all zero {good}: {'OK' if good else 'FAIL'}")
            for name, (a_, b_) in got.items():
                if gemms == "cublas" and name not in ("silu_mul",):
                    continue
                a_, b_ = a_.float(), b_.float()
                nan = int(torch.isnan(a_).sum().item())
                rel = float(((a_ - b_).norm() / b_.norm().clamp_min(1e-30)).item()) if nan == 0 else float("nan")
                mx = float((a_ - b_).abs().max().item()) if nan == 0 else float("nan")
                eq = float((a_ == b_).float().mean().item())
                good = nan == 0 and rel <= 2 ** -7
                ok &= good
                rows.append(dict(B=B, part=name, gemms=gemms_, pdl=pdl, rel_l2=rel, max_abs=mx, equal_frac=eq, nan=nan, ok=good))
                log(f"  rest{' pdl' if pdl else ''} B={B:2d} {gemms_:8s} {name:24s}: rel L2 {rel:.2e}, max abs {mx:.3e}, bit-equal {eq:.4f}, NaN {nan}: "
                    f"{'OK' if good else 'FAIL'}")
            del r
    return ok, rows


def compare_logits(lp, lr, noise=None):
    """PipeLink logits lp vs the SDPA reference's lr: max abs difference, relative L2, argmax
    agreement. The criterion, fixed before the second GPU run (2026-11-30): no NaN, and
    rel L2 <= 1.5 x noise + 2^-10, where noise is the rel L2 between the fp32-attention reference's
    logits and lr at the same point (how far two correct attentions land after 16 bf16 layers).
    The first criterion (rel L2 <= 2^-6, max abs <= rms / 4, fixed before the first run) is
    reported too, as `ok_abs`: it failed for every variant in the first run (rel L2 ~3.4%), and the
    fp32 reference was added to see whether that is rounding noise."""
    torch = _torch()
    d = (lp.float() - lr.float())
    rms = lr.float().pow(2).mean().sqrt().item()
    max_abs = d.abs().max().item()
    rel_l2 = (d.pow(2).sum().sqrt() / lr.float().pow(2).sum().sqrt()).item()
    nan = int(torch.isnan(lp.float()).sum().item())
    agree = float((lp.float().argmax(-1) == lr.float().argmax(-1)).float().mean().item())
    ok_abs = nan == 0 and rel_l2 <= 2 ** -6 and max_abs <= 0.25 * rms
    r = dict(max_abs=max_abs, rel_l2=rel_l2, ref_rms=rms, argmax_agree=agree, nan=nan, ok_abs=ok_abs)
    if noise is not None:
        r["noise_rel_l2"] = noise
        r["ok"] = nan == 0 and rel_l2 <= 1.5 * noise + 2 ** -10
    else:
        r["ok"] = ok_abs
    return r


PROMPT = [128000, 791, 6864, 315, 9822, 374, 12366, 13]


def greedy(model, attn_factory, steps=32, max_ctx=64, forced=None, keep=None):
    """A greedy decode from PROMPT (B = 1), eager (no graph: L changes every step): the prompt is
    fed one token at a time, then `steps` tokens are generated. With `forced` (a token list), those
    tokens are fed instead of the model's own (teacher forcing), so every step sees the same
    context as the run that produced them. Returns (argmax tokens, top-2 margins); with keep (a
    list), each generating step's logits (f32, on the GPU) are appended to it."""
    torch = _torch()
    cache = (torch.zeros(LAYERS, 1, KVH, max_ctx, HD, device="cuda", dtype=torch.bfloat16),
             torch.zeros(LAYERS, 1, KVH, max_ctx, HD, device="cuda", dtype=torch.bfloat16))
    attn = attn_factory(cache)
    out, margins, tok = [], [], None
    for pos in range(len(PROMPT) + steps - 1):
        if pos < len(PROMPT):
            t = PROMPT[pos]
        else:
            t = forced[pos - len(PROMPT)] if forced is not None else tok
        logits = model.step(torch.tensor([t], device="cuda"), pos, cache, attn)
        if pos >= len(PROMPT) - 1:
            if keep is not None:
                keep.append(logits[0].float().clone())
            top2 = logits[0].float().topk(2)
            tok = int(top2.indices[0].item())
            margins.append(float((top2.values[0] - top2.values[1]).item()))
            out.append(tok)
    return out, margins


def greedy_report(model, sel, log):
    """Free-running greedy decodes (SDPA reference, fp32-attention reference, PipeLink selected and
    b) and teacher-forced agreement with the SDPA reference's tokens. Criterion (fixed before the
    second run): PipeLink's teacher-forced argmax agrees with the reference at least as often as
    the fp32-attention reference's does, minus one step."""
    ref_logits = []
    ref_toks, ref_m = greedy(model, lambda c: TorchAttention(c), keep=ref_logits)
    r = {"prompt": PROMPT, "reference": ref_toks, "reference_margins": ref_m}

    def regret(toks):
        """Per step, how far below the reference's own top logit the reference puts the token
        chosen (0 where they agree), and that top logit's bf16 ulp: a near-tie is a regret of an
        ulp or two, which one rounding of the bf16 logits can flip."""
        out = []
        for i, t in enumerate(toks):
            lg = ref_logits[i]
            top = float(lg[ref_toks[i]].item())
            ulp = 2.0 ** (math.floor(math.log2(abs(top))) - 7) if top != 0 else 2.0 ** -133
            out.append(dict(step=i, token=t, reference_token=ref_toks[i], regret=top - float(lg[t].item()), ulp=ulp))
        return out
    facts = {"fp32_attention": lambda c: Fp32Attention(c),
             "pipelink_selected": lambda c: PipeLinkAttention(sel, c, mode="selected"),
             "pipelink_b": lambda c: PipeLinkAttention(sel, c, mode="b")}
    margins = {}
    for name, f in facts.items():
        toks, margins[name] = greedy(model, f)
        same = next((i for i, (x, y) in enumerate(zip(toks, ref_toks)) if x != y), len(toks))
        forced, _ = greedy(model, f, forced=ref_toks)
        agree = sum(int(x == y) for x, y in zip(forced, ref_toks))
        miss = [x for x in regret(forced) if x["token"] != x["reference_token"]]
        r[name] = dict(free_running=toks, free_running_equal_prefix=same, teacher_forced=forced, teacher_forced_agree=agree,
                       teacher_forced_mismatches=miss,
                       teacher_forced_max_regret_ulps=max((x["regret"] / x["ulp"] for x in miss), default=0.0))
        log(f"  greedy {name:18s}: free-running equal prefix {same:2d}/32"
            + ("" if same == 32 else f" (reference margin there {ref_m[same]:.4f})")
            + f"; teacher-forced argmax agrees at {agree}/32 steps"
            + "".join(f"; step {x['step']}: token {x['token']} for {x['reference_token']}, {x['regret']:.4f} below the reference's "
                      f"top logit ({x['regret'] / x['ulp']:.1f} ulp)" for x in miss))
    base = r["fp32_attention"]["teacher_forced_agree"]
    r["ok"] = all(r[n]["teacher_forced_agree"] >= base - 1 for n in ("pipelink_selected", "pipelink_b"))
    # Reported beside the criterion, not replacing it (session 7): whether every teacher-forced
    # mismatch is a near-tie of the reference's bf16 logits (at most 2 ulp below its top logit).
    r["mismatches_within_2_ulp"] = all(r[n]["teacher_forced_max_regret_ulps"] <= 2.0 for n in ("pipelink_selected", "pipelink_b"))
    log("  teacher-forced mismatches all within 2 ulp of the reference's top logit (near-ties): "
        + ("yes" if r["mismatches_within_2_ulp"] else "no") + "; the criterion above (fixed before the second run) decides")
    log("reference tokens: " + " ".join(map(str, ref_toks)))
    # A second reading (added in session 6, after the criterion above had failed on 1-ulp near-ties):
    # the same decodes against the fp32-attention reference's own greedy tokens. SDPA rounds a
    # third of its bf16 outputs differently from the fp32 attention, PipeLink's attention 0.05-0.3%
    # of them (bench/llama_decode/attn_bits.py), so the fp32 decode is the closer reference; the
    # pass/fail above stays the criterion.
    f32_toks, f32_m = r["fp32_attention"]["free_running"], margins["fp32_attention"]
    r["fp32_reference"] = dict(tokens=f32_toks, margins=f32_m)
    for name in ("pipelink_selected", "pipelink_b"):
        toks = r[name]["free_running"]
        same = next((i for i, (x, y) in enumerate(zip(toks, f32_toks)) if x != y), len(toks))
        forced, _ = greedy(model, facts[name], forced=f32_toks)
        agree = sum(int(x == y) for x, y in zip(forced, f32_toks))
        r[name].update(vs_fp32_free_running_equal_prefix=same, vs_fp32_teacher_forced_agree=agree)
        log(f"  greedy {name:18s} vs the fp32-attention decode: free-running equal prefix {same:2d}/32"
            + ("" if same == 32 else f" (fp32 margin there {f32_m[same]:.4f})") + f"; teacher-forced argmax agrees at {agree}/32 steps")
    return r


def greedy_steps(prompt, step, steps=32, forced=None, keep=None):
    """greedy() over any step function step(tok_tensor, pos) -> logits [1, vocab] (the cache and
    attention live in the closure): the prompt fed one token at a time, then `steps` tokens,
    teacher-forced with `forced`. Returns the argmax tokens; keep (a list) collects each generating
    step's logits (f32)."""
    torch = _torch()
    out, tok = [], None
    for pos in range(len(prompt) + steps - 1):
        t = prompt[pos] if pos < len(prompt) else (forced[pos - len(prompt)] if forced is not None else tok)
        logits = step(torch.tensor([t], device="cuda"), pos)
        if pos >= len(prompt) - 1:
            if keep is not None:
                keep.append(logits[0].float().clone())
            tok = int(logits[0].float().argmax().item())
            out.append(tok)
    return out


GREEDY_STUDY_ULPS = 4.0


def greedy_study(model, kdir, log, prompts=32, steps=32, product_kwargs=None):
    """The 32-token greedy comparison over many prompts (session 9), with its criterion fixed before
    its first run. One fixed prompt gives 32 argmax decisions, too few to tell an attention that
    flips near-ties as often as any other correct one from one that is wrong more often: the earlier
    single-prompt check found two mismatches, both 2-3 bf16 ulp near-ties, while the fp32-attention
    reference happened to match all 32.

    Per prompt (prompt 0 is PROMPT, the others 8 seeded random token ids): the SDPA reference decodes
    `steps` tokens greedily; then, teacher-forced on the reference's tokens (so every decision sees
    the same context), the fp32-attention reference (another correct attention), PipeLink's selected
    attention in the reference's PyTorch step, and the whole linked step (LinkedStep with the
    bench's fastest settings, PDL, its own selection table: what a user runs) decide each next
    token. A decision counts as a mismatch where its argmax differs from the reference's; its
    regret is how far below the reference's top logit the reference puts the token chosen, in bf16
    ulps of that top logit.

    Criterion (fixed 2026-11-30 before this study's first run), for each PipeLink contender:
      (1) rate: its mismatches D are no more than the fp32-attention reference's D_f32 beyond the
          counting noise: D <= D_f32 + 2 sqrt(D + D_f32) (two standard deviations of a difference
          of two Poisson counts);
      (2) size: every mismatch is a near-tie: regret <= 4 ulps of the top logit (4 ulps = 3.1% of
          it, the size of the rel-L2 noise, 3.2-3.5%, measured between the two correct references'
          logits at every bench point).
    The free-running decodes (each contender feeding its own tokens) are reported, not judged: after
    the first near-tie flip, two correct decodes follow different texts."""
    import random  # noqa: PLC0415
    torch = _torch()
    import pipelink  # noqa: PLC0415
    sel = pipelink.Selection(os.path.join(kdir, "select.json"))
    rng = random.Random(2026)
    plist = [list(PROMPT)] + [[128000] + [rng.randrange(1000, VOCAB) for _ in range(7)] for _ in range(prompts - 1)]
    max_ctx = 64  # as greedy(): 8 prompt tokens + 32, one 64-key tile

    def fresh_cache():
        return (torch.zeros(LAYERS, 1, KVH, max_ctx, HD, device="cuda", dtype=torch.bfloat16),
                torch.zeros(LAYERS, 1, KVH, max_ctx, HD, device="cuda", dtype=torch.bfloat16))

    def torch_step(attn_cls):
        def make():
            cache = fresh_cache()
            attn = attn_cls(cache)
            return lambda tok, pos: model.step(tok, pos, cache, attn)
        return make

    contenders = {"fp32_attention": torch_step(lambda c: Fp32Attention(c)),
                  "pipelink_attention": torch_step(lambda c: PipeLinkAttention(sel, c, mode="selected"))}
    if product_kwargs is not None:
        sel_pdl = selection(kdir, pdl=True)

        def make_product():
            cache = fresh_cache()
            attn = PipeLinkAttention(sel_pdl, cache, mode="selected")
            rest = LinkedStep(model, kdir, 1, cache, pdl=True, **product_kwargs)
            return lambda tok, pos: rest.step(tok, pos, attn)
        contenders["pipelink_linked_step"] = make_product
    res = {"criterion": "D <= D_f32 + 2 sqrt(D + D_f32) and every mismatch <= 4 ulps below the reference's top logit",
           "prompts": plist, "steps": steps, "product_kwargs": product_kwargs, "per_prompt": []}
    tally = {n: dict(decisions=0, mismatches=0, regrets_ulp=[], free_equal_prefix=[]) for n in contenders}
    for i, prompt in enumerate(plist):
        ref_logits = []
        ref = greedy_steps(prompt, torch_step(lambda c: TorchAttention(c))(), steps, keep=ref_logits)
        row = {"prompt": i, "reference": ref}
        for name, make in contenders.items():
            forced = greedy_steps(prompt, make(), steps, forced=ref)
            free = greedy_steps(prompt, make(), steps)
            miss = []
            for j, (x, y) in enumerate(zip(forced, ref)):
                if x != y:
                    lg = ref_logits[j]
                    top = float(lg[y].item())
                    ulp = 2.0 ** (math.floor(math.log2(abs(top))) - 7) if top != 0 else 2.0 ** -133
                    miss.append(dict(step=j, token=x, reference_token=y, regret=top - float(lg[x].item()),
                                     regret_ulp=(top - float(lg[x].item())) / ulp))
            same = next((j for j, (x, y) in enumerate(zip(free, ref)) if x != y), len(free))
            t = tally[name]
            t["decisions"] += len(ref)
            t["mismatches"] += len(miss)
            t["regrets_ulp"] += [m["regret_ulp"] for m in miss]
            t["free_equal_prefix"].append(same)
            row[name] = dict(teacher_forced=forced, mismatches=miss, free_running=free, free_equal_prefix=same)
        res["per_prompt"].append(row)
        log(f"  greedy study prompt {i:2d}: mismatches (teacher-forced, of {steps}) "
            + ", ".join(f"{n} {len(row[n]['mismatches'])}" for n in contenders)
            + "; free-running equal prefix " + ", ".join(f"{n} {row[n]['free_equal_prefix']}" for n in contenders))
    d32 = tally["fp32_attention"]["mismatches"]
    ok = True
    for name, t in tally.items():
        t["max_regret_ulp"] = max(t["regrets_ulp"], default=0.0)
        if name == "fp32_attention":
            continue
        d = t["mismatches"]
        bound = d32 + 2.0 * math.sqrt(d + d32)
        t["rate_ok"] = d <= bound
        t["size_ok"] = t["max_regret_ulp"] <= GREEDY_STUDY_ULPS
        t["ok"] = t["rate_ok"] and t["size_ok"]
        ok &= t["ok"]
        log(f"  greedy study {name:22s}: {d} mismatches in {t['decisions']} decisions (fp32 attention {d32}; bound "
            f"{bound:.1f}: {'ok' if t['rate_ok'] else 'FAIL'}), largest regret {t['max_regret_ulp']:.1f} ulp (<= "
            f"{GREEDY_STUDY_ULPS:.0f}: {'ok' if t['size_ok'] else 'FAIL'}); free-running all 32 equal in "
            f"{sum(int(x == steps) for x in t['free_equal_prefix'])}/{len(plist)} prompts")
    t = tally["fp32_attention"]
    log(f"  greedy study fp32_attention (the yardstick): {d32} mismatches in {t['decisions']} decisions, largest regret "
        f"{t['max_regret_ulp']:.1f} ulp; free-running all 32 equal in {sum(int(x == steps) for x in t['free_equal_prefix'])}/{len(plist)}")
    res["tally"] = tally
    res["ok"] = ok
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True, help="directory with attn_a/attn_b cubins+maps and select.json")
    ap.add_argument("--json", default="", help="write the results here")
    ap.add_argument("--quick", action="store_true", help="attention checks on small shapes only (for compute-sanitizer)")
    ap.add_argument("--steps-only", action="store_true", help="only the step (logits) checks, no attention or greedy checks")
    ap.add_argument("--no-rest", action="store_true", help="leave out the linked-rest steps (LinkedStep)")
    ap.add_argument("--pdl", action="store_true",
                    help="also the linked-rest parts and steps with programmatic dependent launch (rest_pdl.cubin, the --pdl "
                         "links, select_pdl.json), and their logits compared bit for bit with the same steps without it")
    ap.add_argument("--attn-o-only", action="store_true",
                    help="only the check of the attention with the O projection in its writer (select_o_pdl.json's bo)")
    ap.add_argument("--greedy-study", type=int, default=0, metavar="N",
                    help="only the greedy comparison over N prompts (greedy_study: its criterion in the docstring)")
    a = ap.parse_args()
    import pipelink  # noqa: PLC0415
    try:
        torch = _torch()
    except ImportError:
        print("skipped: no GPU (no PyTorch)")
        return 77
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    log = lambda s: print(s, flush=True)  # noqa: E731
    sel = pipelink.Selection(os.path.join(a.kernels, "select.json"))
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if a.quick:
        shapes = [(1, 1, 64), (2, 70, 128), (1, 600, 640), (3, 1000, 1024)]
        ok, rows = check_attention(sel, shapes, log, forced_s=(2, 5, 33))
        log("PASS" if ok else "FAIL")
        return 0 if ok else 1
    if a.greedy_study:
        try:
            import bench as _bench  # noqa: PLC0415  (bench/llama_decode/bench.py, staged beside this file)
            product = _bench.fast_mlp(1)
        except ImportError:
            product = None
        t0 = time.time()
        res["greedy_study"] = greedy_study(Llama1B(), a.kernels, log, prompts=a.greedy_study, product_kwargs=product)
        res["ok"] = res["greedy_study"]["ok"]
        log(f"greedy study: {'PASS' if res['ok'] else 'FAIL'} ({time.time() - t0:.1f} s)")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(res, f, indent=1)
        return 0 if res["ok"] else 1
    t0 = time.time()
    ok_attn = True
    shapes = [] if a.steps_only else [(1, 1, 64), (1, 16, 16), (1, 63, 64), (1, 64, 64), (1, 65, 128), (1, 1000, 1024), (1, 4096, 4096),
              (1, 8192, 8192), (3, 777, 800), (16, 16, 16), (16, 4096, 4096), (64, 16, 16), (64, 4096, 4096)]
    if shapes and not a.attn_o_only:
        ok_attn, rows = check_attention(sel, shapes, log, forced_s=(1, 3, 16, 17, 33, 64))
        res["attention_check"] = dict(ok=ok_attn, rows=rows)
        log(f"attention checks: {'PASS' if ok_attn else 'FAIL'} ({time.time() - t0:.1f} s)")
    if (a.pdl or a.attn_o_only) and not a.steps_only:
        ok_o, rows = check_attention_o(selection(a.kernels, pdl=True, table="select_o"), log)
        res["attention_o_check"] = dict(ok=ok_o, rows=rows)
        ok_attn &= ok_o
        log(f"attention + O checks: {'PASS' if ok_o else 'FAIL'}")
        if a.attn_o_only:
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(res, f, indent=1)
            return 0 if ok_o else 1

    model = Llama1B()
    ok_steps = True
    pdls = (False, True) if a.pdl and not a.no_rest else (False,)
    sels = {False: sel, True: selection(a.kernels, pdl=True) if True in pdls else None}
    if not a.no_rest:
        res["rest_check"] = dict(ok=True, rows=[])
        for pdl in pdls:
            ok_rest, rows = check_rest(model, a.kernels, log, pdl=pdl)
            res["rest_check"]["ok"] &= ok_rest
            res["rest_check"]["rows"] += rows
            ok_steps &= ok_rest
            log(f"rest checks{' (pdl)' if pdl else ''}: {'PASS' if ok_rest else 'FAIL'}")
    res["step_check"] = []
    for B in (1, 16, 64):
        cache = alloc_cache(B, 4096)
        tok = torch.randint(0, VOCAB, (B,), device="cuda", generator=torch.Generator(device="cuda").manual_seed(B))
        for ctx in (16, 4096):
            ref = model.step(tok, ctx - 1, cache, TorchAttention(cache))
            ref32 = model.step(tok, ctx - 1, cache, Fp32Attention(cache))
            noise = compare_logits(ref32, ref)["rel_l2"]
            log(f"  step B={B:2d} ctx={ctx:4d} fp32-attention reference vs SDPA reference: rel L2 {noise:.2e} (the noise scale)")
            for mode in ("a", "b", "selected"):
                att = PipeLinkAttention(sel, cache, mode=mode)
                att.out.fill_(float("nan"))
                lp = model.step(tok, ctx - 1, cache, att)
                c = compare_logits(lp, ref, noise)
                c.update(B=B, ctx=ctx, mode=mode, variant=att.last[0], S=att.last[1])
                res["step_check"].append(c)
                ok_steps &= c["ok"]
                log(f"  step B={B:2d} ctx={ctx:4d} {mode:8s} ({att.last[0]}, S={att.last[1]:2d}): max|dlogit| {c['max_abs']:.4f} "
                      f"(ref rms {c['ref_rms']:.3f}), rel L2 {c['rel_l2']:.2e} (<= {1.5 * noise + 2 ** -10:.2e}), argmax agree "
                      f"{c['argmax_agree']:.3f}: {'OK' if c['ok'] else 'FAIL'}")
            # the step with the rest linked (LinkedStep), every intermediate buffer poisoned first;
            # with --pdl also with programmatic dependent launch; whether its logits equal the same
            # step's without it bit for bit (the same kernels in the same order) is reported too
            plain_logits = {}
            for pdl in pdls:
                for mode, gemms, proj in (() if a.no_rest else (("a", "linked", "cublas"), ("b", "linked", "cublas"),
                                                                 ("selected", "linked", "cublas"), ("selected", "cublas", "cublas"),
                                                                 ("a", "linked", "linked"), ("b", "linked", "linked"),
                                                                 ("selected", "linked", "linked"), ("selected", "linked64", "linked"))):
                    att = PipeLinkAttention(sels[pdl], cache, mode=mode)
                    rest = LinkedStep(model, a.kernels, B, cache, gemms=gemms, pdl=pdl, proj=proj)
                    att.out.fill_(float("nan"))
                    rest.poison(ctx - 1)
                    lp = rest.step(tok, ctx - 1, att)
                    c = compare_logits(lp, ref, noise)
                    gemms = gemms if proj == "cublas" else gemms + "+splitk"
                    name = f"{mode}+rest({gemms})" + ("+pdl" if pdl else "")
                    c.update(B=B, ctx=ctx, mode=name, variant=att.last[0], S=att.last[1])
                    extra = ""
                    if pdl:
                        same = bool(torch.equal(lp, plain_logits[(mode, gemms)]))
                        c["bit_equal_to_without_pdl"] = same  # reported; the criterion is compare_logits's
                        extra = f", bit-equal to the step without pdl: {same}"
                    else:
                        plain_logits[(mode, gemms)] = lp.clone()
                    res["step_check"].append(c)
                    ok_steps &= c["ok"]
                    log(f"  step B={B:2d} ctx={ctx:4d} {name:28s}: max|dlogit| {c['max_abs']:.4f} rel L2 {c['rel_l2']:.2e} "
                        f"(<= {1.5 * noise + 2 ** -10:.2e}), argmax agree {c['argmax_agree']:.3f}{extra}: {'OK' if c['ok'] else 'FAIL'}")
                    del rest, att
        del cache
        torch.cuda.empty_cache()
    log(f"step checks: {'PASS' if ok_steps else 'FAIL'}")

    ok_greedy = True
    if not a.steps_only:
        res["greedy"] = greedy_report(model, sel, log)
        ok_greedy = res["greedy"]["ok"]
        log(f"greedy: {'PASS' if ok_greedy else 'FAIL'}")
    res["ok"] = bool(ok_attn and ok_steps and ok_greedy)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    log("PASS" if res["ok"] else "FAIL")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
