#!/usr/bin/env python3
"""What the fold buys (issue 10, item 2): builds, for a subset of the linked kernels, two unfolded
variants beside the folded link, staged for bench_lvc (bench/linked_vs_control) to time against it.

  folded   what `pipelink link` makes (the build's <kernel>.cubin): every binding (facts, slot
           tables) is a link-time constant folded into the code by nvJitLink -lto.
  ptx      every component given as PTX (NVRTC -rdc=true, the component's own defines): PTX cannot
           take part in LTO, so nvJitLink links the components at the cubin level; their bindings are
           loaded from memory and the components are called, not inlined (`pipelink link` warns
           [no-lto] for each).
  nofold   everything LTO as in the folded link, but the generated unit's bindings are mutable
           __device__ variables (the `const` taken off the fact and slot-table definitions): LTO still
           inlines every component into the entry, but it cannot fold a binding, so each is loaded.
           Built from the folded link's own generated unit (--save-temps) with `pipelink compile`
           and `pipelink plain-link` (bare nvJitLink -lto). As a check of this route, the unmodified
           generated unit through it must give the folded cubin byte for byte ("same-route" below).

Layout written (bench_lvc --kernels DIR, each variant as the "linked" kernel, the folded link as its
"control"):  DEST/<variant>/k/<family>/<kernel>{,_control}.{cubin,map}  and DEST/build.json.

Usage: bench/fold_cost/build.py BUILD_DIR DEST   (CPU only; needs the build's examples and NVRTC)
"""
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(ROOT, "examples")

# (family, kernel, contracts in link order, --connect, object dir under BUILD/examples)
Q = "qwen_mlp"
KERNELS = [
    ("gemm", "gemm", ["gemm/loader/contract.toml", "gemm/mma/contract.toml", "gemm/mma/contract.toml",
                      "gemm/writer/contract.toml"], [], "gemm"),
    (Q, "fused", [f"{Q}/loader/contract.toml", f"{Q}/mma/contract.toml", f"{Q}/mma/contract.toml",
                  f"{Q}/swiglu/contract.toml", f"{Q}/store/contract.toml"], [], Q),
    (Q, "gemm", [f"{Q}/loader/contract.toml", f"{Q}/mma/contract.toml", f"{Q}/mma/contract.toml",
                 f"{Q}/store/contract.toml"], ["out=acc"], Q),
    (Q, "gemm_small", [f"{Q}/loader/contract_small.toml", f"{Q}/mma/contract_small.toml",
                       f"{Q}/store/contract.toml"], ["out=acc"], Q),
]


