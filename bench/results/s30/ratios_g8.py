# results/s30/c1 g*.json: each probe (the 256-column tile in grouped:8) / the named kernel of its kind (the
# split-k panel kernel), and each / the best baseline; paired per-round ratios, median [q1, q3].
# usage: python3 ratios_g8.py c1/g*.json
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from bench import fmt_ratio, paired_ratio  # noqa: E402

for f in sys.argv[1:]:
    J = json.load(open(f))
    probe = {k["label"] for k in J["kernels"] if k.get("probe")}
    for r in J["results"]:
        E = {e["label"]: e["runs_ms"] for e in r["entries"]}
        med = {l: sorted(v)[len(v) // 2] for l, v in E.items()}
        bg, bp = r["best_gemm_baseline"], r["best_pair_baseline"]
        print(f"M={r['M']}: best GEMM {bg} {med[bg]:.4f} ms, best pair {bp} {med[bp]:.4f} ms")
        for kind, base in (("gemm", bg), ("fused", bp)):
            named = [l for l in E if l.startswith(kind + "-") and l not in probe]
            for l in [l for l in E if l.startswith(kind + "-")]:
                print(f"   {l:28s} {med[l]:.4f} ms / {base}: {fmt_ratio(paired_ratio(E[l], E[base]))}")
                if l in probe:
                    for n in named:
                        print(f"   {'':28s} / {n}: {fmt_ratio(paired_ratio(E[l], E[n]))}")
