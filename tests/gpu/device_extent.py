#!/usr/bin/env python3
"""ctest gpu.device_extent: a tile extent read from device memory ([tiles] device_extent).

The component of tests/golden/tiles-extent-device (and its pdl_wait = "own" twin) counts the tiles
the link's tile sequence gives it and adds the count to `out`; M is the address of an int32 that
a torch kernel writes just before each launch. Each is linked from Python without and with --pdl,
launched after M is rewritten (0, 1, 64, 65, 1000, 4096 rows; N = 640 columns, 64 x 64 tiles),
eagerly and in a CUDA graph whose captured copy reads M's new value from a tensor changed between
replays. The count must be ceil(M / 64) * ceil(N / 64) every time: the kernel reads M when it runs.

    PYTHONPATH=build/python python3 tests/gpu/device_extent.py [BUILD_DIR]

Exit status 0 if every check passed, 1 if one failed, 77 with "skipped: no GPU" without CUDA.
"""
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]

try:
    import torch
except ImportError:
    print("skipped: no GPU (no PyTorch)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no GPU")
    sys.exit(77)
import pipelink  # noqa: E402

N, TILE = 640, 64
fails = 0
with tempfile.TemporaryDirectory() as tmp:
    t = Path(tmp)
    for case in ("tiles-extent-device", "tiles-extent-device-own-wait"):
        d = SRC / "tests" / "golden" / case
        pipelink.compile(d / "x.cu", t / "x.ltoir")
        for pdl in (False, True):
            name = f"{case}{' --pdl' if pdl else ''}"
            cubin, mp = t / f"{case}{int(pdl)}.cubin", t / f"{case}{int(pdl)}.map"
            pipelink.link([d / "x.toml"], output=cubin, map=mp, library_dirs=[t], pdl=pdl)
            k = pipelink.Kernel(cubin, mp)
            M = torch.zeros(1, dtype=torch.int32, device="cuda")
            src = torch.zeros(1, dtype=torch.int32, device="cuda")
            out = torch.zeros(1, dtype=torch.int32, device="cuda")
            k.set(M=M, out=out, N=N)
            for grid in (1, 7):
                for m in (0, 1, 64, 65, 1000, 4096):
                    want = -(-m // TILE) * -(-N // TILE)
                    out.zero_()
                    M.fill_(m)  # a kernel writes M just before the launch
                    k.launch(grid)
                    torch.cuda.synchronize()
                    got = int(out.item())
                    ok = got == want
                    fails += not ok
                    print(f"  {name:38s} eager grid {grid} M {m:5d}: {got:6d} tiles (want {want}): {'OK' if ok else 'FAIL'}")
            # In a CUDA graph: the captured copy writes M from src, which changes between replays.
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                M.copy_(src)
                k.launch(7)
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            with torch.cuda.graph(g):
                M.copy_(src)
                k.launch(7)
            for m in (3, 129, 0, 2000):
                src.fill_(m)
                out.zero_()
                g.replay()
                torch.cuda.synchronize()
                want = -(-m // TILE) * -(-N // TILE)
                got = int(out.item())
                ok = got == want
                fails += not ok
                print(f"  {name:38s} graph         M {m:5d}: {got:6d} tiles (want {want}): {'OK' if ok else 'FAIL'}")
            # The extent's param takes an int32 tensor or an aligned address only.
            for bad in (torch.zeros(1, dtype=torch.float32, device="cuda"), 0, 4098):
                try:
                    k.set(M=bad)
                    print(f"  {name}: M = {bad!r} accepted: FAIL")
                    fails += 1
                except (TypeError, ValueError):
                    pass
            k.close()
print("PASS" if fails == 0 else f"FAIL: {fails} checks")
sys.exit(0 if fails == 0 else 1)
