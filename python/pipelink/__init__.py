"""PipeLink from Python: link GPU kernel components by their contracts, load the linked kernel and
launch it on PyTorch tensors.

    import pipelink
    r = pipelink.link(["loader/contract.toml", "mma/contract.toml", "mma/contract.toml",
                       "writer/contract.toml"], output="gemm.cubin", map="gemm.map",
                      library_dirs=["build/examples/gemm"])
    k = pipelink.Kernel("gemm.cubin", "gemm.map")          # needs the CUDA driver (and torch for tensors)
    a = pipelink.tensor_map(A, box=(k.fact("tile_m"), k.fact("tile_k")), swizzle="128B")
    k.launch(132, a_map=a, b_map=..., C=c_tensor, M=4096, N=4096, K=4096)   # on torch's current stream

The package is pure Python over a C ABI (include/pipelink/c_api.h) loaded with ctypes:
libpipelink_c.so (the linker; no GPU driver needed) and libpipelink_rt_c.so (the runtime; loaded
only when a Kernel or a tensor map is made). PyTorch is imported only when tensors are involved.
"""
from __future__ import annotations

import ctypes
import json
import operator
import os
import re
import sys
import weakref
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "Diagnostic", "LinkError", "LinkResult", "CudaError", "Kernel", "Function", "TensorMap",
    "link", "check", "compile", "tensor_map", "library_dir", "Selection",
]

_ABI_VERSION = 1
_ERR_SIZE = 4096
PathLike = Union[str, "os.PathLike[str]"]

# ---- finding and loading the libraries ---------------------------------------------------------


def _candidate_dirs() -> List[Path]:
    here = Path(__file__).resolve().parent
    dirs = []
    env = os.environ.get("PIPELINK_LIB_DIR")
    if env:
        dirs.append(Path(env))
    dirs.append(here)  # build/python/pipelink, or an installed package (the build copies them here)
    dirs.append(here.parent.parent / "build" / "python" / "pipelink")  # running from the source tree
    return dirs


def library_dir() -> Path:
    """The directory holding libpipelink_c.so (and libpipelink_rt_c.so)."""
    for d in _candidate_dirs():
        if (d / "libpipelink_c.so").is_file():
            return d
    raise ImportError(
        "pipelink: libpipelink_c.so not found (looked in "
        + ", ".join(str(d) for d in _candidate_dirs())
        + "); build PipeLink first (bash scripts/setup.sh) and use PYTHONPATH=build/python, "
        "or set PIPELINK_LIB_DIR")


class _Libs:
    """The two ctypes libraries, loaded on first use (the runtime one only when needed)."""

    def __init__(self) -> None:
        self._c: Optional[ctypes.CDLL] = None
        self._rt: Optional[ctypes.CDLL] = None

    @property
    def c(self) -> ctypes.CDLL:
        if self._c is None:
            path = library_dir() / "libpipelink_c.so"
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as first:
                # NVRTC / nvJitLink not where the build found them: load them from the toolkit.
                if not _preload_toolkit_libs():
                    raise ImportError(f"pipelink: cannot load {path}: {first} (set CUDA_HOME to the CUDA toolkit)") from first
                try:
                    lib = ctypes.CDLL(str(path))
                except OSError as e:
                    raise ImportError(f"pipelink: cannot load {path}: {e} (set CUDA_HOME to the CUDA toolkit)") from e
            _check_abi(lib.pl_abi_version, path)
            P, S, CP = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
            lib.pl_options_new.restype = P
            lib.pl_options_new.argtypes = []
            lib.pl_options_free.argtypes = [P]
            lib.pl_options_free.restype = None
            lib.pl_options_set.argtypes = [P, CP, CP, CP, S]
            lib.pl_options_set.restype = ctypes.c_int
            for f in (lib.pl_link, lib.pl_check):
                f.argtypes = [P]
                f.restype = P
            lib.pl_compile.argtypes = [P, CP]
            lib.pl_compile.restype = P
            lib.pl_result_ok.argtypes = [P]
            lib.pl_result_ok.restype = ctypes.c_int
            lib.pl_result_threads.argtypes = [P]
            lib.pl_result_threads.restype = ctypes.c_uint
            lib.pl_result_smem_bytes.argtypes = [P]
            lib.pl_result_smem_bytes.restype = ctypes.c_uint
            lib.pl_result_get.argtypes = [P, CP, ctypes.POINTER(S)]
            lib.pl_result_get.restype = P  # not c_char_p: the cubin holds NULs
            lib.pl_result_free.argtypes = [P]
            lib.pl_result_free.restype = None
            self._c = lib
        return self._c

    @property
    def rt(self) -> ctypes.CDLL:
        if self._rt is None:
            path = library_dir() / "libpipelink_rt_c.so"
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as e:
                raise CudaError(
                    f"pipelink: cannot load the runtime {path}: {e}. Running kernels needs the NVIDIA "
                    "driver (libcuda.so.1); linking does not") from e
            _check_abi(lib.plrt_abi_version, path)
            P, S, CP, E = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p
            I = ctypes.c_int
            lib.plrt_kernel_load.argtypes = [CP, CP, I, ctypes.POINTER(P), E, S]
            lib.plrt_kernel_load.restype = I
            lib.plrt_kernel_free.argtypes = [P]
            lib.plrt_kernel_free.restype = None
            lib.plrt_kernel_info_json.argtypes = [P]
            lib.plrt_kernel_info_json.restype = CP
            lib.plrt_set_ptr.argtypes = [P, CP, ctypes.c_ulonglong, E, S]
            lib.plrt_set_u32.argtypes = [P, CP, ctypes.c_uint, E, S]
            lib.plrt_set_i32.argtypes = [P, CP, ctypes.c_int, E, S]
            lib.plrt_set_u64.argtypes = [P, CP, ctypes.c_ulonglong, E, S]
            lib.plrt_set_f32.argtypes = [P, CP, ctypes.c_float, E, S]
            lib.plrt_set_tensormap.argtypes = [P, CP, ctypes.c_void_p, E, S]
            for f in (lib.plrt_set_ptr, lib.plrt_set_u32, lib.plrt_set_i32, lib.plrt_set_u64, lib.plrt_set_f32,
                      lib.plrt_set_tensormap):
                f.restype = I
            lib.plrt_launch.argtypes = [P, ctypes.c_uint, P, E, S]
            lib.plrt_launch.restype = I
            lib.plrt_reserve_workspace.argtypes = [P, ctypes.c_uint, P, E, S]
            lib.plrt_reserve_workspace.restype = I
            lib.plrt_tile_count.argtypes = [P, ctypes.POINTER(ctypes.c_ulonglong), E, S]
            lib.plrt_tile_count.restype = I
            lib.plrt_persistent_grid.argtypes = [P, ctypes.POINTER(ctypes.c_uint), P, E, S]
            lib.plrt_persistent_grid.restype = I
            lib.plrt_checked_report.argtypes = [P, E, S]
            lib.plrt_checked_report.restype = I
            U64 = ctypes.c_ulonglong
            lib.plrt_bf16_tensor_map.argtypes = [P, U64, U64, U64, U64, ctypes.c_uint, ctypes.c_uint, I, I, E, S]
            lib.plrt_bf16_tensor_map.restype = I
            lib.plrt_function_load.argtypes = [CP, CP, I, ctypes.POINTER(P), E, S]
            lib.plrt_function_load.restype = I
            lib.plrt_kernel_function.argtypes = [P, CP, ctypes.POINTER(P), E, S]
            lib.plrt_kernel_function.restype = I
            lib.plrt_function_free.argtypes = [P]
            lib.plrt_function_free.restype = None
            lib.plrt_function_launch.argtypes = [P, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, P, ctypes.POINTER(P), E, S]
            lib.plrt_function_launch.restype = I
            lib.plrt_function_launch_ex.argtypes = [P, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, P, ctypes.POINTER(P),
                                                    ctypes.c_uint, E, S]
            lib.plrt_function_launch_ex.restype = I
            self._rt = lib
        return self._rt


