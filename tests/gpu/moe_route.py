#!/usr/bin/env python3
"""gpu.moe_route: routing.cubin's moe_route_s (the MoE routing in one launch) against the three
kernels it replaces (moe_topk_s, moe_offsets_pad_s, moe_scatter) and against torch.topk.

For T in 1, 7, 64, 513, 4096, 16384 tokens, 128 experts, top-8, expert rows padded to 64 and to
128 (tile_m = align), on fresh random fp32 logits each time:
  - torch: each token's 8 experts (as a set) are torch.topk's of the logits, and its weights the
    softmax over those 8 (|err| <= 1e-6);
  - the three kernels and moe_route_s on the same logits: topk_expert and topk_weight bit-equal;
    offsets, the total and the tile experts equal; every expert's row range holds the same
    (token, weight) pairs (sorted: the slots are taken by atomics, so a row's place within its
    range may differ); every padding row token -1 and weight 0 (poisoned before); the counters
    zero afterwards, sync[0] zero and sync[1] advanced by one per launch;
  - moe_route_s on 1 block, on the SMs' count and on ceil(T / 16) blocks capped there, three launches
    in a row, and in a CUDA graph replayed twice.

    PYTHONPATH=build/python python3 tests/gpu/moe_route.py BUILD_DIR

Exit status: 0 if every check passed; 1 if any failed; 77 with "skipped: no GPU" when PyTorch has
no CUDA device."""
import sys
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
sys.path.insert(0, str(BUILD / "python"))
import pipelink  # noqa: E402

E, K, STRIDE = 128, 8, 32
CUBIN = BUILD / "examples" / "moe" / "routing.cubin"
dev = "cuda"
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


