"""bench/common/bench.py — the Python side of the benchmark harness (bench/common/bench.h is the C++
side; both define the same statistics).

    timer = RoundRobin(rounds=20, warmup=3)
    samples = timer.run({"torch.mm": lambda: torch.mm(X, W.t()), "pipelink": lambda: k.launch(...)})
    s = stats(samples["pipelink"])            # median, q1, q3, min, max, spread
    r = paired_ratio(samples["pipelink"], samples["torch.mm"])   # per round; r["verdict"]
    c = tol_check(out, ref, atol=1e-3, rtol=2**-7)             # per element, worst element named
    g = capture_graph(lambda: k.launch(...))                    # warmed on a side stream, captured

Timer: rounds in which every contender runs once (or `reps` times back to back for short ones),
each between its own pair of CUDA events on the current stream, in an order shuffled each round
(random.Random(seed) per round, seed mixed with the round number; `seed` is an argument, recorded as
RoundRobin.seed, default: from the clock); a round is enqueued behind a GPU sleep (torch.cuda._sleep) long enough to cover the host's
enqueueing, so no launch latency lands between a run's events. Warm-up runs first.

Statistics: median = the middle sample (the mean of the two middle ones for an even count); q1, q3
by linear interpolation; spread = (q3 - q1) / (2 median), printed as ±%. A ratio a/b is taken per
round (paired samples): "faster" when its q3 < 1, "slower" when its q1 > 1, else "within noise".
"""
from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence


def _quantile(v: Sequence[float], q: float) -> float:
    if not v:
        return math.nan
    s = sorted(v)
    pos = q * (len(s) - 1)
    i = int(pos)
    return s[i] + (pos - i) * (s[i + 1] - s[i]) if i + 1 < len(s) else s[i]


def stats(v: Sequence[float]) -> Dict[str, float]:
    """n, median, q1, q3, min, max, spread (= (q3 - q1) / (2 median))."""
    if not v:
        return dict(n=0, median=math.nan, q1=math.nan, q3=math.nan, min=math.nan, max=math.nan, spread=math.nan)
    med = _quantile(v, 0.5)
    q1, q3 = _quantile(v, 0.25), _quantile(v, 0.75)
    return dict(n=len(v), median=med, q1=q1, q3=q3, min=min(v), max=max(v), spread=(q3 - q1) / (2 * med) if med else math.nan)


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> Dict[str, Any]:
    """a / b per round: stats and a verdict (faster: q3 < 1; slower: q1 > 1; else within noise)."""
    r = [x / y for x, y in zip(a, b) if y > 0]
    s = stats(r)
    verdict = "no samples" if not r else "faster" if s["q3"] < 1 else "slower" if s["q1"] > 1 else "within noise"
    return dict(s, verdict=verdict)


def fmt_ms(s: Mapping[str, float]) -> str:
    return f"{s['median']:.4f} ±{100 * s['spread']:.1f}%"


def fmt_ratio(r: Mapping[str, Any]) -> str:
    return f"{r['median']:.3f} [{r['q1']:.3f}, {r['q3']:.3f}] {r['verdict']}"


def round_order(names: Sequence[str], seed: int, r: int) -> List[str]:
    """The order of round r (0-based) under seed: a shuffle of names, independent of other rounds."""
    order = list(names)
    random.Random(f"{seed}:{r}").shuffle(order)
    return order


