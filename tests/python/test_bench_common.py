"""bench/common/bench.py (the Python benches' harness) against bench/common/stats.cpp (the C++
benches'): the same median, quartiles, spread, paired ratio and verdict, and the same per-element
tolerance check, on random samples. No GPU and no torch needed.

    python3 tests/python/test_bench_common.py BUILD/bench/bench_stats_selftest
"""
import json
import math
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "common"))
import bench as B  # noqa: E402

SELFTEST = sys.argv.pop(1) if len(sys.argv) > 1 else None


def cpp(mode, *lines, args=()):
    text = "\n".join(" ".join("nan" if math.isnan(x) else repr(float(x)) for x in line) for line in lines) + "\n"
    r = subprocess.run([SELFTEST, mode, *args], input=text, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def close(a, b):
    if a is None or b is None:
        return a is None and (b is None or not math.isfinite(b)) or b is None and not math.isfinite(a)
    return abs(a - b) <= 2e-8 * max(1.0, abs(b))  # the C++ JSON writes 9 significant digits


class BenchCommon(unittest.TestCase):
    def test_selftest_known_answers(self):
        r = subprocess.run([SELFTEST], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_stats_agree(self):
        rng = random.Random(7)
        for n in (1, 2, 3, 4, 5, 20, 21, 64):
            v = [rng.lognormvariate(0, 0.05) for _ in range(n)]
            c, p = cpp("--stats", v), B.stats(v)
            for k in ("n", "median", "q1", "q3", "min", "max", "spread"):
                self.assertTrue(close(c[k], p[k]), f"n={n} {k}: C++ {c[k]} Python {p[k]}")

    def test_paired_ratio_agrees(self):
        rng = random.Random(11)
        for shift in (0.9, 0.99, 1.0, 1.01, 1.1):
            a = [rng.gauss(shift, 0.01) for _ in range(20)]
            b = [rng.gauss(1.0, 0.01) for _ in range(20)]
            c, p = cpp("--ratio", a, b), B.paired_ratio(a, b)
            self.assertEqual(c["verdict"], p["verdict"], f"shift {shift}")
            for k in ("median", "q1", "q3"):
                self.assertTrue(close(c["ratio"][k], p[k]), f"shift {shift} {k}")
        self.assertEqual(B.paired_ratio([1] * 4, [2] * 4)["verdict"], "faster")
        self.assertEqual(B.paired_ratio([2] * 4, [1] * 4)["verdict"], "slower")

    def test_tolerance_check_agrees(self):
        rng = random.Random(3)
        ref = [rng.gauss(0, 1) for _ in range(200)]
        out = [r * (1 + rng.gauss(0, 0.004)) + rng.gauss(0, 1e-4) for r in ref]
        out[17] = math.nan
        out[42] = ref[42] + 0.5
        for atol, rtol in ((1e-3, 2 ** -7), (0.0, 0.0), (1.0, 0.0)):
            c, p = cpp("--tol", out, ref, args=(repr(atol), repr(rtol))), B.tol_check(out, ref, atol, rtol)
            for k in ("unwritten", "over_tolerance", "worst_index", "ok"):
                self.assertEqual(c[k], p[k], f"atol {atol} rtol {rtol} {k}")
            for k in ("worst_err_over_tol", "max_abs_err", "rel_l2"):
                self.assertTrue(close(c[k], p[k]), f"atol {atol} rtol {rtol} {k}: C++ {c[k]} Python {p[k]}")
        p = B.tol_check(out, ref, 1e-3, 2 ** -7)
        self.assertEqual((p["unwritten"], p["worst_index"], p["ok"]), (1, 42, False))

    def test_round_robin_sustain(self):
        """RoundRobin's untimed runs (sustain_ms) come right before each contender's timed region,
        about sustain_ms / (its warm-up estimate) of them, none without sustain_ms; the timed region
        holds reps runs. A stand-in for torch records the stream of calls (no GPU needed)."""
        import types
        log = []

        class Event:
            def __init__(self, enable_timing=True):
                self.t = None

            def record(self):
                log.append(("event", self))

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return 2.0  # ms: every warm-up run's estimate

        fake = types.ModuleType("torch")
        fake.cuda = types.SimpleNamespace(Event=Event, _sleep=lambda cycles: log.append(("sleep",)),
                                          synchronize=lambda: None)
        saved_torch, saved_hz = sys.modules.get("torch"), B._SM_HZ
        sys.modules["torch"], B._SM_HZ = fake, 1.98e9
        try:
            for sustain, target, want_pre, want_reps in ((0.0, 0.0, 0, 1), (9.0, 0.0, 5, 1), (300.0, 5.0, 150, 3)):
                log.clear()
                t = B.RoundRobin(rounds=2, warmup=1, seed=3, sustain_ms=sustain, target_ms=target)
                out = t.run({"a": lambda: log.append(("run", "a")), "b": lambda: log.append(("run", "b"))})
                self.assertEqual(t.pre, {"a": want_pre, "b": want_pre})
                self.assertEqual(t.reps, {"a": want_reps, "b": want_reps})
                self.assertEqual({k: len(v) for k, v in out.items()}, {"a": 2, "b": 2})
                rounds = list(log)  # the warm-up (event, run, event per contender), then each round after a sleep
                for r in range(2):
                    start = rounds.index(("sleep",))
                    rounds = rounds[start + 1:]
                    for _ in range(2):  # two contenders: pre untimed runs, event, reps runs, event
                        name = rounds[0][1] if rounds[0][0] == "run" else None
                        pre = 0
                        while rounds[pre][0] == "run":
                            pre += 1
                        self.assertEqual(pre, want_pre)
                        self.assertEqual(rounds[pre][0], "event")
                        timed = rounds[pre + 1:pre + 1 + want_reps]
                        self.assertTrue(all(x[0] == "run" for x in timed))
                        if name is not None:
                            self.assertTrue(all(x == ("run", name) for x in timed))
                        self.assertEqual(rounds[pre + 1 + want_reps][0], "event")
                        rounds = rounds[pre + 2 + want_reps:]
        finally:
            if saved_torch is None:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = saved_torch
            B._SM_HZ = saved_hz


if __name__ == "__main__":
    if not SELFTEST:
        sys.exit("usage: test_bench_common.py BUILD/bench/bench_stats_selftest")
    unittest.main(verbosity=2)
