# Paired per-round ratios of results/s28: each link / its -old28 twin, and each PipeLink link / the best baseline of its M.
# usage: python3 ratios.py c1/s424.json ...
import json, sys
sys.path.insert(0, '/work/main/bench/common')
from bench import paired_ratio, fmt_ratio
for f in sys.argv[1:]:
    d = json.load(open(f))
    for r in d['results']:
        E = {e['label']: e['runs_ms'] for e in r['entries']}
        bg, bp = r['best_gemm_baseline'], r['best_pair_baseline']
        for l in E:
            if l.endswith('-old28'):
                n = l[:-6]
                print(f"M={r['M']} {n} / old28: {fmt_ratio(paired_ratio(E[n], E[l]))}")
        for l in E:
            if l.startswith('gemm'): print(f"M={r['M']} {l} / {bg}: {fmt_ratio(paired_ratio(E[l], E[bg]))}")
            if l.startswith('fused'): print(f"M={r['M']} {l} / {bp}: {fmt_ratio(paired_ratio(E[l], E[bp]))}")
