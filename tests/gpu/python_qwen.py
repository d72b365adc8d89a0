#!/usr/bin/env python3
"""ctest gpu.python_qwen: the Qwen3-32B gate/up GEMM + SwiGLU kernel, linked and launched from
Python on PyTorch tensors, checked against PyTorch, then captured in a CUDA graph and replayed.

    PYTHONPATH=build/python python3 tests/gpu/python_qwen.py [BUILD_DIR]

For each tile variant (fused: 128x128, two consumer warpgroups; fused_small: 64x104, one; fused_sw:
128x128 with the accumulator stage in four 128B-swizzled panels; fused_small linked with
min_registers=True, whose map must show the entry cap of 136 ptxas kept; fused_sw_splitk and
fused_small_sk, the work-unit objects linked with --tile-schedule split-k / stream-k, whose split
tiles are summed from f32 partials, so step 4 also checks that a replay clears the flags;
fused_small16_packed, whose loader reads W packed by its cubin's gu_pack_w, checked bit for bit
against fused_small16 as well; fused_small16_swap_packed, the same with the operands swapped;
then gemm_small16_packed and gemm_medium_packed bit for bit against their TMA twins in the plain
GEMM's row pairing, and the checked build's refusal of a mismatched pack):
  1. link it from Python (pipelink.link) from the build's component objects, and compare the
     cubin with the one the build linked through the command line;
  2. load it (pipelink.Kernel), build the three tensor maps from torch tensors, launch it on
     torch's current stream for a few M: X [M, 5120] ~ N(0, 1), W = [gate; up] [51200, 5120]
     ~ N(0, 0.02^2), both bf16; H [M, 25600] bf16 is poisoned with NaN first and has NaN guard
     rows after it;
  3. compare H with the fp32 reference silu(X Wg^T) * (X Wu^T) (TF32 off). Tolerance, elementwise:
        |H - ref| <= 2^-6 |silu(G) U| + 2^-7 |U| + 1e-3
     The kernel rounds G and U to bf16 before the SwiGLU and H after it (round to nearest: at most
     2^-8 relative each, bf16 having 8 significant bits). With silu's slope that is at most
     (1.28 + 1 + 1) 2^-8 |silu(G) U| for G > 0, plus under 0.72 2^-8 |U| near silu's minimum for
     G < 0; the rest is slack for fp32 accumulation order and the kernel's __expf/__fdividef.
     Also: no NaN left in H, the guard rows untouched, relative L2 error <= 1e-2 (bench_qwen_mlp's
     bound);
  4. capture the launch in a torch.cuda.CUDAGraph, replay it: the output must equal the eager
     one bit for bit; then refill X in place, replay, and check against the new reference.
Also checks that the parameter and tensor-map type checks refuse wrong arguments.

Exit status: 0 if every check passed; 1 if any failed or no kernel was checked; 77 with
"skipped: no GPU" when PyTorch has no CUDA device.
"""
import math
import os
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
BUILD = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else SRC / "build"

try:
    import torch
except ImportError:
    print("skipped: no GPU (PyTorch is not installed)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no GPU")
    sys.exit(77)

try:
    import pipelink
except ImportError:
    sys.path.insert(0, str(BUILD / "python"))
    import pipelink