def _preload_toolkit_libs() -> bool:
    """Loads libnvrtc and libnvJitLink (RTLD_GLOBAL) from $CUDA_HOME, $CUDA_PATH, nvcc's toolkit or
    /usr/local/cuda, so libpipelink_c.so's dependencies resolve by soname. True if both loaded."""
    import glob
    import shutil
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots.append("/usr/local/cuda")
    dirs = [Path(r, sub) for r in roots if r for sub in ("lib64", "lib", "targets/x86_64-linux/lib")]
    loaded = set()
    for stem in ("libnvrtc.so.", "libnvJitLink.so."):
        for d in dirs:
            found = sorted(glob.glob(str(d / (stem + "[0-9]*"))), key=len)
            if found:
                try:
                    ctypes.CDLL(found[0], mode=ctypes.RTLD_GLOBAL)
                    loaded.add(stem)
                    break
                except OSError:
                    continue
    return len(loaded) == 2


def _check_abi(fn: Any, path: Path) -> None:
    fn.argtypes = []
    fn.restype = ctypes.c_int
    v = fn()
    if v != _ABI_VERSION:
        raise ImportError(f"pipelink: {path} has C ABI version {v}, this package needs {_ABI_VERSION}; rebuild")


_libs = _Libs()


def _b(s: Any) -> bytes:
    return os.fsencode(s) if isinstance(s, (str, os.PathLike)) else str(s).encode()


# ---- linking -----------------------------------------------------------------------------------


class Diagnostic:
    """One diagnostic of a link: severity ("error", "warning", "note"), rule (e.g.
    "fact-constraint"; "" for internal errors), message, file and line (0 when unknown) of the
    contract it concerns, and notes (the ">>> ..." provenance lines)."""

    __slots__ = ("severity", "rule", "message", "file", "line", "notes")

    def __init__(self, severity: str, rule: str, message: str, file: str = "", line: int = 0,
                 notes: Sequence[str] = ()) -> None:
        self.severity, self.rule, self.message = severity, rule, message
        self.file, self.line, self.notes = file, int(line), list(notes)

    @property
    def location(self) -> str:
        """"file:line" ("file" when the line is unknown, "" when the file is)."""
        return f"{self.file}:{self.line}" if self.file and self.line > 0 else self.file

    def __str__(self) -> str:
        s = f"pipelink: {self.severity}: " + (f"{self.location}: " if self.file else "") + self.message
        if self.rule:
            s += f" [{self.rule}]"
        return "\n".join([s] + [f">>> {n}" for n in self.notes])

    def __repr__(self) -> str:
        return (f"Diagnostic({self.severity!r}, {self.rule!r}, {self.message!r}, "
                f"{self.file!r}, {self.line}, {self.notes!r})")