class RoundRobin:
    """The spin + round-robin timer on torch's current stream (see the module docstring)."""

    def __init__(self, rounds: int = 20, warmup: int = 3, target_ms: float = 0.0, max_reps: int = 64,
                 spin_ms: Optional[float] = None, seed: Optional[int] = None, sustain_ms: float = 0.0) -> None:
        self.rounds, self.warmup, self.target_ms, self.max_reps = rounds, warmup, target_ms, max_reps
        # > 0: before each timed region the contender also runs back to back, untimed, for about this
        # long, so that the region sees the clock its own power draw sustains (bench/common/bench.h,
        # TimerOptions::sustain_ms); 0: the clock the round's mix left.
        self.sustain_ms = sustain_ms
        self.pre: Dict[str, int] = {}
        self.seed = int(seed) if seed is not None else time.time_ns() % (1 << 62)  # the order shuffle's; record it
        self.spin_ms = spin_ms  # None: 1 ms + 0.1 ms per enqueued run
        self.reps: Dict[str, int] = {}

    def run(self, contenders: Mapping[str, Callable[[], Any]]) -> Dict[str, List[float]]:
        import torch
        names = list(contenders)
        ev = {n: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for n in names}
        for n in names:  # warm-up, each run timed: the estimate that sets reps
            est = []
            for _ in range(max(1, self.warmup)):
                a, b = ev[n]
                a.record()
                contenders[n]()
                b.record()
                b.synchronize()
                est.append(a.elapsed_time(b))
            t = stats(est)["median"]
            self.reps[n] = max(1, min(self.max_reps, math.ceil(self.target_ms / max(t, 1e-4)))) if self.target_ms > 0 else 1
            self.pre[n] = min(4096, math.ceil(self.sustain_ms / max(t, 1e-3))) if self.sustain_ms > 0 else 0
        runs = sum(self.reps.values())
        # Python enqueues slower than C++ (tens of us per launch; a torch pipeline of 20 ops, more)
        spin_ms = self.spin_ms if self.spin_ms is not None else 1.0 + 0.1 * runs
        cycles = int(spin_ms * 1e-3 * _sm_clock_hz())
        out: Dict[str, List[float]] = {n: [] for n in names}
        for r in range(self.rounds):
            torch.cuda._sleep(cycles)
            order = round_order(names, self.seed, r)
            for n in order:
                a, b = ev[n]
                for _ in range(self.pre[n]):  # untimed: the GPU runs them longer than Python takes to enqueue
                    contenders[n]()
                a.record()
                for _ in range(self.reps[n]):
                    contenders[n]()
                b.record()
            torch.cuda.synchronize()
            for n in names:
                a, b = ev[n]
                out[n].append(a.elapsed_time(b) / self.reps[n])
        return out


_SM_HZ: Optional[float] = None


def _sm_clock_hz() -> float:
    """The SM clock torch.cuda._sleep counts in (its maximum: the sleep then lasts at least as long
    as asked)."""
    global _SM_HZ
    if _SM_HZ is None:
        c = clocks(max_clock=True)
        _SM_HZ = (c.get("sm_max_mhz") or 1980.0) * 1e6
    return _SM_HZ