K_HIDDEN, N_INTER = 5120, 25600
Q = SRC / "examples" / "qwen_mlp"
QO = BUILD / "examples" / "qwen_mlp"
VARIANTS = {
    # name: (contracts, M values)
    "fused": ([Q / "loader/contract.toml", Q / "mma/contract.toml", Q / "mma/contract.toml", Q / "swiglu/contract.toml",
               Q / "store/contract.toml"], [256, 1000]),
    "fused_small": ([Q / "loader/contract_small.toml", Q / "mma/contract_small.toml", Q / "swiglu/contract.toml",
                     Q / "store/contract.toml"], [64, 40]),
    # the 16-row decode tile (session 11): X slices of 16 rows, 16-row SwiGLU out stages
    "fused_small16": ([Q / "loader/contract_small16.toml", Q / "mma/contract_small16.toml", Q / "swiglu/contract_r16.toml",
                       Q / "store/contract.toml"], [16, 5, 40]),
    # the 128x128 tile whose accumulator stage is four 128B-swizzled panels (session 9)
    "fused_sw": ([Q / "loader/contract.toml", Q / "mma/contract_sw.toml", Q / "mma/contract_sw.toml", Q / "swiglu/contract_sw.toml",
                  Q / "store/contract.toml"], [256, 1000]),
    # the same linked with --min-registers: the entry launches with (232 + 40) / 2 = 136 registers
    # a thread (__maxnreg__) and setmaxnreg raises the main loop's warpgroup to 232 within them
    "fused_small_mr": ([Q / "loader/contract_small.toml", Q / "mma/contract_small.toml", Q / "swiglu/contract.toml",
                        Q / "store/contract.toml"], [64, 40]),
    # session 10: the loader and main loop that walk work units (pl::unit_at), linked with a split
    # schedule: split-k (the partial last wave's tiles cut into equal k pieces: M = 1000 has 1600
    # tiles, 16 of them split 8 ways; M = 256 400 tiles, 4 split 33 ways) and stream-k (M = 64 / 40:
    # 247 tiles in 132 shares of k slices); each split tile summed from f32 partials; since session 18
    # its main loop overlaps the tile boundary (contract_sw_sk_ov.toml: -DGU_OVERLAP=1)
    "fused_sw_splitk": ([Q / "loader/contract_sk.toml", Q / "mma/contract_sw_sk_ov.toml", Q / "mma/contract_sw_sk_ov.toml",
                         Q / "swiglu/contract_sw.toml", Q / "store/contract.toml"], [1000, 256]),
    # session 12: the ping-pong main loop (two warpgroups take the tiles in turn), grouped:8 order;
    # M = 16: 400 tiles, 3 or 4 per block (odd counts: the instances' turns end unevenly)
    "fused_pp_g8": ([Q / "loader/contract_pp.toml", Q / "mma/contract_pp.toml", Q / "mma/contract_pp.toml",
                     Q / "swiglu/contract_pp.toml", Q / "store/contract.toml"], [1000, 16]),
    "fused_small_sk": ([Q / "loader/contract_small_sk.toml", Q / "mma/contract_small_sk.toml", Q / "swiglu/contract.toml",
                        Q / "store/contract.toml"], [64, 40]),
    # session 13: the 16-row decode tile reading W packed by its own cubin's gu_pack_w (one bulk
    # copy per stage); its stages hold the bytes fused_small16's TMA boxes write, so H must equal
    # fused_small16's bit for bit (PACKED_TWIN)
    "fused_small16_packed": ([Q / "loader/contract_packed16.toml", Q / "mma/contract_small16.toml", Q / "swiglu/contract_r16.toml",
                              Q / "store/contract.toml"], [16, 5, 40]),
    # and with the wgmma operands swapped (mma/wgmma_gu_swap.cu: W rows as the m64, X's rows as n16)
    "fused_small16_swap_packed": ([Q / "loader/contract_packed16.toml", Q / "mma/contract_small16_swap.toml",
                                   Q / "swiglu/contract_r16.toml", Q / "store/contract.toml"], [16, 5, 40]),
    # session 16: the 128 x 104 tile with the SwiGLU in the main loop's epilogue (-DGU_SWIGLU=1) and a
    # 4-stage ring; the store takes H [128 x 104] from the main loop's "acc" stage (pipe "out")
    "fused_medium_swf": ([Q / "loader/contract_medium_s4.toml", Q / "mma/contract_medium_swf.toml",
                          Q / "mma/contract_medium_swf.toml", Q / "store/contract.toml"], [1000, 256, 40]),
}
PACKED_TWIN = {"fused_small16_packed": "fused_small16"}
CONNECT = {"fused_medium_swf": {"acc": "out"}}
LINK_OPTIONS = {"fused_small_mr": dict(min_registers=True)}
# fused_sw_splitk's contracts say order = "any" (session 12): the build links it grouped:8 (session 17), so does this
TILE_ORDER = {"fused_sw_splitk": "grouped:8", "fused_pp_g8": "grouped:8"}
SCHEDULE = {"fused_sw_splitk": "split-k", "fused_small_sk": "stream-k"}
GUARD_ROWS = 64