class LinkError(Exception):
    """A refused link (or check or compile): .diagnostics lists every diagnostic (errors, warnings
    and notes, in report order), .errors only the errors, .text is the rendering the command line
    prints."""

    def __init__(self, diagnostics: List[Diagnostic], text: str) -> None:
        self.diagnostics = diagnostics
        self.text = text
        super().__init__(text.rstrip("\n") or "pipelink: link failed")

    @property
    def errors(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


class LinkResult:
    """A successful link: cubin (bytes; b"" for check), map (text), warnings, diagnostics,
    threads and smem_bytes of the launch, ptx (with emit_ptx/save_temps), generated_source,
    toolchain_log, and the paths written (output, map_path; None when not written)."""

    def __init__(self, **kw: Any) -> None:
        self.cubin: bytes = kw["cubin"]
        self.map: str = kw["map"]
        self.diagnostics: List[Diagnostic] = kw["diagnostics"]
        self.text: str = kw["text"]
        self.threads: int = kw["threads"]
        self.smem_bytes: int = kw["smem_bytes"]
        self.ptx: str = kw["ptx"]
        self.generated_source: str = kw["generated_source"]
        self.toolchain_log: str = kw["toolchain_log"]
        self.output: Optional[str] = kw["output"]
        self.map_path: Optional[str] = kw["map_path"]

    @property
    def warnings(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def facts(self) -> Dict[str, int]:
        """The resolved facts, from the map's facts section."""
        return _parse_map(self.map)["facts"]

    def __repr__(self) -> str:
        return (f"<pipelink.LinkResult {len(self.cubin)} cubin bytes, {self.threads} threads, "
                f"{self.smem_bytes} B smem, {len(self.warnings)} warnings>")


def _paths(xs: Union[None, PathLike, Iterable[PathLike]], what: str) -> List[Any]:
    if xs is None:
        return []
    if isinstance(xs, (str, bytes, os.PathLike)):
        return [xs]
    out = list(xs)
    for x in out:
        if not isinstance(x, (str, os.PathLike)):
            raise TypeError(f"pipelink: {what}: expected paths, got {type(x).__name__} {x!r}")
    return out


def _defines(defines: Union[None, str, Iterable[str], Mapping[str, Any]]) -> List[str]:
    if defines is None:
        return []
    if isinstance(defines, str):
        return [defines]
    if isinstance(defines, Mapping):
        return [k if v is None else f"{k}={v}" for k, v in defines.items()]
    return [str(d) for d in defines]


def _options(contracts: Any, output: Any, map: Any, library_dirs: Any, include_dirs: Any, connect: Any,
             defines: Any, arch: str, kernel_name: str, flags: Mapping[str, bool], tile_order: Optional[str] = None,
             blocks_per_sm: int = 1, tile_schedule: Optional[str] = None) -> int:
    lib = _libs.c
    o = lib.pl_options_new()
    if not o:
        raise MemoryError("pipelink: pl_options_new")
    err = ctypes.create_string_buffer(_ERR_SIZE)

    def put(key: str, value: Any) -> None:
        if lib.pl_options_set(o, key.encode(), _b(value), err, _ERR_SIZE) != 0:
            raise ValueError("pipelink: " + err.value.decode(errors="replace"))

    try:
        for c in _paths(contracts, "contracts"):
            put("input", c)
        for d in _paths(library_dirs, "library_dirs"):
            put("library_dir", d)
        for d in _paths(include_dirs, "include_dirs"):
            put("include_dir", d)
        packaged = library_dir() / "include"  # pipelink/device.cuh, for the generated unit
        if (packaged / "pipelink" / "device.cuh").is_file():
            put("include_dir", packaged)
        for d in _defines(defines):
            put("define", d)
        if connect:
            if not isinstance(connect, Mapping):
                raise TypeError("pipelink: connect must be a dict {port: pipe}")
            for port, pipe in connect.items():
                put("connect", f"{port}={pipe}")
        if output is not None:
            put("output", output)
        if map is not None:
            put("map", map)
        put("arch", arch)
        put("kernel_name", kernel_name)
        if tile_order is not None:
            if not isinstance(tile_order, str):
                raise TypeError("pipelink: tile_order must be a string (row_major, col_major or grouped:G)")
            put("tile_order", tile_order)
        if tile_schedule is not None:
            if not isinstance(tile_schedule, str):
                raise TypeError("pipelink: tile_schedule must be a string (data-parallel, split-k or stream-k[:W])")
            put("tile_schedule", tile_schedule)
        if isinstance(blocks_per_sm, bool) or not isinstance(blocks_per_sm, int):
            raise TypeError("pipelink: blocks_per_sm must be an int (1..32)")
        if blocks_per_sm != 1:
            put("blocks_per_sm", str(blocks_per_sm))
        for k, v in flags.items():
            put(k, "1" if v else "0")
    except BaseException:
        lib.pl_options_free(o)
        raise
    return o


def _get(r: int, what: str) -> bytes:
    size = ctypes.c_size_t(0)
    p = _libs.c.pl_result_get(r, what.encode(), ctypes.byref(size))
    return ctypes.string_at(p, size.value) if p and size.value else b""


def _finish(r: int, output: Any, map: Any) -> LinkResult:
    lib = _libs.c
    try:
        raw = json.loads(_get(r, "diagnostics_json").decode("utf-8", errors="replace") or "[]")
        diags = [Diagnostic(d["severity"], d["rule"], d["message"], d["file"], d["line"], d["notes"]) for d in raw]
        text = _get(r, "diagnostics_text").decode("utf-8", errors="replace")
        if not lib.pl_result_ok(r):
            raise LinkError(diags, text)
        return LinkResult(
            cubin=_get(r, "cubin"), map=_get(r, "map").decode("utf-8", errors="replace"), diagnostics=diags, text=text,
            threads=int(lib.pl_result_threads(r)), smem_bytes=int(lib.pl_result_smem_bytes(r)),
            ptx=_get(r, "ptx").decode("utf-8", errors="replace"),
            generated_source=_get(r, "generated_source").decode("utf-8", errors="replace"),
            toolchain_log=_get(r, "toolchain_log").decode("utf-8", errors="replace"),
            output=None if output is None else os.fspath(output), map_path=None if map is None else os.fspath(map))
    finally:
        lib.pl_result_free(r)


def link(contracts: Union[PathLike, Iterable[PathLike]], output: Optional[PathLike] = None,
         map: Optional[PathLike] = None, library_dirs: Iterable[PathLike] = (), connect: Optional[Mapping[str, str]] = None,
         defines: Union[None, Iterable[str], Mapping[str, Any]] = None, arch: str = "sm_90a", control: bool = False,
         include_dirs: Iterable[PathLike] = (), kernel_name: str = "pipelink_kernel", save_temps: bool = False,
         emit_ptx: bool = False, verbose: bool = False, pdl: bool = False, tile_order: Optional[str] = None,
         blocks_per_sm: int = 1, pdl_early_trigger: bool = False, min_registers: bool = False,
         tile_schedule: Optional[str] = None, fatal_warnings: bool = False) -> LinkResult:
    """Links contracts into one kernel (`pipelink link`). A contract listed twice is instantiated
    twice. Writes `output` (the cubin) and `map` when given, all or nothing; the result holds the
    cubin and the map either way. Raises LinkError (with every diagnostic) when the link is
    refused; then nothing is written. pdl=True (`--pdl`): programmatic dependent launch; the
    entry waits (griddepcontrol.wait) before any component role, and a Kernel loaded from the
    result launches with the programmatic-stream-serialization attribute. tile_order
    (`--tile-order`): "row_major", "col_major" or "grouped:G", for components whose [tiles] say
    order = "any". blocks_per_sm (`--blocks-per-sm`): allocate so that that many blocks fit on one
    SM (an N-th of its shared memory and registers each); a Kernel loaded from the result checks
    that the driver fits them. pdl_early_trigger (`--pdl-early-trigger`, with pdl): the entry lets
    the next grid launch before its wait. min_registers (`--min-registers`): launch with the
    fewest registers per thread that the warpgroups' budgets fit in, leaving the rest of the SM's
    registers to other kernels' blocks. tile_schedule (`--tile-schedule`): "data-parallel" (the
    default), "split-k" or "stream-k[:W]" (tiles of the last partial wave split along k across
    blocks; a Kernel loaded from the result allocates the partials' workspace itself).
    fatal_warnings (`--fatal-warnings`): every warning is raised as an error (LinkError; nothing
    written), e.g. a kernel that spills registers."""
    _flag("pipelink.link: pdl", pdl)
    _flag("pipelink.link: pdl_early_trigger", pdl_early_trigger)
    _flag("pipelink.link: min_registers", min_registers)
    _flag("pipelink.link: fatal_warnings", fatal_warnings)
    o = _options(contracts, output, map, library_dirs, include_dirs, connect, defines, arch, kernel_name,
                 {"control": control, "save_temps": save_temps, "emit_ptx": emit_ptx, "verbose": verbose, "pdl": pdl,
                  "pdl_early_trigger": pdl_early_trigger, "min_registers": min_registers,
                  "fatal_warnings": fatal_warnings}, tile_order, blocks_per_sm,
                 tile_schedule)
    try:
        r = _libs.c.pl_link(o)
    finally:
        _libs.c.pl_options_free(o)
    if not r:
        raise MemoryError("pipelink: pl_link")
    return _finish(r, output, map)


def check(contracts: Union[PathLike, Iterable[PathLike]], map: Optional[PathLike] = None,
          connect: Optional[Mapping[str, str]] = None, defines: Union[None, Iterable[str], Mapping[str, Any]] = None,
          arch: str = "sm_90a", library_dirs: Iterable[PathLike] = (), include_dirs: Iterable[PathLike] = (),
          kernel_name: str = "pipelink_kernel", pdl: bool = False, tile_order: Optional[str] = None,
          blocks_per_sm: int = 1, pdl_early_trigger: bool = False, min_registers: bool = False,
          tile_schedule: Optional[str] = None, fatal_warnings: bool = False) -> LinkResult:
    """Checks and allocates only (`pipelink check`): the result has the map and no cubin; writes
    only `map` when given. Raises LinkError when the contracts are refused (with fatal_warnings,
    also when they would only be warned about)."""
    _flag("pipelink.check: pdl", pdl)
    _flag("pipelink.check: pdl_early_trigger", pdl_early_trigger)
    _flag("pipelink.check: min_registers", min_registers)
    _flag("pipelink.check: fatal_warnings", fatal_warnings)
    o = _options(contracts, None, map, library_dirs, include_dirs, connect, defines, arch, kernel_name,
                 {"pdl": pdl, "pdl_early_trigger": pdl_early_trigger, "min_registers": min_registers,
                  "fatal_warnings": fatal_warnings}, tile_order, blocks_per_sm,
                 tile_schedule)
    try:
        r = _libs.c.pl_check(o)
    finally:
        _libs.c.pl_options_free(o)
    if not r:
        raise MemoryError("pipelink: pl_check")
    return _finish(r, None, map)


def compile(source: PathLike, output: PathLike, arch: str = "sm_90a", include_dirs: Iterable[PathLike] = (),
            defines: Union[None, Iterable[str], Mapping[str, Any]] = None) -> LinkResult:
    """Compiles one component source to LTO-IR with NVRTC (`pipelink compile`), writing `output`.
    Raises LinkError on a compile error."""
    o = _options(None, output, None, (), include_dirs, None, defines, arch, "pipelink_kernel", {})
    try:
        r = _libs.c.pl_compile(o, _b(source))
    finally:
        _libs.c.pl_options_free(o)
    if not r:
        raise MemoryError("pipelink: pl_compile")
    return _finish(r, output, None)


def _flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__} {value!r}")


def _parse_map(text: str) -> Dict[str, Any]:
    """The launch line, params and facts of a map's text (the same lines pipelink::Module reads)."""
    out: Dict[str, Any] = {"params": {}, "boxes": {}, "facts": {}, "name": None, "threads": 0, "smem_bytes": 0, "pdl": False}
    section = None
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if line.startswith("== "):
            section = w[1] if len(w) > 1 else None
        elif line.startswith("launch ") and len(w) >= 6:  # keywords at column 0 only: names are indented
            out["name"], out["threads"], out["smem_bytes"] = w[1], int(w[3]), int(w[5])
            out["pdl"] = "pdl" in w[6:]
        elif line.startswith("param ") and len(w) >= 4:
            out["params"][w[1]] = w[2]
            # a tensormap whose contract names its tensor: "box bf16[128x64] swizzle 128B"
            b = re.match(r"box (\w+)\[(\d+)x(\d+)\] swizzle (\S+)$", " ".join(w[4:8])) if len(w) >= 8 and w[4] == "box" else None
            if b:
                out["boxes"][w[1]] = {"rows": int(b.group(2)), "cols": int(b.group(3)), "dtype": b.group(1), "swizzle": b.group(4)}
        elif section == "facts" and len(w) >= 3 and w[1] == "=":
            try:
                out["facts"][w[0]] = int(w[2])
            except ValueError:
                pass
    return out


# ---- running -----------------------------------------------------------------------------------


class CudaError(RuntimeError):
    """A CUDA driver call failed, the driver is missing, or a launch was refused."""


def _torch():
    try:
        import torch  # noqa: PLC0415 — imported lazily: linking needs no torch
    except ImportError as e:
        raise ImportError("pipelink: tensors need PyTorch (import torch failed)") from e
    return torch


def _is_tensor(x: Any) -> bool:
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


_SWIZZLE = {None: 0, "none": 0, "32B": 32, "64B": 64, "128B": 128, 0: 0, 32: 32, 64: 64, 128: 128}
_L2 = {None: 0, "none": 0, "64B": 64, "128B": 128, "256B": 256, 0: 0, 64: 64, 128: 128, 256: 256}


class TensorMap:
    """A TMA tensor map (CUtensorMap, 128 bytes) over a 2-D bf16 torch tensor; made by
    tensor_map(). Keeps the tensor alive."""

    __slots__ = ("tensor", "shape", "box", "swizzle", "l2_promotion", "row_stride_bytes", "device", "_bytes", "__weakref__")

    # Read-only once made: a Kernel checks box and swizzle against the link's contracts, so they
    # must stay what the 128 encoded bytes say (so copy.copy and pickle refuse it too; the encoded
    # bytes themselves are a ctypes buffer, private).
    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"pipelink.TensorMap is read-only ('{name}'): make another with pipelink.tensor_map() "
                             "or Kernel.tensor_map()")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"pipelink.TensorMap is read-only ('{name}')")

    def __repr__(self) -> str:
        return (f"<pipelink.TensorMap bf16{list(self.shape)} box {self.box} swizzle {self.swizzle} "
                f"row stride {self.row_stride_bytes} B on cuda:{self.device}>")