def nvrtc_ptx(lib, source_path, defines, include):
    """NVRTC -> relocatable PTX, with the options a PipeLink link compiles with (compile_link.cpp)."""
    src = "".join(f"#define {d.split('=')[0]} {d.split('=', 1)[1] if '=' in d else '1'}\n" for d in defines)
    src += f'#include "{source_path}"\n'
    prog = ctypes.c_void_p()
    r = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"component.cu", 0, None, None)
    assert r == 0, f"nvrtcCreateProgram {r}"
    opts = [b"-arch=sm_90a", b"-std=c++17", b"-default-device", b"-fmad=true", b"-rdc=true", f"-I{include}".encode()]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    r = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    if r != 0:
        sys.exit(f"NVRTC could not compile {source_path} to PTX:\n{log.value.decode()}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetPTX(prog, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value


def unfold(generated):
    """The generated unit with mutable bindings: facts and slot tables lose their `const`."""
    out, n = re.subn(r'^(extern "C" __device__ )const (unsigned|int|unsigned long long|long long|float) (pl_fact_)',
                     r"\1\2 \3", generated, flags=re.M)
    out, m = re.subn(r"^__device__ const pl::Slots (pl_slots_\d+) =", r"__device__ pl::Slots \1 =", out, flags=re.M)
    return out, n, m


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, dest = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pl = os.path.join(build, "pipelink")
    include = os.path.join(ROOT, "include")
    lib = ctypes.CDLL(os.environ.get("NVRTC_LIB", "libnvrtc.so.13"))
    shutil.rmtree(dest, ignore_errors=True)
    ptxdir = os.path.join(dest, "ptx_objects")
    os.makedirs(ptxdir)
    record = {"kernels": [], "ptx_objects": {}}

    only = os.environ.get("FOLD_KERNELS")  # e.g. "gemm/gemm,qwen_mlp/fused": a subset of the subset
    for family, kernel, contracts, connect, objdir in KERNELS:
        if only and f"{family}/{kernel}" not in only.split(","):
            continue
        paths = [os.path.join(EX, c) for c in contracts]
        folded = os.path.join(build, "examples", family, kernel + ".cubin")
        fmap = os.path.join(build, "examples", family, kernel + ".map")
        gen = folded + ".generated.cu"
        kdirs = {v: os.path.join(dest, v, "k", family) for v in ("ptx", "nofold")}
        for v, d in kdirs.items():
            os.makedirs(d, exist_ok=True)
            shutil.copy(folded, os.path.join(d, kernel + "_control.cubin"))
            shutil.copy(fmap, os.path.join(d, kernel + "_control.map"))
        entry = {"kernel": f"{family}/{kernel}", "contracts": contracts, "connect": connect}

        # ---- ptx: every component as PTX ----
        objects = []
        ptx_contracts = {}  # each contract copied beside its PTX, naming <object stem>.ptx
        for c in dict.fromkeys(paths):
            t = tomllib.load(open(c, "rb"))["component"]
            obj = t["object"]
            objects.append(os.path.join(build, "examples", objdir, obj))
            pobj = os.path.splitext(obj)[0] + ".ptx"
            if pobj not in record["ptx_objects"]:
                src = os.path.join(os.path.dirname(c), t["source"])
                ptx = nvrtc_ptx(lib, src, t.get("defines", []), include)
                open(os.path.join(ptxdir, pobj), "wb").write(ptx)
                record["ptx_objects"][pobj] = {"source": os.path.relpath(src, ROOT), "defines": t.get("defines", []),
                                               "bytes": len(ptx)}
            text = open(c).read()
            text, n = re.subn(r'^(object\s*=\s*)"[^"]*"', lambda m: f'{m.group(1)}"{pobj}"', text, flags=re.M)
            assert n == 1, c
            pc = os.path.join(ptxdir, os.path.relpath(c, EX).replace("/", "__"))
            open(pc, "w").write(text)
            ptx_contracts[c] = pc
        cmd = [pl, "link", *[ptx_contracts[c] for c in paths], "-o", os.path.join(kdirs["ptx"], kernel + ".cubin"),
               "--map", os.path.join(kdirs["ptx"], kernel + ".map")]
        for c in connect:
            cmd += ["--connect", c]
        p = run(cmd)
        entry["ptx_link_diagnostics"] = [l for l in p.stderr.splitlines() if "warning" in l or "error" in l]

        # ---- nofold: mutable bindings, everything else LTO ----
        g = open(gen).read()
        same = os.path.join(dest, "tmp", f"{family}_{kernel}")
        os.makedirs(same, exist_ok=True)
        objs = list(dict.fromkeys(objects))
        # The route itself, on the unmodified unit: must reproduce the folded cubin.
        # NVRTC records the program's name: compile it under the name a link gives it.
        open(os.path.join(same, "pipelink_generated.cu"), "w").write(g)
        run([pl, "compile", "pipelink_generated.cu", "-o", "gen.ltoir"], cwd=same)
        run([pl, "plain-link", os.path.join(same, "gen.ltoir"), *objs, "-o", os.path.join(same, "same_route.cubin")])
        a = open(os.path.join(same, "same_route.cubin"), "rb").read()
        entry["same_route_identical"] = a == open(folded, "rb").read()
        os.makedirs(os.path.join(same, "n"), exist_ok=True)
        u, nf, ns = unfold(g)
        entry["nofold_unconsted"] = {"facts": nf, "slot_tables": ns}
        open(os.path.join(same, "n", "pipelink_generated.cu"), "w").write(u)
        run([pl, "compile", "pipelink_generated.cu", "-o", "../gen_nofold.ltoir"], cwd=os.path.join(same, "n"))
        run([pl, "plain-link", os.path.join(same, "gen_nofold.ltoir"), *objs,
             "-o", os.path.join(kdirs["nofold"], kernel + ".cubin")])
        shutil.copy(fmap, os.path.join(kdirs["nofold"], kernel + ".map"))  # same allocation, same manifest
        for v in ("ptx", "nofold"):
            b = open(os.path.join(kdirs[v], kernel + ".cubin"), "rb").read()
            entry[f"{v}_cubin_sha256"] = hashlib.sha256(b).hexdigest()
        entry["folded_cubin_sha256"] = hashlib.sha256(open(folded, "rb").read()).hexdigest()
        record["kernels"].append(entry)
        print(json.dumps(entry, indent=1), flush=True)
    shutil.rmtree(os.path.join(dest, "tmp"), ignore_errors=True)
    json.dump(record, open(os.path.join(dest, "build.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
