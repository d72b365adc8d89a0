#!/usr/bin/env python3
"""fold_cost report: bench_lvc's raw JSON of each unfolded variant (ptx, nofold) against the folded
link, with the SASS counts and the build record, into bench/results/fold_cost.{json,md}.

usage: report.py RAW_DIR OUT_JSON OUT_MD   (RAW_DIR: what run.sh wrote, plus build.json)
"""
import json
import os
import statistics
import sys

raw, out_json, out_md = sys.argv[1:4]
VARIANTS = {
    "ptx": "components given as PTX (no LTO: bindings loaded, components called, setmaxnreg ignored)",
    "nofold": "everything LTO, bindings kept out of the fold (mutable __device__ facts and slot tables)",
}
build = json.load(open(os.path.join(raw, "build.json")))
res = {"bench": "fold_cost", "what": "time of each unfolded variant / time of the folded link (pipelink link), "
       "interleaved in one process by bench_lvc (variant as 'linked', folded link as 'control', folded again as A/A)",
       "build": build, "variants": {}}
md = []
for v, desc in VARIANTS.items():
    r = json.load(open(os.path.join(raw, f"fold_{v}_raw.json")))
    ops = json.load(open(os.path.join(raw, f"fold_{v}_ops.json")))
    rows = []
    for c in r["configs"]:
        k = c["family"] + "/" + c["kernel"]
        ratio = c["linked_ms"]["median"] / c["control_ms"]["median"]
        rows.append({"kernel": k, "shape": c["shape"], "variant_ms": c["linked_ms"]["median"],
                     "folded_ms": c["control_ms"]["median"], "ratio": ratio,
                     "round_ratio_q1": c["sample_ratio_linked_control"]["q1"],
                     "round_ratio_q3": c["sample_ratio_linked_control"]["q3"],
                     "aa_ratio": c["control_again_ms"]["median"] / c["control_ms"]["median"],
                     "check_ok": c["check"]["ok"], "words_differing": c["check"]["words_differing"]})
    ratios = [x["ratio"] for x in rows]
    res["variants"][v] = {"description": desc, "device": r["device"], "date": r["date"], "rounds": r["rounds"],
                          "all_checks_ok": r["all_checks_ok"], "configs": rows, "sass": ops,
                          "summary": {"n": len(rows), "median_ratio": statistics.median(ratios),
                                      "min_ratio": min(ratios), "max_ratio": max(ratios)}}
json.dump(res, open(out_json, "w"), indent=1)

v0 = res["variants"]["ptx"]
md.append("# What the fold buys (issue 10, item 2)\n")
md.append(f"Measured on one {v0['device']}, {v0['date']}; {v0['rounds']} interleaved rounds per configuration after "
          "3 warm-up runs (bench_lvc: the variant as \"linked\", the folded link as \"control\", the folded link again "
          "as an A/A pair). Ratio = median(variant) / median(folded); > 1 means the variant is slower. Every output "
          "was checked (poisoned buffers, CPU reference samples) and was bit-identical to the folded link's.\n")
md.append("Variants (built on the CPU by `bench/fold_cost/build.py`, timed by `bench/fold_cost/run.sh`):\n")
for v, desc in VARIANTS.items():
    s = res["variants"][v]["summary"]
    md.append(f"- **{v}**: {desc}. {s['n']} configurations, ratio median {s['median_ratio']:.3f}, "
              f"range {s['min_ratio']:.3f}–{s['max_ratio']:.3f}.")
md.append("\nThe nofold route itself (the folded link's generated unit through `pipelink compile` + `pipelink plain-link`, "
          "unmodified) reproduces the folded cubin byte for byte for every kernel here: "
          + ", ".join(f"{k['kernel']} {'yes' if k['same_route_identical'] else 'NO'}" for k in build["kernels"]) + ".\n")
md.append("## Time\n")
md.append("| kernel | shape | folded ms | ptx ms | ptx / folded | nofold ms | nofold / folded | A/A (nofold run) |")
md.append("|---|---|---:|---:|---:|---:|---:|---:|")
pr = {(x["kernel"], x["shape"]): x for x in res["variants"]["ptx"]["configs"]}
for x in res["variants"]["nofold"]["configs"]:
    p = pr.get((x["kernel"], x["shape"]))
    md.append(f"| {x['kernel']} | {x['shape']} | {x['folded_ms']:.4f} | {p['variant_ms']:.4f} | {p['ratio']:.3f} | "
              f"{x['variant_ms']:.4f} | {x['ratio']:.3f} | {x['aa_ratio']:.4f} |")
md.append("\nThe per-round ratio's interquartile range is in fold_cost.json (round_ratio_q1/q3); the A/A column is the "
          "noise floor of the same run.\n")
md.append("## Machine code (cuobjdump -sass, all functions of the cubin)\n")
md.append("| kernel | variant | functions | instructions | LDG | LDC | CALL | LDL/STL (spills) |")
md.append("|---|---|---:|---:|---:|---:|---:|---:|")
for k in sorted(res["variants"]["ptx"]["sass"]):
    f = res["variants"]["ptx"]["sass"][k]["folded"]
    md.append(f"| {k} | folded | {f['functions']} | {f['instructions']} | {f['LDG']} | {f['LDC']} | {f['CALL']} | {f['LDL']}/{f['STL']} |")
    for v in VARIANTS:
        o = res["variants"][v]["sass"][k]["variant"]
        md.append(f"| | {v} | {o['functions']} | {o['instructions']} | {o['LDG']} | {o['LDC']} | {o['CALL']} | {o['LDL']}/{o['STL']} |")
md.append("\nWhat `pipelink link` said about each PTX link (besides one [no-lto] warning per component):\n")
for k in build["kernels"]:
    w = [d.split("warning: ")[-1] for d in k["ptx_link_diagnostics"] if "[no-lto]" not in d]
    md.append(f"- {k['kernel']}: " + ("; ".join(w) if w else "nothing"))
open(out_md, "w").write("\n".join(md) + "\n")
print("\n".join(md))