def clocks(max_clock: bool = False) -> Dict[str, Any]:
    """SM and memory clocks (MHz), temperature (C) and power (W) of GPU 0: NVML (pynvml) if
    importable, else an nvidia-smi query; {"source": "none"} if neither answers."""
    try:
        import pynvml  # nvidia-ml-py
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        c = dict(source="nvml", sm_mhz=pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                 mem_mhz=pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                 temp_c=pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                 power_w=pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0)
        if max_clock:
            c["sm_max_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)
        return c
    except Exception:  # noqa: BLE001 — fall back to nvidia-smi
        pass
    if shutil.which("nvidia-smi"):
        q = "clocks.sm,clocks.mem,temperature.gpu,power.draw" + (",clocks.max.sm" if max_clock else "")
        try:
            line = subprocess.run(["nvidia-smi", "-i", "0", f"--query-gpu={q}", "--format=csv,noheader,nounits"],
                                  capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
            v = [float(x) if x.strip().replace(".", "", 1).isdigit() else None for x in line.split(",")]
            c = dict(source="nvidia-smi", sm_mhz=v[0], mem_mhz=v[1], temp_c=v[2], power_w=v[3])
            if max_clock:
                c["sm_max_mhz"] = v[4]
            return c
        except Exception:  # noqa: BLE001
            pass
    return dict(source="none")


def clocks_line(c: Mapping[str, Any]) -> str:
    f = lambda k: "?" if c.get(k) is None else f"{c[k]:.0f}"  # noqa: E731
    return f"SM {f('sm_mhz')} MHz, memory {f('mem_mhz')} MHz, {f('temp_c')} C, {f('power_w')} W ({c.get('source')})"


def tol_check(out: Any, ref: Any, atol: float, rtol: float) -> Dict[str, Any]:
    """Per element: |out - ref| <= atol + rtol |ref| (in fp32 on the GPU for tensors), NaN in out =
    unwritten. Returns ok, the counts, the worst element (flat index, out, ref, err/tol), max abs
    error and the relative L2 error (a side figure). Sequences of numbers are checked in Python
    with the same definition (bench/common/stats.cpp's tol_check_host)."""
    if not hasattr(out, "float"):
        return _tol_check_seq(list(out), list(ref), atol, rtol)
    import torch
    o = out.float().reshape(-1)
    r = ref.float().reshape(-1)
    nan = torch.isnan(o)
    err = (o - r).abs()
    tol = atol + rtol * r.abs()
    ratio = torch.where(nan, torch.zeros_like(err), err / tol)
    ratio = torch.nan_to_num(ratio, nan=math.inf, posinf=math.inf)
    worst = int(torch.argmax(ratio))
    d = torch.where(nan, torch.zeros_like(err), o - r)
    rel = float(torch.linalg.vector_norm(d.double()) / torch.linalg.vector_norm(torch.where(nan, torch.zeros_like(r), r).double()))
    res = dict(atol=atol, rtol=rtol, elements=o.numel(), unwritten=int(nan.sum()), over_tolerance=int((ratio > 1).sum()),
               worst_index=worst, worst_out=float(o[worst]), worst_ref=float(r[worst]), worst_err_over_tol=float(ratio[worst]),
               max_abs_err=float(torch.where(nan, torch.zeros_like(err), err).max()), rel_l2=rel)
    res["ok"] = res["unwritten"] == 0 and res["over_tolerance"] == 0 and math.isfinite(rel)
    return res


def _tol_check_seq(out: List[float], ref: List[float], atol: float, rtol: float) -> Dict[str, Any]:
    nans = over = 0
    worst, worst_i, max_abs, d2, r2 = 0.0, 0, 0.0, 0.0, 0.0
    for i, (o, r) in enumerate(zip(out, ref)):
        if math.isnan(o):
            nans += 1
            continue
        err, tol = abs(o - r), atol + rtol * abs(r)
        ratio = err / tol if tol > 0 else (math.inf if err > 0 else 0.0)
        over += ratio > 1
        if ratio > worst or i == 0:
            worst, worst_i = ratio, i
        max_abs = max(max_abs, err)
        d2 += (o - r) ** 2
        r2 += r * r
    rel = math.sqrt(d2 / r2) if r2 > 0 else (math.inf if d2 > 0 else 0.0)
    n = len(out)
    return dict(atol=atol, rtol=rtol, elements=n, unwritten=nans, over_tolerance=over, worst_index=worst_i,
                worst_out=out[worst_i] if n else math.nan, worst_ref=ref[worst_i] if n else math.nan, worst_err_over_tol=worst,
                max_abs_err=max_abs, rel_l2=rel, ok=n > 0 and nans == 0 and over == 0 and math.isfinite(rel))


def tol_line(c: Mapping[str, Any]) -> str:
    return (f"{'OK' if c['ok'] else 'FAIL'}: {c['unwritten']} unwritten, {c['over_tolerance']} over |err| <= {c['atol']:.2g} + "
            f"{c['rtol']:.2g}|ref|; worst element {c['worst_index']}: out {c['worst_out']:.6g} ref {c['worst_ref']:.6g} "
            f"(err/tol {c['worst_err_over_tol']:.3f}); rel L2 {c['rel_l2']:.3e}")


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_json(path: str, obj: Any) -> None:
    """JSON with non-finite numbers as null (as the C++ writer does)."""
    with open(path, "w") as f:
        json.dump(_clean(obj), f, indent=1)
        f.write("\n")


def capture_graph(fn: Callable[[], Any]) -> Any:
    """fn captured in one torch.cuda.CUDAGraph: run once on a side stream first (allocations and
    lazy initialisation happen outside the capture), then captured. Returns the graph."""
    import torch  # noqa: PLC0415
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g
