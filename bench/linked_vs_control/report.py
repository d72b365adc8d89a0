#!/usr/bin/env python3
"""Merges bench_lvc's timings with the SASS comparison into the report.

usage: report.py RAW.json SASS.json OUT.json OUT.md [RAW2.json SASS2.json ...]

More RAW/SASS pairs (lvc_torch.py's, another run's) are merged in; each configuration keeps the
date of its run. RAW may also be an earlier report (OUT.json), whose configurations and SASS are
reused as they are (SASS given as "-").

Per configuration: Δ = median(linked) / median(control) − 1, and the A/A Δ = median(control
again) / median(control) − 1 (the same control cubin loaded twice: the noise floor). The summary
has the paper's form: N configurations, median |Δ|, max |Δ|, SASS identical in K of N, within 0.2%
in M of N, with the same figures for A/A beside it.
"""
import json
import statistics
import sys


def pct(x):
    return f"{100 * x:+.3f}%"


def main():
    raw_path, sass_path, out_json, out_md = sys.argv[1:5]
    more = sys.argv[5:]
    if len(more) % 2:
        sys.exit("report.py: extra inputs come in RAW SASS pairs")

    def load(rp, sp):
        r = json.load(open(rp))
        s = r["sass"] if sp == "-" else json.load(open(sp))
        ok = r["all_checks_ok"] if "all_checks_ok" in r else r["summary"]["all_checks_ok"]
        for c in r["configs"]:
            c.setdefault("run_date", r["date"])
        return r, s, ok

    raw, sass, all_ok = load(raw_path, sass_path)
    configs = raw["configs"]
    runs = [dict(date=raw["date"], device=raw["device"], configurations=len(configs), source=raw.get("bench", "bench_lvc"))]
    for rp, sp in zip(more[0::2], more[1::2]):
        r, s, ok = load(rp, sp)
        configs += r["configs"]
        sass.update(s)
        all_ok = all_ok and ok
        runs.append(dict(date=r["date"], device=r["device"], configurations=len(r["configs"]), source=r.get("bench", "")))
    raw["all_checks_ok"] = all_ok
    for c in configs:
        key = f"{c['family']}/{c['kernel']}"
        s = sass.get(key)
        c["sass_pair"] = key
        c["sass_identical"] = None if s is None else bool(s["identical"])
        lm, cm, am = c["linked_ms"]["median"], c["control_ms"]["median"], c["control_again_ms"]["median"]
        c["ratio"] = lm / cm
        c["delta"] = lm / cm - 1
        c["aa_ratio"] = am / cm
        c["aa_delta"] = am / cm - 1
    n = len(configs)
    ad = [abs(c["delta"]) for c in configs]
    aa = [abs(c["aa_delta"]) for c in configs]
    worst = max(configs, key=lambda c: abs(c["delta"]))
    worst_aa = max(configs, key=lambda c: abs(c["aa_delta"]))
    iqr = [c["sample_ratio_linked_control"]["q3"] - c["sample_ratio_linked_control"]["q1"] for c in configs]
    iqr_aa = [c["sample_ratio_aa"]["q3"] - c["sample_ratio_aa"]["q1"] for c in configs]
    summary = {
        "configurations": n,
        "kernel_pairs": len({c["sass_pair"] for c in configs}),
        "median_abs_delta": statistics.median(ad),
        "max_abs_delta": max(ad),
        "max_abs_delta_config": f"{worst['family']}/{worst['kernel']} {worst['shape']}",
        "within_0_2pct": sum(1 for x in ad if x <= 0.002),
        "within_0_5pct": sum(1 for x in ad if x <= 0.005),
        "sass_identical": sum(1 for c in configs if c["sass_identical"]),
        "sass_unknown": sum(1 for c in configs if c["sass_identical"] is None),
        "aa_median_abs_delta": statistics.median(aa),
        "aa_max_abs_delta": max(aa),
        "aa_max_abs_delta_config": f"{worst_aa['family']}/{worst_aa['kernel']} {worst_aa['shape']}",
        "aa_within_0_2pct": sum(1 for x in aa if x <= 0.002),
        # Δ inside the interquartile range of the same configuration's per-round A/A ratios
        "delta_inside_aa_iqr": sum(1 for c in configs
                                   if c["sample_ratio_aa"]["q1"] - 1 <= c["delta"] <= c["sample_ratio_aa"]["q3"] - 1),
        "median_sample_ratio_iqr": statistics.median(iqr),
        "median_sample_ratio_iqr_aa": statistics.median(iqr_aa),
        "all_checks_ok": raw["all_checks_ok"],
        "checks_failed": sum(1 for c in configs if not c["check"]["ok"]),
        "outputs_bitwise_equal": sum(1 for c in configs if c["check"]["words_differing"] == 0),
    }
    s = summary
    line = (f"{n} configurations ({s['kernel_pairs']} linked kernels), median |Δ| {100 * s['median_abs_delta']:.3f}%, "
            f"max |Δ| {100 * s['max_abs_delta']:.3f}% ({s['max_abs_delta_config']}), SASS identical in {s['sass_identical']} of {n}, "
            f"within 0.2% in {s['within_0_2pct']} of {n}, inside the A/A per-round IQR in {s['delta_inside_aa_iqr']} of {n}. Noise floor (control vs itself, A/A): median |Δ| "
            f"{100 * s['aa_median_abs_delta']:.3f}%, max |Δ| {100 * s['aa_max_abs_delta']:.3f}%, within 0.2% in {s['aa_within_0_2pct']} of {n}.")
    summary["line"] = line
    out = {"bench": "linked_vs_control", "device": raw["device"], "date": raw["date"], "rounds": raw["rounds"],
           "warmup": raw["warmup"], "seed": raw["seed"], "runs": runs, "summary": summary, "sass": sass, "configs": configs}
    json.dump(out, open(out_json, "w"), indent=1)

    md = []
    md.append("# Linked versus control\n")
    md.append(f"{raw['device']}, {raw['date']}; `bash bench/linked_vs_control/run.sh`. Every configuration: {raw['rounds']} rounds "
              f"after {raw['warmup']} warm-up runs; in each round the linked kernel, its control and the control loaded a second "
              "time (A/A) run once each, in an order that rotates, each between its own CUDA events, behind a GPU spin. "
              "A kernel under 0.3 ms runs `reps` times inside its events. Δ = median(linked) / median(control) − 1; A/A Δ = "
              "median(control again) / median(control) − 1. Per-round ratios: linked/control of the same round, quartiles and extremes.\n")
    if len(runs) > 1:
        md.append("Runs merged here (each configuration is linked vs control within one run): " +
                  "; ".join(f"{r['source']}, {r['date']}, {r['configurations']} configurations" for r in runs) + ".\n")
    md.append(f"**{line}**\n")
    md.append(f"Median interquartile range of the per-round ratio: {100 * s['median_sample_ratio_iqr']:.3f}% "
              f"(linked/control), {100 * s['median_sample_ratio_iqr_aa']:.3f}% (A/A). Checks: "
              f"{'all passed' if s['all_checks_ok'] else str(s['checks_failed']) + ' FAILED'}; linked and control outputs "
              f"bitwise equal in {s['outputs_bitwise_equal']} of {n}.\n")
    md.append("## SASS (cuobjdump -sass, linked vs control)\n")
    md.append("| kernel | identical | instructions linked / control | non-NOP | differing | resources (linked) |")
    md.append("|---|---|---:|---:|---:|---|")
    for key, v in sorted(sass.items()):
        for f in v["functions"]:
            md.append(f"| {key} ({f['function']}) | {'yes' if f['encoding_identical'] else '**no**'} | "
                      f"{f['instructions_linked']} / {f['instructions_control']} | {f['non_nop_linked']} / {f['non_nop_control']} | "
                      f"{f['instructions_differing']} | {'; '.join(v['res_usage_linked'])} |")
    md.append("")
    md.append("## Configurations\n")
    md.append("| kernel | variant | shape | grid | reps | linked ms | control ms | Δ | per-round ratio q1–q3 | min–max | A/A Δ | A/A q1–q3 | SASS | check |")
    md.append("|---|---|---|---:|---:|---:|---:|---:|---|---|---:|---|---|---|")
    for c in configs:
        r, a, ch = c["sample_ratio_linked_control"], c["sample_ratio_aa"], c["check"]
        chk = "ok" if ch["ok"] else "**FAIL**"
        if ch["words_differing"]:
            chk += f" (differs: rel {ch['rel_diff_linked_control']:.1e})"
        else:
            chk += ", bitwise equal"
        md.append(f"| {c['family']}/{c['kernel']} | {c['variant']} | {c['shape']} | {c['grid']} | {c['reps']} | "
                  f"{c['linked_ms']['median']:.4f} | {c['control_ms']['median']:.4f} | {pct(c['delta'])} | "
                  f"{r['q1']:.4f}–{r['q3']:.4f} | {r['min']:.4f}–{r['max']:.4f} | {pct(c['aa_delta'])} | {a['q1']:.4f}–{a['q3']:.4f} | "
                  f"{'identical' if c['sass_identical'] else ('?' if c['sass_identical'] is None else '**differs**')} | {chk} |")
    md.append("")
    open(out_md, "w").write("\n".join(md))
    print(line)


if __name__ == "__main__":
    main()
