"""Writes bench/results/moe.md from bench_moe's JSON (C++: linked vs control, the layer with its
routing kernels) and bench_torch.py's JSON (Python: the same kernels and PyTorch's pipeline in one
process). Usage: python3 bench/moe/report.py moe.json moe_torch.json moe.md"""
import json
import sys

cpp, py, out = sys.argv[1:4]
c = json.load(open(cpp))
t = {r["T"]: r for r in json.load(open(py))["results"]}
tj = json.load(open(py))


def ms(s):
    return f"{s['median']:.3f} ±{100 * s['spread']:.1f}%"


def ratio(r):
    return f"{r['median']:.3f} [{r['q1']:.3f}, {r['q3']:.3f}] {r['verdict']}"


L = ["# Qwen3-30B-A3B expert layer (hidden 2048, intermediate 768, 128 experts, top-8)\n",
     f"{c['device']}. Data: {c['data']}. Median ± spread (spread = (q3 − q1) / (2·median)); ratios per round, median "
     "[q1, q3], \"faster\"/\"slower\" only when the quartiles exclude 1.\n",
     f"## PipeLink against PyTorch, one process (bench/moe/bench_torch.py, {tj['date']}, torch {tj['torch']})\n",
     "The PipeLink kernels launched on torch tensors through `import pipelink` (routing.cubin's kernels through "
     "`pipelink.Function`), PyTorch's `torch._grouped_mm` pipeline on the same weights and inputs, one timer. "
     f"All checks {'passed' if tj['all_ok'] else '**did not pass**'} (per element against an fp32 reference of the same routing, "
     "and against each other).\n",
     "PipeLink down = `down_store` (linked: GEMM, the expert rows stored by TMA) + `moe_topk_sum` (routing.cubin: each token's "
     "8 rows added); the scatter-add down (linked: GEMM + `moe_combine`'s fp32 reductions into Y) is timed beside it. "
     "TFLOP/s count 2·rows·2048·768 over the routed rows.\n",
     "| tokens | PipeLink gate/up ms | PyTorch gather + gate/up + SwiGLU ms | ratio | PipeLink down ms | down_store GEMM ms (TFLOP/s) | "
     "top-k sum ms | scatter-add down ms | PyTorch down + scale + index_add ms | ratio | PipeLink layer ms | PyTorch layer ms | "
     "layer ratio | worst err/tol PipeLink, PyTorch |",
     "|---:|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for T, r in t.items():
    e, k = r["entries"], r["claims"]
    L.append(f"| {T} | {ms(e['pipelink gate/up']['ms'])} | {ms(e['torch gate/up (gather + grouped_mm + SwiGLU)']['ms'])} | "
             f"{ratio(k['pipelink gate/up / torch gate/up'])} | {ms(e['pipelink down_store + top-k sum']['ms'])} | "
             f"{ms(e['pipelink down_store (GEMM + row store)']['ms'])} ({r['flops_down'] / e['pipelink down_store (GEMM + row store)']['ms']['median'] / 1e9:.0f}) | "
             f"{ms(e['pipelink top-k sum']['ms'])} | {ms(e['pipelink down (+ combine, Y zeroed)']['ms'])} | "
             f"{ms(e['torch down (grouped_mm + scale + index_add)']['ms'])} | {ratio(k['pipelink down / torch down'])} | "
             f"{ms(e['pipelink layer (routing kernels, 1 host read)']['ms'])} | {ms(e['torch layer (same rounds)']['ms'])} | "
             f"{ratio(k['pipelink layer / torch layer (no spin, same rounds)'])} | "
             f"{r['check_pipelink']['worst_err_over_tol']:.2f}, {r['check_torch']['worst_err_over_tol']:.2f} |")
L += ["",
      "The layer rows: the PipeLink layer reads its padded row total back to the host once (routing), so both layers are "
      "timed in a round robin of their own, in the same rounds. The PyTorch layer behind a spin (no host read in it) is in "
      "`moe_torch.md`.\n",
      f"## The layer with its routing kernels, linked against control (bench_moe, C++, {c['date']})\n",
      f"All checks {'passed' if c['ok'] else '**did not pass**'} (Y of 64 sampled tokens per element against a CPU double "
      "recomputation of the whole layer; the poisoned intermediate fully written).\n",
      "The layer's down is `down_store` + `moe_topk_sum`. Linked / control for the scatter-add down too.\n",
      "| tokens | rows (padded) | layer ms | expert TFLOP/s | route ms | gate/up ms | down_store + sum ms | down_store ms (TFLOP/s) | "
      "top-k sum ms | scatter-add down ms | gate/up linked / control | down_store linked / control | scatter-add down linked / control | "
      "worst err/tol | SM MHz before → after |",
      "|---:|---:|---|---:|---|---|---|---|---|---|---|---|---|---:|---|"]
for r in c["results"]:
    if "layer_ms" not in r:
        continue
    L.append(f"| {r['T']} | {r['rows']} | {ms(r['layer_ms'])} | {r['expert_flops'] / r['layer_ms']['median'] / 1e9:.0f} | "
             f"{ms(r['route_ms'])} | {ms(r['gate_up_ms'])} | {ms(r['down_store_sum_ms'])} | "
             f"{ms(r['down_store_ms'])} ({2.0 * r['T'] * 8 * 2048 * 768 / r['down_store_ms']['median'] / 1e9:.0f}) | {ms(r['topk_sum_ms'])} | "
             f"{ms(r['down_ms'])} | {ratio(r['gate_up_linked_over_control']['ratio'] | {'verdict': r['gate_up_linked_over_control']['verdict']})} | "
             f"{ratio(r['down_store_linked_over_control']['ratio'] | {'verdict': r['down_store_linked_over_control']['verdict']})} | "
             f"{ratio(r['down_linked_over_control']['ratio'] | {'verdict': r['down_linked_over_control']['verdict']})} | "
             f"{max(r['check']['y']['worst_err_over_tol'], r['store_check']['y']['worst_err_over_tol']):.2f} | {r['clocks_before']['sm_mhz']:.0f} → {r['clocks_after']['sm_mhz']:.0f} |")
open(out, "w").write("\n".join(L) + "\n")
print(open(out).read())