def tensor_map(t: Any, box: Tuple[int, int], swizzle: Optional[str] = "128B",
               l2_promotion: Optional[str] = "128B") -> TensorMap:
    """The tensor map a TMA component reads or writes: `t` a 2-D bf16 CUDA tensor [rows, cols] with
    a contiguous inner dimension (a column slice of a wider matrix is fine), copied in boxes of
    box = (box_rows, box_cols) elements. swizzle: "none", "32B", "64B" or "128B", as the
    component's contract declares; l2_promotion: "none", "64B", "128B" or "256B". Elements outside
    the tensor read as zeros and are dropped on stores."""
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"pipelink.tensor_map: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.bfloat16:
        raise TypeError(f"pipelink.tensor_map: tensor dtype is {t.dtype}, must be torch.bfloat16")
    if t.dim() != 2:
        raise ValueError(f"pipelink.tensor_map: tensor must be 2-D [rows, cols], has shape {tuple(t.shape)}")
    if t.device.type != "cuda":
        raise ValueError(f"pipelink.tensor_map: tensor is on {t.device}, must be on a CUDA device")
    rows, cols = (int(s) for s in t.shape)
    if rows < 1 or cols < 1:
        raise ValueError(f"pipelink.tensor_map: tensor shape {tuple(t.shape)} is empty")
    if t.stride(1) != 1 and cols > 1:
        raise ValueError(f"pipelink.tensor_map: the inner dimension must be contiguous (stride {t.stride(1)}, not 1)")
    row_stride = int(t.stride(0)) * 2 if rows > 1 else cols * 2
    if rows > 1 and t.stride(0) < cols:
        raise ValueError(f"pipelink.tensor_map: rows overlap (row stride {t.stride(0)} < {cols} columns)")
    if row_stride % 16 != 0:
        raise ValueError(f"pipelink.tensor_map: the row stride is {row_stride} bytes, must be a multiple of 16")
    if t.data_ptr() % 16 != 0:
        raise ValueError(f"pipelink.tensor_map: the tensor's base address {t.data_ptr():#x} is not 16-byte aligned")
    try:
        box_rows, box_cols = (operator.index(b) for b in box)
    except (TypeError, ValueError):
        raise TypeError(f"pipelink.tensor_map: box must be (rows, cols) integers, got {box!r}") from None
    if not (1 <= box_rows <= 256 and 1 <= box_cols <= 256):
        raise ValueError(f"pipelink.tensor_map: box {(box_rows, box_cols)}: each side must be 1..256 elements")
    if (box_cols * 2) % 16 != 0:
        raise ValueError(f"pipelink.tensor_map: box inner side is {box_cols * 2} bytes, must be a multiple of 16")
    if swizzle not in _SWIZZLE:
        raise ValueError(f"pipelink.tensor_map: swizzle {swizzle!r}: use 'none', '32B', '64B' or '128B'")
    if l2_promotion not in _L2:
        raise ValueError(f"pipelink.tensor_map: l2_promotion {l2_promotion!r}: use 'none', '64B', '128B' or '256B'")
    sw = _SWIZZLE[swizzle]
    if sw and box_cols * 2 > sw:
        raise ValueError(f"pipelink.tensor_map: box inner side {box_cols * 2} bytes exceeds the {sw}-byte swizzle span")
    lib = _libs.rt
    buf = (ctypes.c_ubyte * 128)()
    err = ctypes.create_string_buffer(_ERR_SIZE)
    if lib.plrt_bf16_tensor_map(buf, t.data_ptr(), rows, cols, row_stride, box_rows, box_cols, sw, _L2[l2_promotion], err,
                                _ERR_SIZE) != 0:
        raise CudaError("pipelink.tensor_map: " + err.value.decode(errors="replace"))
    m = TensorMap()
    fields = {"tensor": t, "shape": (rows, cols), "box": (box_rows, box_cols), "swizzle": swizzle or "none",
              "l2_promotion": l2_promotion or "none", "row_stride_bytes": row_stride,
              "device": t.device.index if t.device.index is not None else torch.cuda.current_device(), "_bytes": buf}
    for k, v in fields.items():
        object.__setattr__(m, k, v)
    return m