class Buffers:
    def __init__(self, T, align):
        i32, f32 = dict(dtype=torch.int32, device=dev), dict(dtype=torch.float32, device=dev)
        rows = T * K + E * (align - 1)
        self.topk_e, self.topk_w, self.topk_pos = torch.empty(T * K, **i32), torch.empty(T * K, **f32), torch.empty(T * K, **i32)
        self.offsets, self.total = torch.empty(E, **i32), torch.empty(1, **i32)
        self.tile_expert = torch.empty(rows // 64 + 1, **i32)
        self.row_token, self.row_weight = torch.empty(rows, **i32), torch.empty(rows, **f32)

    def poison(self):
        for t in (self.topk_e, self.topk_pos, self.offsets, self.total, self.tile_expert):
            t.fill_(-7)
        self.topk_w.fill_(float("nan"))
        self.row_token.fill_(0)  # an in-range token: only the padding-row check sees a row left unwritten
        self.row_weight.fill_(1.0)


def expert_rows(b, e):
    """Expert e's routed rows, (token, weight) sorted, and whether its padding rows are token -1 / weight 0."""
    lo = int(b.offsets[e])
    hi = int(b.offsets[e + 1]) if e + 1 < E else int(b.total)
    tok, w = b.row_token[lo:hi], b.row_weight[lo:hi]
    routed = tok >= 0
    pad_ok = bool((w[~routed] == 0).all()) and bool((tok[~routed] == -1).all())
    pairs = sorted(zip(tok[routed].tolist(), w[routed].tolist()))
    return pairs, pad_ok


def main() -> int:
    if not CUBIN.is_file():
        print(f"FAIL: {CUBIN} was not built")
        return 1
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    f_topk = pipelink.Function(CUBIN, "moe_topk_s", ["ptr", "u32", "u32", "ptr", "u32", "ptr", "ptr", "ptr"])
    f_off = pipelink.Function(CUBIN, "moe_offsets_pad_s", ["ptr", "u32", "u32", "u32", "u32", "ptr", "ptr", "ptr", "ptr", "ptr"])
    f_sc = pipelink.Function(CUBIN, "moe_scatter", ["u32", "ptr", "ptr", "ptr", "ptr", "ptr", "ptr"])
    f_route = pipelink.Function(CUBIN, "moe_route_s", ["ptr", "u32", "u32", "ptr", "u32", "u32", "u32", "ptr", "ptr", "ptr",
                                                      "ptr", "ptr", "ptr", "ptr", "ptr", "ptr"])
    counts3 = torch.zeros(E * STRIDE, dtype=torch.int32, device=dev)
    counts1 = torch.zeros(E * STRIDE, dtype=torch.int32, device=dev)
    sync = torch.zeros(2, dtype=torch.int32, device=dev)
    launches = 0
    torch.manual_seed(15)

    def three(logits, T, align, b):
        f_topk.launch((T * 32 + 255) // 256, 256, logits, T, E, counts3, STRIDE, b.topk_e, b.topk_w, b.topk_pos)
        f_off.launch(1, 512, counts3, STRIDE, E, align, align, b.offsets, b.tile_expert, b.total, b.row_token, b.row_weight)
        f_sc.launch((T * K + 255) // 256, 256, T, b.topk_e, b.topk_w, b.topk_pos, b.offsets, b.row_token, b.row_weight)

    def one(logits, T, align, b, grid):
        f_route.launch(grid, 512, logits, T, E, counts1, STRIDE, align, align, b.topk_e, b.topk_w, b.topk_pos, b.offsets,
                       b.tile_expert, b.total, b.row_token, b.row_weight, sync)

    def compare(tag, logits, T, align, ref, b):
        w_t, i_t = torch.topk(torch.softmax(logits, -1), K, dim=-1)
        w_t = w_t / w_t.sum(-1, keepdim=True)
        e1 = b.topk_e.view(T, K).long()
        same_set = bool((torch.sort(e1, -1).values == torch.sort(i_t, -1).values).all())
        check(same_set, f"{tag}: every token's 8 experts are torch.topk's")
        w_err = float((torch.gather(w_t, 1, torch.argsort(i_t, -1)) -
                       torch.gather(b.topk_w.view(T, K), 1, torch.argsort(e1, -1))).abs().max())
        check(w_err <= 1e-6, f"{tag}: weights = the softmax over the 8 (max |err| {w_err:.2e})")
        check(torch.equal(b.topk_e, ref.topk_e) and torch.equal(b.topk_w, ref.topk_w), f"{tag}: topk_expert, topk_weight bit-equal")
        check(torch.equal(b.offsets, ref.offsets) and torch.equal(b.total, ref.total), f"{tag}: offsets and total equal")
        tiles = int(ref.total) // align
        check(torch.equal(b.tile_expert[:tiles], ref.tile_expert[:tiles]), f"{tag}: the {tiles} tile experts equal")
        rows_ok = pad_ok = True
        for e in range(E):
            p1, ok1 = expert_rows(b, e)
            p3, ok3 = expert_rows(ref, e)
            rows_ok &= p1 == p3
            pad_ok &= ok1 and ok3
        check(rows_ok, f"{tag}: every expert's rows hold the same (token, weight) pairs")
        check(pad_ok, f"{tag}: every padding row token -1, weight 0")
        n_routed = int((b.row_token[:int(b.total)] >= 0).sum())
        check(n_routed == T * K, f"{tag}: {n_routed} routed rows = T * 8")
        check(int(counts1.abs().sum()) == 0 and int(counts3.abs().sum()) == 0, f"{tag}: counters zero afterwards")
        check(int(sync[0]) == 0 and int(sync[1]) == launches, f"{tag}: ticket 0, generation {int(sync[1])} = launches {launches}")

    for align in (64, 128):
        for T in (1, 7, 64, 513, 4096, 16384):
            ref, b = Buffers(T, align), Buffers(T, align)
            for grid in sorted({1, min(sms, (T + 15) // 16), sms}):
                for rep in range(3):
                    logits = torch.randn(T, E, device=dev) * 2.0
                    ref.poison()
                    b.poison()
                    three(logits, T, align, ref)
                    one(logits, T, align, b, grid)
                    launches += 1
                    torch.cuda.synchronize()
                    compare(f"T = {T}, align {align}, grid {grid}, launch {rep + 1}", logits, T, align, ref, b)
            # captured in a CUDA graph, replayed twice on new logits copied into the captured buffer
            logits = torch.randn(T, E, device=dev)
            grid = min(sms, (T + 15) // 16)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=s):
                    one(logits, T, align, b, grid)
            torch.cuda.current_stream().wait_stream(s)
            for rep in range(2):
                logits.copy_(torch.randn(T, E, device=dev))
                ref.poison()
                b.poison()
                three(logits, T, align, ref)
                g.replay()
                launches += 1
                torch.cuda.synchronize()
                compare(f"T = {T}, align {align}, CUDA graph replay {rep + 1}", logits, T, align, ref, b)
            del g
    print(f"\n{'PASS' if not failures else 'FAIL'}: {len(failures)} failed checks, {launches} moe_route_s launches")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