failures = []
checked = 0


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, flush=True)


def expect_raises(exc, fn, what):
    try:
        fn()
    except exc as e:
        print(f"  ok: {what} -> {type(e).__name__}: {str(e).splitlines()[0][:110]}")
        return
    except Exception as e:  # noqa: BLE001
        fail(f"{what}: raised {type(e).__name__} ({e}), expected {exc.__name__}")
        return
    fail(f"{what}: no error raised, expected {exc.__name__}")


def reference(X, W):
    torch.backends.cuda.matmul.allow_tf32 = False
    Xf = X.float()
    G = Xf @ W[:N_INTER].float().t()
    U = Xf @ W[N_INTER:].float().t()
    return G, U, torch.nn.functional.silu(G) * U


def compare(label, Hbuf, M, X, W):
    """Checks Hbuf[:M] against the reference and the guard rows; returns (max abs, rel L2)."""
    global checked
    checked += 1
    H = Hbuf[:M].float()
    G, U, ref = reference(X, W)
    nonfinite = int((~torch.isfinite(H)).sum())
    guard_written = int((~torch.isnan(Hbuf[M:].float())).sum())
    err = (H - ref).abs()
    err = torch.where(torch.isfinite(err), err, torch.full_like(err, float("inf")))
    tol = 2.0 ** -6 * (torch.nn.functional.silu(G) * U).abs() + 2.0 ** -7 * U.abs() + 1e-3
    over = int((err > tol).sum())
    max_abs = float(err.max())
    finite = torch.isfinite(H)
    rel = float(torch.linalg.vector_norm(torch.where(finite, H - ref, torch.zeros_like(H))) / torch.linalg.vector_norm(ref))
    worst = float((err / tol).max())
    ok = nonfinite == 0 and guard_written == 0 and over == 0 and rel <= 1e-2
    print(f"  {label}: max abs err {max_abs:.3e}, rel L2 err {rel:.3e}, worst err/tol {worst:.3f}, "
          f"over tolerance {over}, unwritten/NaN {nonfinite}, guard rows written {guard_written}: {'OK' if ok else 'FAIL'}",
          flush=True)
    if not ok:
        fail(f"{label}: max abs {max_abs:.3e}, rel {rel:.3e}, {over} over tolerance, {nonfinite} NaN, {guard_written} guard")
    return max_abs, rel


_packed = {}


