# results/s29/c4 (and c1-c3): each new pick / the old pick of its kind (the one probe of the same kind),
# and each / the best baseline (GEMM: best cuBLAS; fused: best pair); paired per-round ratios, median [q1, q3].
# usage: python3 ratios_pick.py c4/s*.json
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from bench import fmt_ratio, paired_ratio  # noqa: E402

rows = []
for f in sys.argv[1:]:
    J = json.load(open(f))
    probe = {k["label"] for k in J["kernels"] if k.get("probe")}
    for r in J["results"]:
        E = {e["label"]: e["runs_ms"] for e in r["entries"]}
        med = {l: sorted(v)[len(v) // 2] for l, v in E.items()}
        bg, bp = r["best_gemm_baseline"], r["best_pair_baseline"]
        c = r["clocks_after"]
        print(f"M={r['M']}: best GEMM {bg} {med[bg]:.4f} ms, best pair {bp} {med[bp]:.4f} ms; after {c['sm_mhz']} MHz {c['power_w']:.0f} W")
        for kind, base in (("gemm", bg), ("fused", bp)):
            ours = [l for l in E if l.startswith(kind + "-")]
            new = [l for l in ours if l not in probe]
            old = [l for l in ours if l in probe]
            for l in new:
                print(f"   {l:22s} {med[l]:.4f} ms / {base}: {fmt_ratio(paired_ratio(E[l], E[base]))}")
                for o in old:
                    print(f"   {'':22s} / {o}: {fmt_ratio(paired_ratio(E[l], E[o]))}")
            for o in old:
                print(f"   {o:22s} {med[o]:.4f} ms / {base}: {fmt_ratio(paired_ratio(E[o], E[base]))}")
