# results/s28 c2 / c3: each token tile split-k link / the stream-k one, and each / the best baseline of its M.
# usage: python3 ratios_sk.py c2/s288.json ...
import json, sys
sys.path.insert(0, '/work/main/bench/common')
from bench import paired_ratio, fmt_ratio
for f in sys.argv[1:]:
    d = json.load(open(f))
    for r in d['results']:
        E = {e['label']: e['runs_ms'] for e in r['entries']}
        bg, bp = r['best_gemm_baseline'], r['best_pair_baseline']
        c = r['clocks_after']
        print(f"M={r['M']}  best gemm {bg}, best pair {bp}; after: {c['sm_mhz']} MHz {c['power_w']:.0f} W")
        for kind in ('gemm', 'fused'):
            L = [l for l in E if l.startswith(kind + '-tok')]
            sk = [l for l in L if l.endswith('-sk')]; sp = [l for l in L if l.endswith('-splitk')]
            if sk and sp: print(f"   {sp[0]} / {sk[0]}: {fmt_ratio(paired_ratio(E[sp[0]], E[sk[0]]))}")
            for l in L: print(f"   {l} / {bg if kind=='gemm' else bp}: {fmt_ratio(paired_ratio(E[l], E[bg if kind=='gemm' else bp]))}")