def packed_weight(k, W, gemm=False):
    """W packed by the gu_pack_w of k's own cubin (gu_loader_packed.cu), for the fused gate/up
    pairing (n_step = tile_n, b_stride = I) or, gemm=True, the plain GEMM's (2 tile_n, tile_n);
    once per cubin and pairing, its header and every data element checked."""
    tn, tk = k.fact("tile_n"), k.fact("tile_k")
    n_step, b_stride = (2 * tn, tn) if gemm else (tn, N_INTER)
    key = (k.cubin_path, gemm)
    if key not in _packed:
        out = torch.full((32768 + math.ceil(N_INTER / tn) * (K_HIDDEN // tk) * 2 * tn * tk,), float("nan"), device="cuda",
                         dtype=torch.bfloat16)  # a 64 KB header, then the data
        pack = k.function("gu_pack_w", ["ptr", "u32", "u32", "u32", "u32", "u32", "ptr", "u64"])  # the same cubin's pack
        pack.launch(264, 256, W, W.shape[0], K_HIDDEN, N_INTER, n_step, b_stride, out, out.numel() * 2)
        torch.cuda.synchronize()
        pack.close()
        head = out[:20].view(torch.int32).tolist()  # the header's first 10 words (the rest of its 64 KB is padding)
        data = (out.numel() - 32768) * 2
        want = [0x32574B50, tn, tk, K_HIDDEN, N_INTER, n_step, b_stride, W.shape[0], data & 0xFFFFFFFF, data >> 32]
        if head != want:
            fail(f"{k.cubin_path}: gu_pack_w's header is {head}, expected {want}")
        if torch.isnan(out[32768:].float()).any():
            fail(f"{k.cubin_path}: gu_pack_w left packed elements unwritten")
        _packed[key] = out
    return _packed[key]


def out_stage_rows(map_path) -> int:
    """The rows of the stage the TMA store takes: "tensor tile bf16[RxC]" under the link map's pipe
    whose consumer is tma_store (the SwiGLU's "out", or the main loop's own stage)."""
    store_pipe = False
    for line in Path(map_path).read_text().splitlines():
        if line.startswith("  ") and len(line) > 2 and line[2] != " ":
            store_pipe = False  # the next pipe
        if line.startswith("    consumers: "):
            store_pipe = "tma_store" in line
        if store_pipe and "tensor tile bf16[" in line:
            return int(line.split("tensor tile bf16[")[1].split("x")[0])
    raise ValueError(f"{map_path}: no pipe into tma_store with a tensor tile")


def launch_params(k, X, W, H):
    """The kernel's params: x_map and w_map as the tensors themselves (the kernel builds each map with
    the box its link gives it), out_map through Kernel.tensor_map (the link's box, l2 promotion none)."""
    M = X.shape[0]
    p = dict(x_map=X, out_map=k.tensor_map("out_map", H, l2_promotion="none"), K=K_HIDDEN, M=M, N=N_INTER)
    if "w_packed" in k.params:  # the loader reads W packed (its row pairing is in the packing)
        p["w_packed"] = packed_weight(k, W)
    else:
        p["w_map"] = W
    p.update(n_step=k.fact("tile_n"), b_stride=N_INTER)
    return p


def grid_of(k, M, sms):
    tiles = math.ceil(M / k.fact("tile_m")) * math.ceil(N_INTER / k.fact("tile_n"))
    return min(sms, tiles)


def main():
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    print(f"device: {props.name}, {sms} SMs; torch {torch.__version__}; python {sys.version.split()[0]}")
    gen = torch.Generator(device="cuda").manual_seed(1234)
    W = (torch.randn(2 * N_INTER, K_HIDDEN, device="cuda", generator=gen) * 0.02).to(torch.bfloat16)
    tmp = tempfile.TemporaryDirectory()

    for name, (contracts, Ms) in VARIANTS.items():
        print(f"== {name}")
        cubin, map_path = QO / f"{name}.cubin", QO / f"{name}.map"
        # 1. link from Python
        try:
            t0 = time.perf_counter()
            out_cubin, out_map = Path(tmp.name) / f"{name}.cubin", Path(tmp.name) / f"{name}.map"
            opts = dict(LINK_OPTIONS.get(name, {}))
            if name in SCHEDULE:
                opts["tile_schedule"] = SCHEDULE[name]
            if name in TILE_ORDER:
                opts["tile_order"] = TILE_ORDER[name]
            if name in CONNECT:
                opts["connect"] = CONNECT[name]
            r = pipelink.link(contracts, output=out_cubin, map=out_map, library_dirs=[QO], **opts)
            if name in SCHEDULE and f"{SCHEDULE[name]} (--tile-schedule)" not in r.map:
                fail(f"{name}: the map does not show the {SCHEDULE[name]} schedule")
            dt = time.perf_counter() - t0
            print(f"  linked from Python in {dt:.1f} s: {len(r.cubin)} bytes, {r.threads} threads, {r.smem_bytes} B smem, "
                  f"{len(r.warnings)} warnings", end="")
            if name in LINK_OPTIONS:  # no build cubin of this link: check what the option did instead
                cap = next((ln for ln in r.map.splitlines() if "register-cap" in ln), "")
                print(f"; {cap.strip()}")
                if "register-cap 136  (--min-registers" not in cap or "registers 136 per thread (cap 136)" not in r.map:
                    fail(f"{name}: the map does not show the --min-registers entry cap of 136 that ptxas kept")
            else:
                same = cubin.is_file() and cubin.read_bytes() == r.cubin
                print(f"; {'identical to' if same else 'DIFFERENT from'} the build's {cubin.name}")
                if not same:
                    fail(f"{name}: the Python-linked cubin differs from the build's {cubin}")
            cubin, map_path = out_cubin, out_map
        except pipelink.LinkError as e:
            fail(f"{name}: link from Python refused:\n{e.text}")
            print(f"  falling back to the build's {cubin}")
        # 2. load and launch
        k = pipelink.Kernel(cubin, map_path)
        # the link's out_map box is the stage the store takes (the map's pipe into tma_store)
        rows = out_stage_rows(map_path)
        if k.boxes.get("out_map", {}).get("rows") != rows:
            fail(f"{name}: the link's out_map box {k.boxes.get('out_map')} is not the {rows}-row stage its store takes")
        print(f"  {k.name}: {k.threads} threads, {k.smem_bytes} B smem, tile {k.fact('tile_m')}x{k.fact('tile_n')}, "
              f"params {k.params}")
        if (k.workspace_stride > 0) != (name in SCHEDULE):
            fail(f"{name}: workspace_stride {k.workspace_stride}, but the link is {SCHEDULE.get(name, 'data-parallel')}")
        if name in SCHEDULE:
            k.reserve_workspace(sms)  # allocated ahead (a capture could not); launches below reuse it
            print(f"  partials workspace: {k.workspace_stride} bytes per block, reserved for {sms} blocks")
        for M in Ms:
            X = torch.randn(M, K_HIDDEN, device="cuda", generator=gen).to(torch.bfloat16)
            Hbuf = torch.full((M + GUARD_ROWS, N_INTER), float("nan"), device="cuda", dtype=torch.bfloat16)
            H = Hbuf[:M]
            grid = grid_of(k, M, sms)
            k.launch(grid, **launch_params(k, X, W, H))
            torch.cuda.synchronize()
            compare(f"M={M} eager (grid {grid})", Hbuf, M, X, W)
            if name in PACKED_TWIN:  # the packed stage's bytes are the TMA boxes': the same H, bit for bit
                twin = pipelink.Kernel(QO / f"{PACKED_TWIN[name]}.cubin", QO / f"{PACKED_TWIN[name]}.map")
                Tbuf = torch.full_like(Hbuf, float("nan"))
                twin.launch(grid_of(twin, M, sms), **launch_params(twin, X, W, Tbuf[:M]))
                torch.cuda.synchronize()
                same = torch.equal(Hbuf.view(torch.int16), Tbuf.view(torch.int16))
                print(f"  M={M} {'bit-identical to' if same else 'DIFFERS from'} {PACKED_TWIN[name]} (W read by TMA boxes)")
                if not same:
                    fail(f"{name} M={M}: H differs from {PACKED_TWIN[name]}'s: the packed layout is not the stage TMA writes")
                twin.close()
                del Tbuf
            # 3. the runtime's tile count and persistent grid (from the manifest's tiles line)
            tiles = math.ceil(M / k.fact("tile_m")) * math.ceil(N_INTER / k.fact("tile_n"))
            if k.tile_count() != tiles:
                fail(f"{name} M={M}: tile_count() = {k.tile_count()}, expected {tiles}")
            pg = k.persistent_grid()
            bps = LINK_OPTIONS.get(name, {}).get("blocks_per_sm", 1)
            resident = sms * bps
            want = (resident if name in SCHEDULE else min(tiles, resident) if bps > 1
                    else math.ceil(tiles / math.ceil(tiles / resident)))
            if pg != want:
                fail(f"{name} M={M}: persistent_grid() = {pg}, expected {want} ({tiles} tiles, {resident} resident blocks)")
            if pg != grid and name not in SCHEDULE:  # data-parallel: the same tiles, by fewer blocks
                first = Hbuf.clone()
                Hbuf.fill_(float("nan"))
                k.launch(pg)
                torch.cuda.synchronize()
                same = torch.equal(Hbuf.view(torch.int16), first.view(torch.int16))
                print(f"  M={M} persistent grid {pg}: {'bit-identical to' if same else 'DIFFERS from'} grid {grid}")
                if not same:
                    fail(f"{name} M={M}: the launch on persistent_grid() = {pg} blocks differs from the one on {grid}")
            else:
                print(f"  M={M} persistent grid {pg} ({tiles} tiles)")
            if name not in SCHEDULE:  # k.launch() without a grid takes persistent_grid()
                first = Hbuf.clone()
                Hbuf.fill_(float("nan"))
                k.launch()
                torch.cuda.synchronize()
                if not torch.equal(Hbuf.view(torch.int16), first.view(torch.int16)):
                    fail(f"{name} M={M}: k.launch() without a grid differs from the launch on {grid}")

            if M != Ms[0]:
                continue
            # 4. the same launch in a CUDA graph
            eager = Hbuf.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                k.launch(grid)  # warm-up on a side stream, as torch.cuda.graph asks
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                k.launch(grid)
            Hbuf.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            same = torch.equal(Hbuf.view(torch.int16), eager.view(torch.int16))
            print(f"  M={M} graph replay: {'bit-identical to' if same else 'DIFFERS from'} the eager launch", flush=True)
            if not same:
                fail(f"{name} M={M}: graph replay differs from the eager launch")
            X.copy_(torch.randn(M, K_HIDDEN, device="cuda", generator=gen).to(torch.bfloat16))
            Hbuf.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            compare(f"M={M} graph replay on new X", Hbuf, M, X, W)
            reps = 20
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                graph.replay()
            e1.record()
            torch.cuda.synchronize()
            print(f"  M={M} graph replay: {e0.elapsed_time(e1) / reps:.3f} ms per replay ({reps} replays)")
            del graph

        # 5. the type checks
        if name == "fused":
            X = torch.randn(64, K_HIDDEN, device="cuda", generator=gen).to(torch.bfloat16)
            tm_, tk_ = k.fact("tile_m"), k.fact("tile_k")
            expect_raises(ValueError, lambda: k.set(x_map=pipelink.tensor_map(X, box=(tm_ // 2, tk_), swizzle="128B")),
                          "a tensor map whose box is not the link's")
            expect_raises(ValueError, lambda: k.set(x_map=pipelink.tensor_map(X, box=(tm_, tk_), swizzle="none")),
                          "a tensor map whose swizzle is not the link's")
            half = pipelink.tensor_map(X, box=(tm_ // 2, tk_), swizzle="128B")

            def _rebox():
                half.box = (tm_, tk_)  # would make the check pass while the encoded map copies half the rows
            expect_raises(AttributeError, _rebox, "a tensor map's box overwritten after it was made")
            expect_raises(ValueError, lambda: k.set(x_map=half), "the half-box map, after the refused overwrite")
            expect_raises(TypeError, lambda: k.set(x_map=X.float()), "an fp32 tensor for a bf16 tensormap param")
            expect_raises(TypeError, lambda: k.tensor_map("M", X), "tensor_map of a u32 param")
            expect_raises(ValueError, lambda: k.set(M=-1), "negative u32")
            expect_raises(ValueError, lambda: k.set(M=1 << 32), "u32 overflow")
            expect_raises(TypeError, lambda: k.set(M=1.5), "float for a u32")
            expect_raises(TypeError, lambda: k.set(nosuch=1), "unknown param")
            expect_raises(TypeError, lambda: pipelink.tensor_map(X.float(), box=(64, 64)), "fp32 tensor map")
            expect_raises(ValueError, lambda: pipelink.tensor_map(X.t(), box=(64, 64)), "non-contiguous inner dim")
            expect_raises(ValueError, lambda: pipelink.tensor_map(X[:, 1:], box=(64, 64)), "misaligned base")
            expect_raises(ValueError, lambda: pipelink.tensor_map(X[0], box=(1, 64)), "1-D tensor")
            expect_raises(ValueError, lambda: pipelink.tensor_map(X, box=(64, 128), swizzle="128B"), "box wider than swizzle")
            fresh = pipelink.Kernel(cubin, map_path)
            expect_raises(TypeError, lambda: fresh.launch(1, M=64), "launch with params unset")
            fresh.close()
        torch.cuda.synchronize()
        k.close()

    # The plain GEMM's row pairing (n_step = 2 tile_n, b_stride = tile_n) and a 128-row tile: the
    # packed GEMM kernels against their TMA twins with the same main loop and stages, GU bit for bit.
    for packed_name, tma_name in (("gemm_small16_packed", "gemm_small16"), ("gemm_medium_packed", "gemm_medium_s4")):
        if not (QO / f"{packed_name}.cubin").is_file() or not (QO / f"{tma_name}.cubin").is_file():
            fail(f"{packed_name} or {tma_name} was not built")
            continue
        print(f"== {packed_name} against {tma_name} (the plain GEMM's pairing)")
        kp = pipelink.Kernel(QO / f"{packed_name}.cubin", QO / f"{packed_name}.map")
        kt = pipelink.Kernel(QO / f"{tma_name}.cubin", QO / f"{tma_name}.map")
        tm, tn, tk = kp.fact("tile_m"), kp.fact("tile_n"), kp.fact("tile_k")
        buf = packed_weight(kp, W, gemm=True)
        for M in (16, 200):
            X = torch.randn(M, K_HIDDEN, device="cuda", generator=gen).to(torch.bfloat16)
            outs = []
            for k in (kp, kt):
                GU = torch.full((M, 2 * N_INTER), float("nan"), device="cuda", dtype=torch.bfloat16)
                p = dict(x_map=pipelink.tensor_map(X, box=(tm, tk), swizzle="128B", l2_promotion="256B"),
                         out_map=pipelink.tensor_map(GU, box=(tm, 2 * tn), swizzle="none", l2_promotion="none"),
                         K=K_HIDDEN, M=M, N=N_INTER, n_step=2 * tn, b_stride=tn)
                if k is kp:
                    p["w_packed"] = buf
                else:
                    p["w_map"] = pipelink.tensor_map(W, box=(tn, tk), swizzle="128B", l2_promotion="256B")
                k.launch(**p)
                torch.cuda.synchronize()
                outs.append(GU)
            same = torch.equal(outs[0].view(torch.int16), outs[1].view(torch.int16))
            written = not torch.isnan(outs[0].float()).any()
            ref = (X.float() @ W.float().t())
            err = ((outs[0].float() - ref).abs() / (ref.abs() + 1e-2)).max().item()
            print(f"  M={M}: GU {'bit-identical to' if same else 'DIFFERS from'} {tma_name}'s; all written {written}; "
                  f"max rel err vs fp32 {err:.2e}")
            if not (same and written):
                fail(f"{packed_name} M={M}: GU differs from {tma_name}'s or is not written in full")
        kp.close()
        kt.close()

    # The checked build of fused_small16_packed: with its own pack it computes what the release
    # build does, bit for bit; with a pack made for the plain GEMM's row pairing it must trap (in a
    # subprocess: a trap ends the CUDA context).
    ck = QO / "checked" / "fused_small16_packed.cubin"
    if ck.is_file():
        print("== fused_small16_packed, checked build (PL_CHECKED)")
        import subprocess
        k = pipelink.Kernel(ck, ck.with_suffix(".map"))
        rel = pipelink.Kernel(QO / "fused_small16_packed.cubin", QO / "fused_small16_packed.map")
        X = torch.randn(16, K_HIDDEN, device="cuda", generator=gen).to(torch.bfloat16)
        Hc = torch.full((16, N_INTER), float("nan"), device="cuda", dtype=torch.bfloat16)
        Hr = torch.full_like(Hc, float("nan"))
        k.launch(grid_of(k, 16, sms), **launch_params(k, X, W, Hc))
        rel.launch(grid_of(rel, 16, sms), **launch_params(rel, X, W, Hr))
        torch.cuda.synchronize()
        same = torch.equal(Hc.view(torch.int16), Hr.view(torch.int16))
        print(f"  own pack: {'bit-identical to' if same else 'DIFFERS from'} the release build")
        if not same:
            fail("fused_small16_packed checked build: H differs from the release build's")
        k.close()
        rel.close()
        r = subprocess.run([sys.executable, str(SRC / "tests" / "gpu" / "packed_checked.py"), str(BUILD)],
                           capture_output=True, text=True, timeout=120)
        out = (r.stdout + r.stderr).strip()
        print("  a pack for the plain GEMM's pairing: " + (out.splitlines()[-1] if out else "(no output)"))
        if "w_packed was not packed for this launch: header word 5" in r.stdout:
            print("  the loader's message reached the host: header word 5 (n_step)")
        refused = any(ln.startswith("refused:") for ln in r.stdout.splitlines())
        if r.returncode != 0 or not refused:
            fail(f"fused_small16_packed checked build: a mismatched pack was not refused (rc {r.returncode}):\n{out}")
        elif "w_packed was not packed for this launch: header word 5" not in r.stdout:
            # a trap for another reason (another check, a pipe timeout) would also end the launch
            fail(f"fused_small16_packed checked build: refused, but not by the pack's header check (word 5, n_step):\n{out}")
    else:
        fail(f"{ck} was not built")

    # Kernel.function takes the pack from the module the Kernel loaded, not from the cubin file as
    # it is now: a copy of the cubin, loaded, then overwritten, still yields its gu_pack_w, and the
    # pack writes the header of this link's tile; closing the Kernel closes the function.
    print("== Kernel.function after the cubin file changed")
    import shutil
    with tempfile.TemporaryDirectory() as td:
        src = QO / "fused_small16_packed.cubin"
        cp = Path(td) / "k.cubin"
        shutil.copyfile(src, cp)
        k = pipelink.Kernel(cp, src.with_suffix(".map"))
        cp.write_bytes(b"not a cubin")
        pack = k.function("gu_pack_w", ["ptr", "u32", "u32", "u32", "u32", "u32", "ptr", "u64"])
        tn, tk = k.fact("tile_n"), k.fact("tile_k")
        out = torch.zeros(32768 + math.ceil(N_INTER / tn) * (K_HIDDEN // tk) * 2 * tn * tk, device="cuda", dtype=torch.bfloat16)
        pack.launch(264, 256, W, W.shape[0], K_HIDDEN, N_INTER, tn, N_INTER, out, out.numel() * 2)
        torch.cuda.synchronize()
        head = out[:4].view(torch.int32).tolist()
        print(f"  header {head[0]:#x} tile_n {head[1]}")
        if head != [0x32574B50, tn]:
            fail(f"Kernel.function after the file changed: header {head}, expected [0x32574b50, {tn}]")
        k.close()
        expect_raises(ValueError, lambda: pack.launch(1, 32, W, 0, 0, 0, 0, 0, out, 0), "a borrowed function after its Kernel closed")

    if checked == 0:
        fail("no kernel was checked")
    print(f"\n{'PASS' if not failures else 'FAIL'}: {checked} outputs checked, {len(failures)} failures")
    return 0 if not failures else 1


if __name__ == "__main__":
    try:
        rc = main()
    except Exception as e:  # noqa: BLE001 — any error is a failure, with its traceback
        import traceback
        traceback.print_exc()
        print(f"FAIL: {type(e).__name__}: {e}")
        rc = 1
    sys.exit(rc)