_U32, _U64 = (1 << 32), (1 << 64)


class Kernel:
    """A linked kernel loaded through the CUDA driver into its device's primary context (the one
    PyTorch uses).

        k = pipelink.Kernel("fused.cubin", "fused.map")   # map defaults to the cubin's .map
        k.set(x_map=pipelink.tensor_map(X, box=(k.fact("tile_m"), 64)), M=4096)
        k.launch(grid, N=25600, ...)                        # more params by name; torch's current stream

    Parameters are typed by the map: ptr takes a CUDA tensor (its data_ptr) or an int address,
    u32/i32/u64 an int in range, f32 a number, tensormap a pipelink.TensorMap. A launch copies
    the parameters as they are (a CUDA graph captures them); tensors set stay referenced by the
    kernel until replaced. `k.pdl` is True when the cubin was linked with pdl=True (`--pdl`, the
    manifest's `pdl` line): then every launch carries the programmatic-stream-serialization
    attribute, and only then."""

    def __init__(self, cubin: PathLike, map: Optional[PathLike] = None, device: Optional[int] = None) -> None:
        self._h = None
        self._functions: "weakref.WeakSet[Function]" = weakref.WeakSet()  # the Functions of Kernel.function
        cubin = os.fspath(cubin)
        if map is None:
            map = os.path.splitext(cubin)[0] + ".map"
        map = os.fspath(map)
        for p, what in ((cubin, "cubin"), (map, "map")):
            if not os.path.isfile(p):
                raise FileNotFoundError(f"pipelink.Kernel: no {what} file '{p}'")
        if device is None:
            device = 0
            t = sys.modules.get("torch")
            if t is not None and t.cuda.is_available():
                device = t.cuda.current_device()
        lib = _libs.rt
        h = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERR_SIZE)
        if lib.plrt_kernel_load(_b(cubin), _b(map), int(device), ctypes.byref(h), err, _ERR_SIZE) != 0:
            raise CudaError(f"pipelink.Kernel('{cubin}'): " + err.value.decode(errors="replace"))
        self._h = h.value
        self._lib = lib
        info = json.loads(lib.plrt_kernel_info_json(self._h).decode("utf-8", errors="replace"))
        self.cubin_path, self.map_path = cubin, map
        self.name: str = info["name"]
        self.threads: int = info["threads"]
        self.smem_bytes: int = info["smem_bytes"]
        self.device: int = info["device"]
        self.pdl: bool = bool(info.get("pdl", False))
        # bytes of partials workspace per block: > 0 for a split tile schedule (reserve_workspace)
        self.workspace_stride: int = int(info.get("workspace_stride", 0))
        self.params: Dict[str, str] = dict(info["params"])  # name -> type
        # tensormap params whose contracts name the tensor their copies move: name -> the link's
        # {"rows", "cols", "dtype", "swizzle"} (set() takes a plain tensor for them)
        self.boxes: Dict[str, Dict[str, Any]] = dict(info.get("boxes", {}))
        self.facts: Dict[str, int] = dict(info["facts"])
        self._set: Dict[str, Any] = {}  # name -> what was set (keeps tensors alive)
        # Tile extents the kernel reads from device memory ([tiles] device_extent): their ptr param
        # must be the address of a u32 (the map's tile-sequence line names them).
        self.device_extents = set()
        try:
            with open(map, encoding="utf-8", errors="replace") as f:
                m = re.search(r"extent ([\w, ]+) read from device memory", f.read())
            if m:
                self.device_extents = {x.strip() for x in m.group(1).split(",") if x.strip()}
        except OSError:
            pass

    def fact(self, name: str) -> int:
        """A resolved fact of the link (e.g. "tile_m")."""
        try:
            return self.facts[name]
        except KeyError:
            raise KeyError(f"pipelink.Kernel: the map has no fact '{name}' (facts: {', '.join(sorted(self.facts))})") from None

    def _call(self, fn: Any, *args: Any) -> None:
        if self._h is None:
            raise ValueError("pipelink.Kernel: closed")
        err = ctypes.create_string_buffer(_ERR_SIZE)
        if fn(self._h, *args, err, _ERR_SIZE) != 0:
            raise CudaError("pipelink: " + err.value.decode(errors="replace"))

    def _set_one(self, name: str, value: Any) -> None:
        ty = self.params.get(name)
        if ty is None:
            raise TypeError(f"pipelink.Kernel: the linked kernel has no param '{name}' (params: "
                            + ", ".join(f"{n}: {t}" for n, t in sorted(self.params.items())) + ")")
        lib, n = self._lib, name.encode()
        if ty == "tensormap":
            box = self.boxes.get(name)
            if box is not None and _is_tensor(value):  # the link knows what one copy moves
                value = self.tensor_map(name, value)
            if not isinstance(value, TensorMap):
                raise TypeError(f"pipelink.Kernel: param '{name}' is a tensormap: pass pipelink.tensor_map(tensor, box=..., "
                                f"swizzle=...)" + (" or the tensor itself (the link gives the box)" if box is not None else "") +
                                f", not {type(value).__name__}")
            if box is not None and box["dtype"] != "bf16":
                raise TypeError(f"pipelink.Kernel: param '{name}': the link's map copies {box['dtype']}, and pipelink.tensor_map "
                                f"makes bf16 maps only")
            if box is not None and (tuple(value.box) != (box["rows"], box["cols"]) or
                                    _SWIZZLE.get(value.swizzle) != _SWIZZLE.get(box["swizzle"])):
                raise ValueError(f"pipelink.Kernel: param '{name}': the tensor map copies boxes of {tuple(value.box)} with swizzle "
                                 f"{value.swizzle}, but the link's contracts say {(box['rows'], box['cols'])} with swizzle "
                                 f"{box['swizzle']} (pass the tensor itself and the kernel builds the map)")
            if value.device != self.device:
                raise ValueError(f"pipelink.Kernel: param '{name}': tensor map on cuda:{value.device}, kernel on cuda:{self.device}")
            self._call(lib.plrt_set_tensormap, n, ctypes.cast(value._bytes, ctypes.c_void_p))
        elif ty == "ptr":
            if _is_tensor(value):
                if value.device.type != "cuda" or (value.device.index is not None and value.device.index != self.device):
                    raise ValueError(f"pipelink.Kernel: param '{name}' (ptr): tensor is on {value.device}, kernel on cuda:{self.device}")
                if name in self.device_extents:
                    torch = _torch()
                    if value.dtype not in (torch.int32, getattr(torch, "uint32", torch.int32)) or value.numel() < 1:
                        raise TypeError(f"pipelink.Kernel: param '{name}' is a tile extent read from device memory: pass a "
                                        f"CUDA tensor of int32 or uint32 holding it, not {value.dtype} with {value.numel()} elements")
                addr = value.data_ptr()
            elif isinstance(value, TensorMap):
                raise TypeError(f"pipelink.Kernel: param '{name}' is a ptr, not a tensormap: pass the tensor itself")
            else:
                addr = self._int(name, ty, value, 0, _U64)
            if name in self.device_extents and (addr == 0 or addr % 4):
                raise ValueError(f"pipelink.Kernel: param '{name}' is a tile extent read from device memory: it must be the "
                                 f"address of a u32 (nonzero, 4-byte aligned), not {addr:#x}")
            self._call(lib.plrt_set_ptr, n, ctypes.c_ulonglong(addr))
        elif ty in ("u32", "i32", "u64"):
            lo, hi = {"u32": (0, _U32), "i32": (-(1 << 31), 1 << 31), "u64": (0, _U64)}[ty]
            v = self._int(name, ty, value, lo, hi)
            fn = {"u32": lib.plrt_set_u32, "i32": lib.plrt_set_i32, "u64": lib.plrt_set_u64}[ty]
            self._call(fn, n, v)
        elif ty == "f32":
            if isinstance(value, bool) or _is_tensor(value) or isinstance(value, TensorMap):
                raise TypeError(f"pipelink.Kernel: param '{name}' is f32: pass a number, not {type(value).__name__}")
            try:
                f = float(value)
            except (TypeError, ValueError):
                raise TypeError(f"pipelink.Kernel: param '{name}' is f32: pass a number, not {type(value).__name__}") from None
            self._call(lib.plrt_set_f32, n, ctypes.c_float(f))
        else:
            raise TypeError(f"pipelink.Kernel: param '{name}' has type '{ty}', which this package does not know")
        self._set[name] = value

    @staticmethod
    def _int(name: str, ty: str, value: Any, lo: int, hi: int) -> int:
        if isinstance(value, (bool, float)) or _is_tensor(value) and value.dim() != 0:
            raise TypeError(f"pipelink.Kernel: param '{name}' is {ty}: pass an int, not {type(value).__name__}")
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"pipelink.Kernel: param '{name}' is {ty}: pass an int, not {type(value).__name__}") from None
        if not lo <= v < hi:
            raise ValueError(f"pipelink.Kernel: param '{name}' is {ty}: {v} is out of range [{lo}, {hi - 1}]")
        return v

    def tensor_map(self, name: str, t: Any, l2_promotion: Optional[str] = "256B") -> TensorMap:
        """The tensor map of tensormap param `name` over the 2-D tensor `t`, with the box and swizzle
        the link gives it (its contract names the tensor one copy moves: [[param]] tensor / box).
        set(name=t) does the same with l2_promotion "256B"."""
        box = self.boxes.get(name)
        if box is None:
            raise TypeError(f"pipelink.Kernel.tensor_map: param '{name}' has no box in the link (a tensormap whose contract "
                            f"names no tensor, or no such tensormap): build it with pipelink.tensor_map(t, box=..., swizzle=...)")
        if box["dtype"] != "bf16":
            raise TypeError(f"pipelink.Kernel.tensor_map: param '{name}' copies {box['dtype']}; pipelink.tensor_map builds bf16 maps only")
        return tensor_map(t, box=(box["rows"], box["cols"]), swizzle=box["swizzle"], l2_promotion=l2_promotion)

    def set(self, **params: Any) -> "Kernel":
        """Sets parameters by name (type-checked against the map). Returns the kernel."""
        for name, value in params.items():
            self._set_one(name, value)
        return self

    def launch(self, grid: Union[None, int, Tuple[int, ...]] = None, stream: Any = None, **params: Any) -> None:
        """Sets `params`, then launches `grid` blocks of `threads` threads with `smem_bytes` of
        dynamic shared memory on `stream`: by default PyTorch's current stream on the kernel's
        device (so torch.cuda.graph captures it), else the legacy default stream; a
        torch.cuda.Stream or a raw cudaStream_t int is taken too. Asynchronous. Without `grid`,
        persistent_grid() for the params as set (a link with a tile sequence)."""
        self.set(**params)
        missing = sorted(set(self.params) - set(self._set))
        if missing:
            raise TypeError("pipelink.Kernel.launch: params never set: " + ", ".join(f"{n} ({self.params[n]})" for n in missing))
        if grid is None:
            grid = self.persistent_grid(stream)
        if isinstance(grid, tuple):
            if len(grid) == 0 or any(g != 1 for g in grid[1:]):
                raise ValueError(f"pipelink.Kernel.launch: the grid is one-dimensional, got {grid}")
            grid = grid[0]
        g = self._int("grid", "a block count", grid, 1, _U32)
        self._call(self._lib.plrt_launch, ctypes.c_uint(g), ctypes.c_void_p(self._stream(stream)))

    def _stream(self, stream: Any) -> int:
        if stream is None:
            t = sys.modules.get("torch")
            if t is None:
                return 0
            return int(t.cuda.current_stream(self.device).cuda_stream)
        if isinstance(stream, int):
            return stream
        if hasattr(stream, "cuda_stream"):
            return int(stream.cuda_stream)
        raise TypeError(f"pipelink.Kernel.launch: stream must be a torch.cuda.Stream or an int, not {type(stream).__name__}")

    def reserve_workspace(self, grid: int, stream: Any = None) -> None:
        """A kernel linked with a split tile schedule (tile_schedule="split-k" / "stream-k"; its
        info["workspace_stride"] > 0) sums split tiles through a workspace of grid x stride bytes
        that the first launch of a grid that large allocates and zeroes. A CUDA graph capture
        cannot allocate: launch once before capturing, or call this with the grid you will
        capture. A no-op for other kernels."""
        g = self._int("grid", "a block count", grid, 1, _U32)
        self._call(self._lib.plrt_reserve_workspace, ctypes.c_uint(g), ctypes.c_void_p(self._stream(stream)))

    def tile_count(self) -> int:
        """The tiles of a launch with the params set now: ceil(M / tile_m) * ceil(N / tile_n) over
        the link's [tiles] extents. Raises for a link without a tile sequence, an extent read from
        device memory, or an extent not yet set."""
        t = ctypes.c_ulonglong(0)
        self._call(self._lib.plrt_tile_count, ctypes.byref(t))
        return t.value

    def function(self, name: str, signature: Sequence[str]) -> "Function":
        """Another kernel of this link's cubin, by name (C linkage), as a pipelink.Function: for
        the kernels a component ships beside its entry, e.g. gu_loader_packed's gu_pack_w, which
        packs a weight in the layout of this link's loader (docs/components.md 5.8):

            pack = k.function("gu_pack_w", ["ptr", "u32", "u32", "u32", "u32", "u32", "ptr", "u64"])

        The function is taken from the module this Kernel loaded, not from the cubin file as it
        is now (a relink between the two would otherwise pair a pack of one layout with a loader
        of another). It keeps this Kernel alive, and closing the Kernel closes it (the module stays
        loaded until both are closed, in either order)."""
        if self._h is None:
            raise ValueError("pipelink.Kernel: closed")
        f = Function._borrowed(self, name, signature)
        self._functions.add(f)
        return f

    def persistent_grid(self, stream: Any = None) -> int:
        """The grid to launch with the params set now. The tile walk is persistent, so more
        blocks than fit at once only queue. A data-parallel link: the fewest blocks that take as
        many rounds of tiles as every resident block would, ceil(T / ceil(T / R)) (each block the
        same number of tiles; where the weight stream is the cost, fewer streams at once read DRAM
        faster). A split schedule: the R resident blocks (it splits the last round itself). A
        cluster link: the resident clusters times their size. A link for several blocks per SM:
        min(T, R) (fewer blocks would load SMs unevenly). An extent read from device memory: R.
        Raises for a link without a tile sequence (each block is then one piece of work) or an
        extent not yet set. The rule: include/pipelink/grid.h."""
        g = ctypes.c_uint(0)
        self._call(self._lib.plrt_persistent_grid, ctypes.byref(g), ctypes.c_void_p(self._stream(stream)))
        return g.value

    def checked_report(self) -> str:
        """In a PL_CHECKED link: the first pipe wait that timed out, or ""."""
        if self._h is None:
            return ""
        buf = ctypes.create_string_buffer(_ERR_SIZE)
        self._lib.plrt_checked_report(self._h, buf, _ERR_SIZE)
        return buf.value.decode(errors="replace")

    def close(self) -> None:
        """Unloads the module (also done when the kernel is garbage-collected). Work already
        enqueued must be finished first (e.g. torch.cuda.synchronize())."""
        if self._h is not None:
            for f in list(getattr(self, "_functions", ())):  # the functions sharing this module (Kernel.function)
                f.close()
            self._lib.plrt_kernel_free(self._h)
            self._h = None
            self._set.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 — interpreter shutdown
            pass

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<pipelink.Kernel {self.name} from '{self.cubin_path}': {self.threads} threads, {self.smem_bytes} B smem, "
                f"params {self.params}>")


