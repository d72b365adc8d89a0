#!/usr/bin/env python3
"""Markdown tables from bench.json (bench/llama_decode/bench.py): python3 report.py results/bench.json"""
import json
import sys

r = json.load(open(sys.argv[1]))


def ms(p, k, m):
    return p[k][m]["median"]


def spread(pts, modes, head="Spread (min..max, ms): "):
    """One line: each point's min..max sample of each mode."""
    return head + "; ".join(f"B={p['B']} ctx={p['ctx']}: " + ", ".join(
        f"{m} {p['step_ms'][m]['min']:.3f}..{p['step_ms'][m]['max']:.3f}" for m in modes) for p in pts)


def torch_cols(pts):
    """Whether the run timed the F.rms_norm torch graph too; then the tables show it and compare
    with the faster of the two torch graphs."""
    rn = "torch_rmsnorm" in pts[0]["step_ms"]
    head = " | torch graph" + (" | torch graph, F.rms_norm" if rn else "")
    vs = "the faster torch graph" if rn else "torch"
    return rn, head, vs, "---:|" * (2 if rn else 1)


def torch_cells(p, rn):
    """The torch columns' cells and the faster torch graph's time."""
    t = ms(p, "step_ms", "torch")
    tr = ms(p, "step_ms", "torch_rmsnorm") if rn else t
    return f"{t:.3f} | " + (f"{tr:.3f} | " if rn else ""), min(t, tr)


print(f"{r['device']}, torch {r['torch']}, {r['date']}; copy bandwidth {r['copy_bandwidth_GBps']:.0f} GB/s; "
      f"weights {r['weight_bytes'] / 1e9:.3f} GB; medians of {r['reps']} samples of {r['inner']} graph replays\n")
