#!/usr/bin/env python3
"""gpu.moe_packed_checked: the checked build (PL_CHECKED) of the MoE down projection that reads the
experts' weights packed (build/examples/moe/checked/down_store_dev_sw_packed.cubin).

  1. The Qwen3-30B-A3B layer at 512 tokens (bench/moe/bench_torch.py's PipeLinkMoE: the routing,
     the packed gate/up, the packed down_store, the top-k sum) with the release down_store, then
     with the checked one, each with its own cubin's pack: Y must be equal bit for bit, and within
     tolerance of an fp32 reference of the same routing.
  2. In a subprocess (a trap ends the CUDA context): the checked down_store launched with the
     gate/up weights' pack. Its loader reads the pack's header, finds K, N and the row pairing of
     another weight, prints which header word differs and traps: a launch failure, no output.

    PYTHONPATH=build/python python3 tests/gpu/moe_packed_checked.py BUILD_DIR [--mismatch]

Exit status: 0 if every check passed; 1 if any failed; 77 with "skipped: no GPU" when PyTorch has
no CUDA device."""
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
BUILD = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else SRC / "build"
MISMATCH = "--mismatch" in sys.argv[2:]

try:
    import torch
except ImportError:
    print("skipped: no GPU (PyTorch is not installed)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no GPU")
    sys.exit(77)
sys.path.insert(0, str(BUILD / "python"))
sys.path.insert(0, str(SRC / "bench" / "moe"))
import pipelink  # noqa: E402
import bench_torch as moe  # noqa: E402  (bench/moe: the layer's host side, shared with the bench)

KD = BUILD / "examples" / "moe"
CHECKED = KD / "checked" / "down_store_dev_sw_packed.cubin"
T = 512


def main() -> int:
    if not CHECKED.is_file():
        print(f"FAIL: {CHECKED} was not built")
        return 1
    torch.manual_seed(1234)
    dev = moe.dev
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    Wr32 = (torch.randn(moe.E, moe.H, dtype=torch.bfloat16, device=dev) * 0.05).float()
    Wgu = torch.randn(moe.E * 2 * moe.I, moe.H, dtype=torch.bfloat16, device=dev) * 0.03
    Wd = torch.randn(moe.E * moe.H, moe.I, dtype=torch.bfloat16, device=dev) * 0.03
    pl = moe.PipeLinkMoE(str(KD), Wgu, Wd, Wr32, T, sms)
    if False not in pl.pk:
        print("FAIL: the packed 128-row links (gate_up_dev_row_major_sw_packed, down_store_dev_sw_packed) were not built")
        return 1
    gu, ds_release = pl.pk[False]
    ds_checked = pipelink.Kernel(CHECKED, CHECKED.with_suffix(".map"))
    X = torch.randn(T, moe.H, dtype=torch.bfloat16, device=dev)

    if MISMATCH:
        # the gate/up weights' pack (K = 2048, N = 768, gate/up pairing) given to the down projection
        pl.pk[False] = (gu, ds_checked)
        pl.setup_best_packed(X, torch.empty(T, moe.H, dtype=torch.bfloat16, device=dev), False)
        ds_checked.set(w_packed=pl.packed(gu, "gu"))
        try:
            pl.layer_best_packed(X, pl.Y, False)
            torch.cuda.synchronize()
        except (RuntimeError, pipelink.CudaError) as e:  # the trap surfaces here, as a launch failure
            msg = str(e).splitlines()[0] if str(e) else ""
            if "launch failure" not in msg and "illegal instruction" not in msg:
                print(f"FAILED otherwise: {type(e).__name__}: {msg}", flush=True)
                return 1
            print(f"refused: {type(e).__name__}: {msg}", flush=True)
            return 0
        print("NOT refused: the checked loader read the gate/up weights' pack as the down projection's", flush=True)
        return 1

    ys = {}
    for name, ds in (("release", ds_release), ("checked", ds_checked)):
        pl.pk[False] = (gu, ds)
        Y = torch.full((T, moe.H), float("nan"), dtype=torch.bfloat16, device=dev)
        pl.setup_best_packed(X, Y, False)
        pl.layer_best_packed(X, Y, False)
        torch.cuda.synchronize()
        ys[name] = Y
    failures = []
    same = torch.equal(ys["release"].view(torch.int16), ys["checked"].view(torch.int16))
    print(f"own pack: Y of the checked build {'bit-identical to' if same else 'DIFFERS from'} the release build's")
    if not same:
        failures.append("the checked build's Y differs from the release build's")
    # against fp32 math of the same routing (moe.reference, as the bench checks it)
    w, idx = moe.route(X, Wr32)
    ref = moe.reference(X, Wgu, Wd, w, idx)
    err = (ys["checked"].float() - ref).abs()
    tol = ref.pow(2).mean().sqrt() / 16 + ref.abs() * 2 ** -6
    over = int((err > tol).sum())
    print(f"vs fp32 reference: {over} elements over |err| <= rms(ref)/16 + 2^-6 |ref|, worst err/tol "
          f"{float((err / tol).max()):.3f}, NaN {int(torch.isnan(ys['checked']).sum())}")
    if over or torch.isnan(ys["checked"]).any():
        failures.append(f"Y of the checked build: {over} elements over tolerance or unwritten")

    r = subprocess.run([sys.executable, __file__, str(BUILD), "--mismatch"], capture_output=True, text=True, timeout=300)
    out = (r.stdout + r.stderr).strip()
    print("the gate/up weights' pack: " + (out.splitlines()[-1] if out else "(no output)"))
    word = [ln for ln in r.stdout.splitlines() if "w_packed was not packed for this launch" in ln]
    if word:
        print("  the loader's message reached the host: " + word[0].strip())
    refused = any(ln.startswith("refused:") for ln in r.stdout.splitlines())
    if r.returncode != 0 or not refused:
        failures.append(f"a pack of another weight was not refused (rc {r.returncode}):\n{out}")
    elif "w_packed was not packed for this launch: header word 3 " not in r.stdout:
        # a trap for another reason (another check, a pipe timeout) would also end the launch
        failures.append(f"refused, but not by the pack's header check (word 3, K):\n{out}")
    for f in failures:
        print("FAIL:", f)
    print(f"\n{'PASS' if not failures else 'FAIL'}: {len(failures)} failures")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