_PLRT_LAUNCH_PDL = 1  # include/pipelink/c_api.h
_CTYPES = {"ptr": ctypes.c_ulonglong, "u32": ctypes.c_uint, "i32": ctypes.c_int, "u64": ctypes.c_ulonglong,
           "f32": ctypes.c_float}


class Function:
    """A plain kernel (not linked: e.g. the MoE routing kernels), loaded from a cubin by its entry
    point name (C linkage) into its device's primary context, and launched with arguments typed by
    `signature`, a list of "ptr", "u32", "i32", "u64", "f32" in the kernel's order:

        topk = pipelink.Function("routing.cubin", "moe_topk", ["ptr", "u32", "u32", "ptr", "ptr", "ptr", "ptr"])
        topk.launch(grid, 256, logits, T, 128, counts, topk_e, topk_w, topk_pos)   # torch's current stream

    ptr takes a CUDA tensor (its data_ptr) or an int address; the others an int or a number in
    range. The types must match the kernel's: the driver cannot check them. launch(..., pdl=True)
    launches with the programmatic-stream-serialization attribute (programmatic dependent
    launch): the kernel may then start before the stream's previous kernel ends, so it must run
    griddepcontrol.wait (cudaGridDependencySynchronize()) before touching memory that kernel
    reads or writes; the package cannot check that."""

    def __init__(self, cubin: PathLike, name: str, signature: Sequence[str], device: Optional[int] = None) -> None:
        self._h = None
        cubin = os.fspath(cubin)
        if not os.path.isfile(cubin):
            raise FileNotFoundError(f"pipelink.Function: no cubin file '{cubin}'")
        for t in signature:
            if t not in _CTYPES:
                raise ValueError(f"pipelink.Function: argument type {t!r}: use one of {', '.join(_CTYPES)}")
        if device is None:
            device = 0
            t = sys.modules.get("torch")
            if t is not None and t.cuda.is_available():
                device = t.cuda.current_device()
        lib = _libs.rt
        h = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERR_SIZE)
        if lib.plrt_function_load(_b(cubin), name.encode(), int(device), ctypes.byref(h), err, _ERR_SIZE) != 0:
            raise CudaError(f"pipelink.Function('{cubin}', '{name}'): " + err.value.decode(errors="replace"))
        self._h, self._lib = h.value, lib
        self.name, self.signature, self.device = name, list(signature), int(device)

    def launch(self, grid: int, block: int, *args: Any, smem_bytes: int = 0, stream: Any = None, pdl: bool = False) -> None:
        """Launches grid x block threads (1-D) with `args` in signature order; asynchronous, on
        torch's current stream by default (see Kernel.launch). pdl=True: with the
        programmatic-stream-serialization attribute (see the class)."""
        if self._h is None:
            raise ValueError("pipelink.Function: closed")
        _flag("pipelink.Function.launch: pdl", pdl)
        if len(args) != len(self.signature):
            raise TypeError(f"pipelink.Function {self.name}: {len(self.signature)} arguments expected, got {len(args)}")
        vals = []
        for i, (ty, v) in enumerate(zip(self.signature, args)):
            what = f"argument {i} of {self.name}"
            if ty == "ptr":
                if _is_tensor(v):
                    if v.device.type != "cuda":
                        raise ValueError(f"pipelink.Function: {what} (ptr): tensor is on {v.device}")
                    v = v.data_ptr()
                vals.append(_CTYPES[ty](Kernel._int(what, ty, v, 0, _U64)))
            elif ty == "f32":
                vals.append(ctypes.c_float(float(v)))
            else:
                lo, hi = {"u32": (0, _U32), "i32": (-(1 << 31), 1 << 31), "u64": (0, _U64)}[ty]
                vals.append(_CTYPES[ty](Kernel._int(what, ty, v, lo, hi)))
        ptrs = (ctypes.c_void_p * max(1, len(vals)))(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in vals])
        err = ctypes.create_string_buffer(_ERR_SIZE)
        st = Kernel._stream(self, stream)  # uses self.device
        if self._lib.plrt_function_launch_ex(self._h, int(grid), int(block), int(smem_bytes), ctypes.c_void_p(st),
                                             ctypes.cast(ptrs, ctypes.POINTER(ctypes.c_void_p)), _PLRT_LAUNCH_PDL if pdl else 0,
                                             err, _ERR_SIZE) != 0:
            raise CudaError("pipelink.Function: " + err.value.decode(errors="replace"))

    @classmethod
    def _borrowed(cls, kernel: "Kernel", name: str, signature: Sequence[str]) -> "Function":
        """Kernel.function: an entry point of `kernel`'s loaded module."""
        f = cls.__new__(cls)
        f._h = None
        for t in signature:
            if t not in _CTYPES:
                raise ValueError(f"pipelink.Kernel.function: argument type {t!r}: use one of {', '.join(_CTYPES)}")
        lib = _libs.rt
        h = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERR_SIZE)
        if lib.plrt_kernel_function(kernel._h, name.encode(), ctypes.byref(h), err, _ERR_SIZE) != 0:
            raise CudaError(f"pipelink.Kernel.function('{name}') of '{kernel.cubin_path}': " + err.value.decode(errors="replace"))
        f._h, f._lib = h.value, lib
        f.name, f.signature, f.device = name, list(signature), int(kernel.device)
        f._kernel = kernel  # the module's owner outlives the function
        return f

    def close(self) -> None:
        if self._h is not None:
            self._lib.plrt_function_free(self._h)
            self._h = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 — interpreter shutdown
            pass

    def __repr__(self) -> str:
        return f"<pipelink.Function {self.name}({', '.join(self.signature)})>"


