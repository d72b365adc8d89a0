# Paired per-round ratios of results/s29 (bench/common/bench.py's paired_ratio over the JSON's runs_ms):
# each PipeLink link / the best baseline of its M (GEMM: best cuBLAS, fused: best pair), each -px probe
# (the same cubin with X padded to whole tiles) / its link, each -<tag> probe / the link it was built from.
# usage: python3 ratios.py c1/s1100.json ...
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from bench import fmt_ratio, paired_ratio  # noqa: E402

for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        E = {e["label"]: e["runs_ms"] for e in r["entries"]}
        med = {e["label"]: sorted(e["runs_ms"])[len(e["runs_ms"]) // 2] for e in r["entries"]}
        bg, bp = r["best_gemm_baseline"], r["best_pair_baseline"]
        c = r["clocks_after"]
        print(f"{f} M={r['M']}: best GEMM {bg} {med[bg]:.4f} ms, best pair {bp} {med[bp]:.4f} ms; after: {c['sm_mhz']} MHz {c['power_w']:.0f} W")
        for l in E:
            if l.startswith(("gemm", "fused")):
                base = bg if l.startswith("gemm") else bp
                print(f"   {l:28s} {med[l]:.4f} ms / {base}: {fmt_ratio(paired_ratio(E[l], E[base]))}")
                if l.endswith("-px") and l[:-3] in E:
                    print(f"   {l:28s} / {l[:-3]}: {fmt_ratio(paired_ratio(E[l], E[l[:-3]]))}")
