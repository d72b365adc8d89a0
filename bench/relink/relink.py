#!/usr/bin/env python3
"""The cost of linking (issue 10, item 3), per example kernel, on the CPU.

For each kernel, with its component objects copied to a scratch library directory:
  relink      one component changes: recompile that component as its build does (nvcc -dc for an
              nvcc component, `pipelink compile` for an NVRTC one) into the library, then
              `pipelink link -v --cache-dir C` (the NVRTC cache warm: the contracts did not change,
              so the generated unit and the conformance probe are reused). Every component in turn.
              Also with the component recompiled by `pipelink compile` (NVRTC) whatever its build
              uses, to separate the compiler's cost from the linker's.
  link        `pipelink link` alone: with a warm cache, with no cache, and (if given) with another
              pipelink binary (--before: main's, which ran nvJitLink twice per link).
  control     the control rebuilt: `pipelink link --control` (the sources and the generated unit as one
              NVRTC program, one LTO link) and `nvcc -cubin` of that same program (one unit compiled
              the way a user without PipeLink would).
  passes      the time of each pass of one relink, from `pipelink link -v`.
Each figure is the median of --reps runs (default 3); every sample is in the JSON.

usage: relink.py BUILD_DIR OUT_JSON OUT_MD [--reps N] [--before PIPELINK] [--kernels gemm/gemm,...]
"""
import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(ROOT, "examples")
Q, M = "qwen_mlp", "moe"
KERNELS = [
    ("gemm/gemm", ["gemm/loader/contract.toml", "gemm/mma/contract.toml", "gemm/mma/contract.toml",
                   "gemm/writer/contract.toml"], [], ["gemm"]),
    ("qwen_mlp/fused", [f"{Q}/loader/contract.toml", f"{Q}/mma/contract.toml", f"{Q}/mma/contract.toml",
                        f"{Q}/swiglu/contract.toml", f"{Q}/store/contract.toml"], [], [Q]),
    ("qwen_mlp/gemm_small", [f"{Q}/loader/contract_small.toml", f"{Q}/mma/contract_small.toml",
                             f"{Q}/store/contract.toml"], ["out=acc"], [Q]),
    ("moe/gate_up", [f"{M}/dispatch/gather.toml", f"{M}/gemm/w_loader.toml", f"{M}/gemm/mma_gu.toml",
                     f"{M}/gemm/mma_gu.toml", f"{M}/activation/contract.toml", f"{Q}/store/contract.toml"], [], [M, Q]),
    ("moe/down", [f"{M}/dispatch/a_loader.toml", f"{M}/gemm/w_loader.toml", f"{M}/gemm/mma_down.toml",
                  f"{M}/gemm/mma_down.toml", f"{M}/combine/contract.toml"], ["out=acc"], [M, Q]),
]
NVRTC_SOURCES = set()
PASS = re.compile(r"^pipelink: (.+?): ([0-9.]+) ms$")


def nvrtc_sources():
    """The sources examples/CMakeLists.txt builds with pipelink_add_component(... NVRTC ...)."""
    text = open(os.path.join(EX, "CMakeLists.txt")).read()
    out = set()
    for m in re.finditer(r"pipelink_add_component\((.*?)\)", text, flags=re.S):
        body = m.group(1)
        if re.search(r"\bNVRTC\b", body):
            s = re.search(r"SOURCES\s+(\S+)", body)
            if s:
                out.add(os.path.basename(s.group(1)))
    return out


CPU = []  # CPU seconds (user + system, the command and every process it waited for) of each timed() call


def timed(cmd, **kw):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return dt, p.stderr


