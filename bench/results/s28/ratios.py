# Paired per-round ratios of results/s28 (bench/common/bench.py's paired_ratio over the JSON's runs_ms):
# each link / its -old28 twin; c4's -u1 / -u2 probes / the full unroll and / old28; each token-tile split-k link / the stream-k one of the same tile; each
# PipeLink link / the best baseline of its M (GEMM: best cuBLAS, fused: best pair).
# usage: python3 ratios.py c1/s424.json c2/s288.json ...
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from bench import fmt_ratio, paired_ratio  # noqa: E402

for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        E = {e["label"]: e["runs_ms"] for e in r["entries"]}
        bg, bp = r["best_gemm_baseline"], r["best_pair_baseline"]
        c = r["clocks_after"]
        print(f"{f} M={r['M']}: best GEMM {bg}, best pair {bp}; after: {c['sm_mhz']} MHz {c['power_w']:.0f} W")
        for l in E:
            if l.endswith("-old28"):
                print(f"   {l[:-6]} / old28: {fmt_ratio(paired_ratio(E[l[:-6]], E[l]))}")
            if l.endswith(("-u1", "-u2")):  # c4's probes: / the full unroll, and / the old build
                print(f"   {l} / {l[:-3]}: {fmt_ratio(paired_ratio(E[l], E[l[:-3]]))}")
                print(f"   {l} / {l[:-3]}-old28: {fmt_ratio(paired_ratio(E[l], E[l[:-3] + '-old28']))}")
            if l.endswith("-splitk") and "-tok" in l and l[:-7] + "-sk" in E:
                print(f"   {l} / {l[:-7]}-sk: {fmt_ratio(paired_ratio(E[l], E[l[:-7] + '-sk']))}")
        for l in E:
            if l.startswith("gemm"):
                print(f"   {l} / {bg}: {fmt_ratio(paired_ratio(E[l], E[bg]))}")
            elif l.startswith("fused"):
                print(f"   {l} / {bp}: {fmt_ratio(paired_ratio(E[l], E[bp]))}")
