"""Merges bench_moe's and torch_moe.py's JSON into bench/results/moe.{json,md}."""
import json
import sys

pl, th, md_path, json_path = sys.argv[1:5]
p = json.load(open(pl))
t = {r["T"]: r for r in json.load(open(th))["results"]}
rows = []
for r in p["results"]:
    base = t.get(r["T"], {})
    rows.append(dict(r, torch_ms=base.get("ms"), speedup_vs_torch=(base["ms"] / r["layer_ms"]) if base else None))
json.dump({"device": p["device"], "seed": p["seed"], "iters": p["iters"], "ok": p["ok"], "results": rows}, open(json_path, "w"), indent=1)
with open(md_path, "w") as f:
    f.write("# Qwen3-30B-A3B expert layer (hidden 2048, intermediate 768, 128 experts, top-8)\n\n")
    f.write(f"{p['device']}, median of {p['iters']} runs; PyTorch pipeline (torch._grouped_mm) measured in the same run. "
            f"All checks {'passed' if p['ok'] else '**did not pass**'}.\n\n")
    f.write("| tokens | rows (padded) | PipeLink layer ms | TFLOP/s | route ms | gate/up ms | down ms | PyTorch ms | speedup | "
            "gate/up linked/control | down linked/control | rel err |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for r in rows:
        gc = r["gate_up_ms"] / r["gate_up_control_ms"] if r["gate_up_control_ms"] else float("nan")
        dc = r["down_ms"] / r["down_control_ms"] if r["down_control_ms"] else float("nan")
        tm = f"{r['torch_ms']:.3f}" if r["torch_ms"] else "—"
        sp = f"{r['speedup_vs_torch']:.2f}x" if r["speedup_vs_torch"] else "—"
        f.write(f"| {r['T']} | {r['rows']} | {r['layer_ms']:.3f} | {r['expert_tflops']:.0f} | {r['route_ms']:.3f} | {r['gate_up_ms']:.3f} | "
                f"{r['down_ms']:.3f} | {tm} | {sp} | {gc:.3f} | {dc:.3f} | {r['rel_err']:.2e} |\n")
print(open(md_path).read())