# ---- several linked variants, one chosen per launch shape --------------------------------------


def _eval_rule(expr: str, env: Mapping[str, int], where: str) -> int:
    """Evaluates a selection-table expression: integers, the table's variables, + - * // % and
    comparisons, and/or/not, ceil_div(a, b), min(...), max(...). Nothing else is allowed."""
    import ast  # noqa: PLC0415

    def ev(n: Any) -> int:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, (bool, int)):
            return int(n.value)
        if isinstance(n, ast.Name):
            if n.id in ("true", "false"):
                return int(n.id == "true")
            if n.id not in env:
                raise ValueError(f"pipelink.Selection: {where}: unknown variable '{n.id}' (known: {', '.join(sorted(env))})")
            return int(env[n.id])
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
                   ast.Mod: operator.mod}
            if type(n.op) in ops:
                if type(n.op) in (ast.FloorDiv, ast.Mod) and b == 0:
                    raise ValueError(f"pipelink.Selection: {where}: division by zero")
                return ops[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Not, ast.USub)):
            v = ev(n.operand)
            return int(not v) if isinstance(n.op, ast.Not) else -v
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return int(all(vals)) if isinstance(n.op, ast.And) else int(any(vals))
        if isinstance(n, ast.Compare):
            ops = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
                   ast.NotEq: operator.ne}
            left = ev(n.left)
            for op, right in zip(n.ops, n.comparators):
                r = ev(right)
                if type(op) not in ops or not ops[type(op)](left, r):
                    return 0
                left = r
            return 1
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("ceil_div", "min", "max") and not n.keywords:
            args = [ev(a) for a in n.args]
            if n.func.id == "ceil_div":
                if len(args) != 2 or args[1] <= 0:
                    raise ValueError(f"pipelink.Selection: {where}: ceil_div takes (a, b > 0)")
                return -(-args[0] // args[1])
            if not args:
                raise ValueError(f"pipelink.Selection: {where}: {n.func.id}() of nothing")
            return min(args) if n.func.id == "min" else max(args)
        raise ValueError(f"pipelink.Selection: {where}: '{ast.unparse(n)}' is not allowed in a selection rule")

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"pipelink.Selection: {where}: cannot parse '{expr}': {e.msg}") from None
    return ev(tree)