print("| B | context | PipeLink a | PipeLink b | selected (variant, S) | torch graph | no attention | HBM floor | selected / best of a, b | selected vs torch |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for p in r["points"]:
    a, b, s, t, n = (ms(p, "step_ms", m) for m in ("a", "b", "selected", "torch", "none"))
    v = p["variant_selected"]
    print(f"| {p['B']} | {p['ctx']} | {a:.3f} | {b:.3f} | {s:.3f} ({v[0]}, {v[1]}) | {t:.3f} | {n:.3f} | {p['floor_ms']:.3f} | "
          f"{s / min(a, b):.3f} | {t / s:.3f}x |")
print("\nSpread (min..max of the samples, ms): " + "; ".join(
    f"B={p['B']} ctx={p['ctx']}: " + ", ".join(f"{m} {p['step_ms'][m]['min']:.3f}..{p['step_ms'][m]['max']:.3f}"
                                              for m in ("a", "b", "selected", "torch")) for p in r["points"]))
print("\nAttention alone, 16 layers' launches in one graph (ms):\n")
print("| B | context | a | b | selected | torch SDPA (enable_gqa) | KV bytes / selected time |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for p in r["points"] + [x for x in r["sweep"] if x["ctx"] not in (16, 4096)]:
    a, b, s, t = (ms(p, "attn16_ms", m) for m in ("a", "b", "selected", "torch"))
    print(f"| {p['B']} | {p['ctx']} | {a:.3f} | {b:.3f} | {s:.3f} | {t:.3f} | {p['kv_bytes'] / (s * 1e-3) / 1e12:.2f} TB/s |")
if r["sweep"]:
    print("\nContext sweep, B = 1, ms per step:\n")
    print("| context | a | b | selected (variant, S) | torch graph | HBM floor |")
    print("|---:|---:|---:|---:|---:|---:|")
for p in r["sweep"]:
    a, b, s, t = (ms(p, "step_ms", m) for m in ("a", "b", "selected", "torch"))
    v = p["variant_selected"]
    print(f"| {p['ctx']} | {a:.3f} | {b:.3f} | {s:.3f} ({v[0]}, {v[1]}) | {t:.3f} | {p['floor_ms']:.3f} |")
print("\nLogits checks (every PipeLink graph vs the torch graph): " + ", ".join(
    f"B={p['B']} ctx={p['ctx']} " + "/".join(f"{p['check'][m]['rel_l2']:.3f}" for m in ("a", "b", "selected"))
    + f" (noise {p['check']['a']['noise_rel_l2']:.3f})" for p in r["points"]) + f"; all ok: {r['checks_ok']}")
if "selected_rest" in r["points"][0]["step_ms"]:
    print("\nThe step with the rest linked (decode.LinkedStep), ms per step:\n")
    print("| B | context | a + rest | b + rest | selected + rest | selected + rest, cuBLAS gate/up & lm_head | rest without attention | torch graph | HBM floor | selected + rest vs torch | selected + rest / floor |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in r["points"]:
        a, b, s, c, n, t = (ms(p, "step_ms", m) for m in ("a_rest", "b_rest", "selected_rest", "selected_rest_cublas", "rest_none", "torch"))
        v = p["variant_selected_rest"]
        print(f"| {p['B']} | {p['ctx']} | {a:.3f} | {b:.3f} | {s:.3f} ({v[0]}, {v[1]}) | {c:.3f} | {n:.3f} | {t:.3f} | "
              f"{p['floor_ms']:.3f} | {t / s:.2f}x | {s / p['floor_ms']:.2f}x |")
    print("\nSpread (min..max of the samples, ms): " + "; ".join(
        f"B={p['B']} ctx={p['ctx']}: " + ", ".join(f"{m} {p['step_ms'][m]['min']:.3f}..{p['step_ms'][m]['max']:.3f}"
                                                  for m in ("a_rest", "b_rest", "selected_rest", "selected_rest_cublas", "torch"))
        for p in r["points"]))
    print("\nLogits checks, linked rest (rel L2 vs the torch graph; a/b/selected/selected-cuBLAS): " + ", ".join(
        f"B={p['B']} ctx={p['ctx']} " + "/".join(f"{p['check'][m]['rel_l2']:.3f}" for m in ("a_rest", "b_rest", "selected_rest", "selected_rest_cublas"))
        + f" (noise {p['check']['a']['noise_rel_l2']:.3f})" for p in r["points"]))
if "selected_rest_pdl" in r["points"][0]["step_ms"]:
    print("\nThe linked-rest step with programmatic dependent launch (decode.LinkedStep(pdl=True)), ms per step, "
          "the same run and process as the rows without it:\n")
    print("| B | context | a + rest: without / with PDL | b + rest: without / with | selected + rest: without / with | "
          "selected + rest, cuBLAS gate/up & lm_head: without / with | rest without attention: without / with | torch graph | "
          "selected + rest with PDL vs torch | with / without PDL (selected + rest) | selected + rest with PDL / floor |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in r["points"]:
        pair = lambda m: f"{ms(p, 'step_ms', m):.3f} / {ms(p, 'step_ms', m + '_pdl'):.3f}"  # noqa: E731
        s, sp, t = ms(p, "step_ms", "selected_rest"), ms(p, "step_ms", "selected_rest_pdl"), ms(p, "step_ms", "torch")
        v = p["variant_selected_rest_pdl"]
        print(f"| {p['B']} | {p['ctx']} | {pair('a_rest')} | {pair('b_rest')} | {pair('selected_rest')} ({v[0]}, {v[1]}) | "
              f"{pair('selected_rest_cublas')} | {pair('rest_none')} | {t:.3f} | {t / sp:.2f}x | {sp / s:.3f} | "
              f"{sp / p['floor_ms']:.2f}x |")
    print("\nSpread (min..max of the samples, ms): " + "; ".join(
        f"B={p['B']} ctx={p['ctx']}: " + ", ".join(f"{m} {p['step_ms'][m]['min']:.3f}..{p['step_ms'][m]['max']:.3f}"
                                                  for m in ("selected_rest", "selected_rest_pdl", "a_rest_pdl", "b_rest_pdl",
                                                            "rest_none_pdl", "torch")) for p in r["points"]))
    print("\nLogits checks of the PDL graphs (rel L2 vs the torch graph, a / b / selected / selected-cuBLAS; bit-equal to "
          "the same graph without PDL): " + ", ".join(
              f"B={p['B']} ctx={p['ctx']} " + "/".join(f"{p['check'][m + '_pdl']['rel_l2']:.3f}"
                                                      for m in ("a_rest", "b_rest", "selected_rest", "selected_rest_cublas"))
              + " (" + "/".join(str(p['check'][m + '_pdl'].get('bit_equal_to_without_pdl')) for m in
                                ("a_rest", "b_rest", "selected_rest", "selected_rest_cublas")) + ")"
              for p in r["points"]) + f"; all ok: {r['checks_ok']}")


def fast_table(r):
    """The fast PDL step (bench.py FAST_MODES), when the run has it."""
    pts = [p for p in r["points"] if "selected_fast_pdl" in p["step_ms"]]
    if not pts:
        return
    print("\nThe whole step linked, \"fast\" (PDL; split-K QKV with RoPE + cache append in its reduction, split-K O and"
          " down, 64 x 64 gate/up + SwiGLU, lm_head; plain norms triggering before their wait), ms per step:\n")
    rn, thead, tvs, tsep = torch_cols(pts)
    print("| B | context" + thead + " | a | b | selected (variant, S) | revised (variant, S) | no attention | HBM floor |"
          " selected / best of a, b | selected vs " + tvs + " | selected / floor |")
    print("|---:|---:|" + tsep + "---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in pts:
        a, b, s, v, n = (ms(p, "step_ms", m) for m in ("a_fast_pdl", "b_fast_pdl", "selected_fast_pdl",
                                                       "revised_fast_pdl", "none_fast_pdl"))
        cells, tb = torch_cells(p, rn)
        vs, vr = p["variant_selected_fast_pdl"], p["variant_revised_fast_pdl"]
        print(f"| {p['B']} | {p['ctx']} | " + cells + f"{a:.3f} | {b:.3f} | {s:.3f} ({vs[0]}, {vs[1]}) | {v:.3f} ({vr[0]}, {vr[1]}) | "
              f"{n:.3f} | {p['floor_ms']:.3f} | {s / min(a, b):.3f} | {tb / s:.2f}x | {s / p['floor_ms']:.2f}x |")
    print("\n" + spread(pts, ("a_fast_pdl", "b_fast_pdl", "selected_fast_pdl", "torch") + (("torch_rmsnorm",) if rn else ())))
    sw = [p for p in r["sweep"] if "selected_fast_pdl" in p["step_ms"]]
    if sw:
        print("\nSweep at B = 1, fast step (ms): " + "; ".join(
            f"{p['ctx']}: a {ms(p, 'step_ms', 'a_fast_pdl'):.3f}, b {ms(p, 'step_ms', 'b_fast_pdl'):.3f}, selected "
            f"{ms(p, 'step_ms', 'selected_fast_pdl'):.3f} ({p['variant_selected_fast_pdl'][0]}), torch {ms(p, 'step_ms', 'torch'):.3f}"
            for p in sw))
    print("\nChecks of the fast steps (rel L2 vs the torch graph; criterion 1.5 x noise + 2^-10): " + ", ".join(
        f"B={p['B']} ctx={p['ctx']} " + "/".join(f"{p['check'][m]['rel_l2']:.3f}{'' if p['check'][m]['ok'] else ' FAIL'}"
                                                for m in ("a_fast_pdl", "b_fast_pdl", "selected_fast_pdl", "revised_fast_pdl"))
        for p in pts))


def fastmlp_table(r):
    pts = [p for p in r["points"] if "selected_fastmlp_pdl" in p["step_ms"]]
    if not pts:
        return
    print("\nThe fast step with the fused MLP (gate/up + SwiGLU + down in one linked kernel per layer, 6 kernels per layer; "
          "in runs from session 8 on, bench.fast_mlp(B): one weight ring, mlp=\"fused_u\", at B <= 8, else the 6 + 5 rings), "
          "ms per step:\n")
    rn, thead, tvs, tsep = torch_cols(pts)
    print("| B | context" + thead + " | fast: selected | fast + fused MLP: a | b | selected (variant, S) | no attention | HBM floor |"
          " selected / best of a, b | selected vs " + tvs + " | selected / floor |")
    print("|---:|---:|" + tsep + "---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in pts:
        f, a, b, s, n = (ms(p, "step_ms", m) for m in ("selected_fast_pdl", "a_fastmlp_pdl", "b_fastmlp_pdl",
                                                       "selected_fastmlp_pdl", "none_fastmlp_pdl"))
        cells, tb = torch_cells(p, rn)
        vs = p["variant_selected_fastmlp_pdl"]
        print(f"| {p['B']} | {p['ctx']} | " + cells + f"{f:.3f} | {a:.3f} | {b:.3f} | {s:.3f} ({vs[0]}, {vs[1]}) | {n:.3f} | "
              f"{p['floor_ms']:.3f} | {s / min(a, b):.3f} | {tb / s:.2f}x | {s / p['floor_ms']:.2f}x |")
    print("\n" + spread(pts, ("selected_fastmlp_pdl", "selected_fast_pdl", "torch") + (("torch_rmsnorm",) if rn else ())))
    sw = [p for p in r["sweep"] if "selected_fastmlp_pdl" in p["step_ms"]]
    if sw:
        print("\nSweep at B = 1, fast + fused MLP (ms): " + "; ".join(
            f"{p['ctx']}: a {ms(p, 'step_ms', 'a_fastmlp_pdl'):.3f}, b {ms(p, 'step_ms', 'b_fastmlp_pdl'):.3f}, selected "
            f"{ms(p, 'step_ms', 'selected_fastmlp_pdl'):.3f} ({p['variant_selected_fastmlp_pdl'][0]}), torch {ms(p, 'step_ms', 'torch'):.3f}"
            for p in sw))
    print("\nChecks of the fused-MLP steps (rel L2 vs the torch graph): " + ", ".join(
        f"B={p['B']} ctx={p['ctx']} " + "/".join(f"{p['check'][m]['rel_l2']:.3f}{'' if p['check'][m]['ok'] else ' FAIL'}"
                                                for m in ("a_fastmlp_pdl", "b_fastmlp_pdl", "selected_fastmlp_pdl"))
        for p in pts))


fast_table(r)
fastmlp_table(r)