def passes(stderr):
    out = []
    for line in stderr.splitlines():
        m = PASS.match(line)
        if m:
            out.append([m.group(1), float(m.group(2))])
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out_json")
    ap.add_argument("out_md")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--before", help="another pipelink binary to time the same link with (main's)")
    ap.add_argument("--kernels", help="comma-separated subset")
    ap.add_argument("--pipelink", help="the pipelink binary to measure (default BUILD_DIR/pipelink)")
    a = ap.parse_args()
    global NVRTC_SOURCES
    NVRTC_SOURCES = nvrtc_sources()
    build = os.path.abspath(a.build)
    pl = a.pipelink or os.path.join(build, "pipelink")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    include = os.path.join(ROOT, "include")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    res = {"bench": "relink", "machine": {"cpu": cpu, "cores": os.cpu_count(), "host": platform.node(),
                                          "load_before": os.getloadavg()},
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "reps": a.reps, "kernels": []}
    for name, contracts, connect, objdirs in KERNELS:
        if a.kernels and name not in a.kernels.split(","):
            continue
        paths = [os.path.join(EX, c) for c in contracts]
        scratch = tempfile.mkdtemp(prefix="relink_")
        lib, cache = os.path.join(scratch, "lib"), os.path.join(scratch, "cache")
        os.makedirs(lib)
        comps = {}  # object -> how it is built
        for c in dict.fromkeys(paths):
            t = tomllib.load(open(c, "rb"))["component"]
            obj = t["object"]
            src = os.path.normpath(os.path.join(os.path.dirname(c), t["source"]))
            for d in objdirs:
                f = os.path.join(build, "examples", d, obj)
                if os.path.exists(f):
                    shutil.copy(f, os.path.join(lib, obj))
                    break
            else:
                raise SystemExit(f"{name}: object {obj} not in the build")
            nvrtc = os.path.basename(src) in NVRTC_SOURCES
            comps.setdefault(obj, {"component": t["name"], "source": src, "defines": t.get("defines", []),
                                   "route": "pipelink compile (NVRTC)" if nvrtc else "nvcc -dc"})
        out = os.path.join(scratch, "k.cubin")
        link = [pl, "link", *paths, "-L", lib, "-o", out, "-v"]
        for c in connect:
            link += ["--connect", c]
        k = {"kernel": name, "components": []}
        # Links alone.
        k["link_cold_cache"], _ = timed(link + ["--cache-dir", cache])
        warm = []
        k["link_warm_cache_cpu_s"] = []
        for _ in range(a.reps):
            warm.append(timed(link + ["--cache-dir", cache]))
            k["link_warm_cache_cpu_s"].append(CPU[-1])
        k["link_warm_cache_s"] = [w[0] for w in warm]
        k["link_warm_cache_passes"] = passes(warm[-1][1])
        nocache = [timed(link) for _ in range(a.reps)]
        k["link_no_cache_s"] = [w[0] for w in nocache]
        k["link_no_cache_passes"] = passes(nocache[-1][1])
        if a.before:
            bl = [a.before] + link[1:]
            before = [timed(bl) for _ in range(a.reps)]
            k["link_before_s"] = [w[0] for w in before]
            k["link_before_passes"] = passes(before[-1][1])
        # Control rebuilds.
        ctl = []
        k["control_cpu_s"] = []
        for _ in range(a.reps):
            ctl.append(timed(link + ["--control"]))
            k["control_cpu_s"].append(CPU[-1])
        k["control_s"] = [w[0] for w in ctl]
        k["control_passes"] = passes(ctl[-1][1])
        # The control program for nvcc: what compile_link builds (sources with their defines, then the unit).
        gen_out = os.path.join(scratch, "g.cubin")
        timed([pl, "link", *paths, "-L", lib, "-o", gen_out, "--save-temps"] + sum((["--connect", c] for c in connect), []))
        prog = "// the monolithic control, for nvcc\n"
        seen = set()
        for c in paths:
            t = tomllib.load(open(c, "rb"))["component"]
            src = os.path.normpath(os.path.join(os.path.dirname(c), t["source"]))
            if src in seen:
                continue
            seen.add(src)
            ds = t.get("defines", [])
            for d in ds:
                n, _, v = d.partition("=")
                prog += f"#define {n} {v or '1'}\n"
            prog += f'#include "{src}"\n'
            for d in ds:
                prog += f"#undef {d.partition('=')[0]}\n"
        prog += open(gen_out + ".generated.cu").read()
        cu = os.path.join(scratch, "control.cu")
        open(cu, "w").write(prog)
        nv = []
        for _ in range(a.reps):
            try:
                nv.append(timed([nvcc, "-cubin", "-std=c++17", "-arch=sm_90a", "-I" + include, cu, "-o",
                                 os.path.join(scratch, "control_nvcc.cubin")])[0])
                k.setdefault("control_nvcc_cpu_s", []).append(CPU[-1])
            except SystemExit as e:
                k["control_nvcc_error"] = str(e)[-600:]
                break
        k["control_nvcc_s"] = nv
        # One component changes.
        for obj, cp in comps.items():
            rec = dict(cp, object=obj, source=os.path.relpath(cp["source"], ROOT))
            dflags = sum((["-D", d] for d in cp["defines"]), [])
            if cp["route"].startswith("nvcc"):
                recompile = [nvcc, "-dc", "-std=c++17", "-gencode", "arch=compute_90a,code=lto_90a", "-I" + include,
                             *["-D" + d for d in cp["defines"]], cp["source"], "-o", os.path.join(lib, obj)]
            else:
                recompile = [pl, "compile", cp["source"], "-o", os.path.join(lib, obj), *dflags]
            nvrtc = [pl, "compile", cp["source"], "-o", os.path.join(scratch, "nvrtc.ltoir"), *dflags]
            rc, rl, rn, lp = [], [], [], None
            cc, cl, cn = [], [], []
            for _ in range(a.reps):
                rc.append(timed(recompile)[0])
                cc.append(CPU[-1])
                t, err = timed(link + ["--cache-dir", cache])
                rl.append(t)
                cl.append(CPU[-1])
                lp = passes(err)
                rn.append(timed(nvrtc)[0])
                cn.append(CPU[-1])
            rec.update({"recompile_s": rc, "relink_link_s": rl, "relink_passes": lp, "recompile_nvrtc_s": rn,
                        "recompile_cpu_s": cc, "relink_link_cpu_s": cl, "recompile_nvrtc_cpu_s": cn})
            k["components"].append(rec)
            print(f"{name}: {cp['component']} ({cp['route']}) recompile {med(rc):.2f} s + link {med(rl):.2f} s; "
                  f"NVRTC recompile {med(rn):.2f} s", flush=True)
        print(f"{name}: link warm {med(k['link_warm_cache_s']):.2f} s, no cache {med(k['link_no_cache_s']):.2f} s, "
              f"control {med(k['control_s']):.2f} s, nvcc control {med(nv) if nv else float('nan'):.2f} s", flush=True)
        res["kernels"].append(k)
        shutil.rmtree(scratch, ignore_errors=True)
    res["machine"]["load_after"] = os.getloadavg()
    json.dump(res, open(a.out_json, "w"), indent=1)
    write_md(res, a.out_md)


def write_md(res, path):
    m = res["machine"]
    L = ["# The cost of linking (issue 10, item 3)\n",
         f"CPU only, measured on this project's build machine: {m['cpu']}, {m['cores']} cores shared with other jobs "
         f"(load average {m['load_before'][0]:.1f} before, {m['load_after'][0]:.1f} after), {res['date']}. "
         f"Medians of {res['reps']} runs; every sample is in relink.json. Generated by `bench/relink/run.sh`.\n",
         "**relink** = recompile the changed component the way its build does + `pipelink link` with the NVRTC cache "
         "warm (the contracts did not change). **control** = `pipelink link --control` (the same sources and generated "
         "unit as one NVRTC program, one LTO link); **nvcc control** = `nvcc -cubin` of that program.\n",
         "| kernel | changed component (build route) | recompile s | link s | relink s | relink / control | relink / nvcc control | relink with NVRTC recompile s |",
         "|---|---|---:|---:|---:|---:|---:|---:|"]
    for k in res["kernels"]:
        ctl, nv = med(k["control_s"]), med(k["control_nvcc_s"])
        for c in k["components"]:
            rc, rl, rn = med(c["recompile_s"]), med(c["relink_link_s"]), med(c["recompile_nvrtc_s"])
            rel = rc + rl
            L.append(f"| {k['kernel']} | {c['component']} ({c['route']}) | {rc:.2f} | {rl:.2f} | {rel:.2f} | {rel / ctl:.2f} | "
                     f"{(rel / nv) if nv else float('nan'):.2f} | {rn + rl:.2f} |")
    L += ["", "The same in CPU seconds (user + system of the commands and their children): less sensitive to the "
          "other jobs on the machine than wall time.\n",
          "| kernel | changed component | recompile CPU s | link CPU s | relink CPU s | control CPU s | relink / control | nvcc control CPU s | relink / nvcc control | relink with NVRTC recompile / control |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k in res["kernels"]:
        ctl, nv = med(k.get("control_cpu_s", [])), med(k.get("control_nvcc_cpu_s", []))
        for c in k["components"]:
            if "recompile_cpu_s" not in c:
                continue
            rc, rl, rn = med(c["recompile_cpu_s"]), med(c["relink_link_cpu_s"]), med(c["recompile_nvrtc_cpu_s"])
            L.append(f"| {k['kernel']} | {c['component']} ({c['route']}) | {rc:.2f} | {rl:.2f} | {rc + rl:.2f} | {ctl:.2f} | "
                     f"{(rc + rl) / ctl:.2f} | {nv if nv else float('nan'):.2f} | {((rc + rl) / nv) if nv else float('nan'):.2f} | "
                     f"{(rn + rl) / ctl:.2f} |")
    L += ["", "| kernel | link, cache warm s | link, no cache s | link, main's pipelink s | control s | nvcc control s |",
          "|---|---:|---:|---:|---:|---:|"]
    for k in res["kernels"]:
        b = med(k.get("link_before_s", []))
        nv = med(k["control_nvcc_s"])
        L.append(f"| {k['kernel']} | {med(k['link_warm_cache_s']):.2f} | {med(k['link_no_cache_s']):.2f} | "
                 f"{b if b is not None else float('nan'):.2f} | {med(k['control_s']):.2f} | "
                 f"{nv if nv is not None else float('nan'):.2f} |")
    L += ["", "## Passes of one link (`pipelink link -v`, ms)\n"]
    for k in res["kernels"]:
        def fmt(ps):
            return ", ".join(f"{n} {v:.0f}" for n, v in ps if v >= 1 or n.startswith(("nvrtc", "nvJitLink")))
        L.append(f"- **{k['kernel']}**, relink after {k['components'][0]['component']} changed (cache warm): "
                 f"{fmt(k['components'][0]['relink_passes'])}")
        L.append(f"  - no cache: {fmt(k['link_no_cache_passes'])}")
        if "link_before_passes" in k:
            L.append(f"  - main's pipelink (before): {fmt(k['link_before_passes'])}")
        L.append(f"  - control: {fmt(k['control_passes'])}")
    open(path, "w").write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