class Selection:
    """Several linked variants of one kernel, and the rule that picks one per launch shape, read
    from a selection table (JSON) fixed before anything is timed:

        {"inputs": ["B", "L", "kv_heads", "sms"],               # the shape variables
         "variants": {"a": {"cubin": "attn_a.cubin", "map": "attn_a.map", "params": {"S": "1"}},
                      "b": {"cubin": "attn_b.cubin", "params": {"S": "max(1, ceil_div(L, 256))"}}},
         "rules": [{"when": "B * kv_heads < sms and L >= 512", "use": "b"},
                   {"when": "true", "use": "a"}]}

    The first rule whose `when` holds names the variant; a variant's `params` are launch
    parameters computed from the shape (the same expressions whichever way it was chosen).
    Paths are relative to the table. Expressions: integers, the inputs, + - * // %, comparisons,
    and / or / not, ceil_div, min, max.

        sel = pipelink.Selection("select.json")
        name, params = sel.choose(B=1, L=4096, kv_heads=8, sms=132)
        sel.kernel(name).launch(grid, **params, ...)"""

    def __init__(self, table: PathLike, load: bool = True) -> None:
        path = Path(os.fspath(table))
        with open(path, encoding="utf-8") as f:
            t = json.load(f)
        self.path = path
        self.inputs: List[str] = list(t.get("inputs", []))
        self.variants: Dict[str, Dict[str, Any]] = dict(t["variants"])
        self.rules: List[Dict[str, str]] = list(t["rules"])
        for i, r in enumerate(self.rules):
            if r.get("use") not in self.variants:
                raise ValueError(f"pipelink.Selection: {path}: rule {i} uses unknown variant {r.get('use')!r}")
        if not self.rules or self.rules[-1].get("when", "true") != "true":
            raise ValueError(f"pipelink.Selection: {path}: the last rule must be unconditional (when = \"true\")")
        self._kernels: Dict[str, Kernel] = {}
        if load:
            for name, v in self.variants.items():
                cubin = path.parent / v["cubin"]
                mp = path.parent / v["map"] if "map" in v else None
                self._kernels[name] = Kernel(cubin, mp)

    def _env(self, shape: Mapping[str, int]) -> Dict[str, int]:
        missing = [n for n in self.inputs if n not in shape]
        if missing:
            raise TypeError("pipelink.Selection: shape variables missing: " + ", ".join(missing))
        return {k: operator.index(v) for k, v in shape.items()}

    def params(self, name: str, **shape: int) -> Dict[str, int]:
        """The launch parameters variant `name` takes at this shape."""
        env = self._env(shape)
        return {k: _eval_rule(e, env, f"variant {name} param {k}") for k, e in self.variants[name].get("params", {}).items()}

    def choose(self, **shape: int) -> Tuple[str, Dict[str, int]]:
        """(variant name, its launch parameters) for this shape: the first rule that holds."""
        env = self._env(shape)
        for i, r in enumerate(self.rules):
            if _eval_rule(r.get("when", "true"), env, f"rule {i}"):
                return r["use"], self.params(r["use"], **shape)
        raise AssertionError("unreachable: the last rule is unconditional")

    def kernel(self, name: str) -> Kernel:
        return self._kernels[name]
