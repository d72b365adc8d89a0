"""ctest python.link: the Python module links the GEMM example (no GPU, no torch needed).

    PYTHONPATH=build/python python3 tests/python/test_link.py [BUILD_DIR]

Checks that a Python link writes the same cubin as the command line, returns the cubin and map,
that check() gives the map alone, that a refused link raises LinkError with the rule, file:line
and notes of the command line's diagnostic and writes nothing, and that bad arguments are
rejected before anything runs.
"""
import ctypes
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]
BUILD = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else SRC / "build"
sys.argv[1:] = []  # the rest is unittest's

import pipelink  # noqa: E402

G = SRC / "examples" / "gemm"
GEMM = [G / "loader/contract.toml", G / "mma/contract.toml", G / "mma/contract.toml", G / "writer/contract.toml"]
OBJ = BUILD / "examples" / "gemm"
REFUSED = SRC / "tests" / "golden" / "fact-constraint-min"  # loader.toml:8 needs tile_k >= 32; mma gives 16


class LinkFromPython(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_link_writes_cubin_and_map(self):
        cubin, map_path = self.out / "gemm.cubin", self.out / "gemm.map"
        r = pipelink.link(GEMM, output=cubin, map=map_path, library_dirs=[OBJ])
        self.assertEqual(r.cubin[:4], b"\x7fELF")
        self.assertEqual(cubin.read_bytes(), r.cubin)
        self.assertEqual(map_path.read_text(), r.map)
        self.assertIn("launch pipelink_kernel threads 384 smem ", r.map)
        self.assertEqual((r.threads, r.output, r.map_path), (384, str(cubin), str(map_path)))
        self.assertGreater(r.smem_bytes, 0)
        self.assertEqual(r.warnings, [])
        facts = r.facts()
        self.assertIn("tile_m", facts)
        # The same bytes as `pipelink link` (the build's gemm.cubin, linked by the CLI).
        cli = OBJ / "gemm.cubin"
        self.assertTrue(cli.is_file(), f"{cli} missing: build the gemm_example target first")
        self.assertEqual(r.cubin, cli.read_bytes(), "Python link and CLI link differ")
        params = pipelink._parse_map(r.map)["params"]
        self.assertEqual(params, {"a_map": "tensormap", "b_map": "tensormap", "K": "u32", "C": "ptr", "M": "u32", "N": "u32"})

    def test_tensormap_boxes_in_the_map(self):
        # The Qwen loader and store contracts name the tensor each map's copies move: the map
        # carries the box (x_map the whole A tile, w_map one tile_n-row block of B, out_map the
        # 64-column panel the store takes).
        Q = SRC / "examples" / "qwen_mlp"
        parts = [Q / "loader/contract_sk.toml", Q / "mma/contract_sw_sk.toml", Q / "mma/contract_sw_sk.toml",
                 Q / "store/contract_sw.toml"]
        boxes = pipelink._parse_map(pipelink.check(parts, connect={"out": "acc"}).map)["boxes"]
        self.assertEqual(boxes, {"x_map": {"rows": 128, "cols": 64, "dtype": "bf16", "swizzle": "128B"},
                                 "w_map": {"rows": 128, "cols": 64, "dtype": "bf16", "swizzle": "128B"},
                                 "out_map": {"rows": 128, "cols": 64, "dtype": "bf16", "swizzle": "128B"}})
        # the plain store takes the whole stage its producer gives: the 128 x 256 accumulator tile
        parts = [Q / "loader/contract.toml", Q / "mma/contract.toml", Q / "mma/contract.toml", Q / "store/contract.toml"]
        self.assertEqual(pipelink._parse_map(pipelink.check(parts, connect={"out": "acc"}).map)["boxes"]["out_map"],
                         {"rows": 128, "cols": 256, "dtype": "bf16", "swizzle": "none"})
        # the GEMM example's loader names both (one [tile_m | tile_n, tile_k] copy per stage tensor)
        self.assertEqual(pipelink._parse_map(pipelink.check(GEMM).map)["boxes"],
                         {"a_map": {"rows": 128, "cols": 32, "dtype": "bf16", "swizzle": "none"},
                          "b_map": {"rows": 128, "cols": 32, "dtype": "bf16", "swizzle": "none"}})

    def test_packed_loader_link_ships_its_pack(self):
        # Session 13: a loader that reads a packed weight ships the packing kernel in its own object;
        # the linked cubin holds both, the map lists w_packed and the records the loader declares.
        Q, QO = SRC / "examples" / "qwen_mlp", BUILD / "examples" / "qwen_mlp"
        cs = [Q / "loader/contract_packed16.toml", Q / "mma/contract_small16_swap.toml", Q / "swiglu/contract_r16.toml",
              Q / "store/contract.toml"]
        r = pipelink.link(cs, library_dirs=[QO])
        self.assertEqual(r.cubin[:4], b"\x7fELF")
        self.assertIn(b"gu_pack_w", r.cubin, "the pack kernel of the loader's object is not in the linked cubin")
        self.assertIn(b"pipelink_kernel", r.cubin)
        params = pipelink._parse_map(r.map)["params"]
        for name, ty in (("w_packed", "ptr"), ("K", "u32"), ("N", "u32"), ("n_step", "u32"), ("b_stride", "u32")):
            self.assertEqual(params.get(name), ty, f"param {name}")
        self.assertNotIn("w_map", params)
        self.assertRegex(r.map, r"gu_loader_packed: \d+ records agree \([^)]*swizzle[^)]*\)")
        self.assertRegex(r.map, r"wgmma_gu_swap: \d+ records agree \([^)]*provide[^)]*\)")
        built = QO / "fused_small16_swap_packed.cubin"
        self.assertTrue(built.is_file(), f"{built} missing: build the qwen_mlp_fused_small16_swap_packed target first")
        self.assertEqual(r.cubin, built.read_bytes(), "Python link and CLI link differ")

    def test_link_without_the_source_include_dir(self):
        # Elsewhere (an installed package, another machine) the linker's default -I, this source
        # tree's include/, is absent: the package's own copy of pipelink/device.cuh is used.
        os.environ["PIPELINK_INCLUDE_DIR"] = str(self.out / "absent")
        try:
            r = pipelink.link(GEMM, library_dirs=[OBJ])
        finally:
            del os.environ["PIPELINK_INCLUDE_DIR"]
        self.assertEqual(r.cubin, (OBJ / "gemm.cubin").read_bytes())

    def test_link_in_memory_writes_nothing(self):
        r = pipelink.link([str(p) for p in GEMM], library_dirs=[str(OBJ)], emit_ptx=False)
        self.assertEqual(r.cubin[:4], b"\x7fELF")
        self.assertIsNone(r.output)
        self.assertEqual(os.listdir(self.out), [])

    def test_check_gives_map_only(self):
        map_path = self.out / "check.map"
        r = pipelink.check(GEMM, map=map_path)
        self.assertEqual(r.cubin, b"")
        self.assertEqual(map_path.read_text(), r.map)
        self.assertIn("param a_map", r.map)
        self.assertEqual(os.listdir(self.out), ["check.map"])

    def test_refused_link_raises_link_error(self):
        cwd = os.getcwd()
        os.chdir(REFUSED)  # as the golden case runs, so the text matches its expect.txt
        try:
            for fn in (pipelink.check, pipelink.link):
                kw = {} if fn is pipelink.check else {"output": self.out / "x.cubin"}
                with self.assertRaises(pipelink.LinkError) as cm:
                    fn(["mma.toml", "loader.toml"], map=self.out / "x.map", **kw)
                e = cm.exception
                self.assertEqual(len(e.errors), 1)
                d = e.errors[0]
                self.assertEqual((d.severity, d.rule, d.file, d.line), ("error", "fact-constraint", "loader.toml", 8))
                self.assertEqual(d.location, "loader.toml:8")
                self.assertIn("'tile_k' = 16 breaks constraint min = 32", d.message)
                self.assertEqual(d.notes, ["required by loader (io-team) at loader.toml:8",
                                           "provided by mma (gemm-team) at mma.toml:8"])
                # The rendered text is exactly what the command line prints.
                self.assertEqual(e.text, (REFUSED / "expect.txt").read_text())
                self.assertTrue(str(e).startswith("pipelink: error: loader.toml:8: fact 'tile_k'"), str(e))
                self.assertEqual(os.listdir(self.out), [], "a refused link wrote files")
        finally:
            os.chdir(cwd)

    def test_connect_reaches_the_linker(self):
        # tests/filecheck/connect-renames-port: the producer's port 'out' joins pipe 'acc' only with connect.
        case = SRC / "tests" / "filecheck" / "connect-renames-port"
        contracts = [case / "producer.toml", case / "consumer.toml"]
        with self.assertRaises(pipelink.LinkError) as cm:
            pipelink.check(contracts)
        self.assertEqual({d.rule for d in cm.exception.errors}, {"port-unconnected"})
        r = pipelink.check(contracts, connect={"out": "acc"}, defines={"UNUSED": 1})
        self.assertEqual((r.threads, r.smem_bytes), (64, 16512))

    def test_fatal_warnings(self):
        # tests/golden/fatal-warnings: a fact provided twice with one value is a warning; with
        # fatal_warnings=True it is raised as an error, under the same rule, and nothing is written.
        case = SRC / "tests" / "golden" / "fatal-warnings"
        contracts = [case / "loader.toml", case / "mma.toml"]
        self.assertEqual([d.rule for d in pipelink.check(contracts).warnings], ["fact-multiply-provided"])
        with self.assertRaises(pipelink.LinkError) as cm:
            pipelink.check(contracts, map=self.out / "out.map", fatal_warnings=True)
        self.assertEqual([d.rule for d in cm.exception.errors], ["fact-multiply-provided"])
        self.assertEqual(os.listdir(self.out), [], "a refused check wrote files")

    def test_compile_component(self):
        out = self.out / "tile_writer.ltoir"
        pipelink.compile(G / "writer/tile_writer.cu", out)
        self.assertGreater(out.stat().st_size, 1000)
        with self.assertRaises(pipelink.LinkError):
            pipelink.compile(self.out / "missing.cu", self.out / "missing.ltoir")
        self.assertFalse((self.out / "missing.ltoir").exists())

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            pipelink.check(GEMM, connect={"": "x"})
        with self.assertRaises(TypeError):
            pipelink.check([1, 2])
        with self.assertRaises(pipelink.LinkError) as cm:
            pipelink.link(GEMM, arch="sm_80")
        self.assertEqual(cm.exception.errors[0].rule, "target")
        with self.assertRaises(pipelink.LinkError) as cm:
            pipelink.link(self.out / "missing.toml")
        self.assertTrue(cm.exception.errors)

    def test_runtime_loaded_only_for_kernels(self):
        # Linking never loads the runtime library (which needs libcuda).
        self.assertIsNone(pipelink._libs._rt)
        try:
            ctypes.CDLL("libcuda.so.1")
            have_driver = True
        except OSError:
            have_driver = False
        if have_driver:
            self.skipTest("a CUDA driver is installed: Kernel loading is the GPU test's job")
        cubin, map_path = self.out / "g.cubin", self.out / "g.map"
        pipelink.link(GEMM, output=cubin, map=map_path, library_dirs=[OBJ])
        with self.assertRaises(pipelink.CudaError) as cm:
            pipelink.Kernel(cubin, map_path)
        self.assertIn("libcuda", str(cm.exception))

    def test_function_arguments_checked_before_the_driver(self):
        # pipelink.Function (plain kernels, e.g. MoE routing): a missing cubin or an unknown
        # argument type is refused before the runtime library is loaded; without a driver the
        # load fails with CudaError naming libcuda.
        routing = Path(BUILD) / "examples" / "moe" / "routing.cubin"
        with self.assertRaises(FileNotFoundError):
            pipelink.Function(self.out / "missing.cubin", "moe_topk", ["ptr"])
        if not routing.is_file():
            self.skipTest(f"{routing} not built")
        with self.assertRaises(ValueError) as cm:
            pipelink.Function(routing, "moe_topk", ["ptr", "float"])
        self.assertIn("'float'", str(cm.exception))
        try:
            ctypes.CDLL("libcuda.so.1")
            self.skipTest("a CUDA driver is installed: launching is the GPU benches' job")
        except OSError:
            pass
        with self.assertRaises(pipelink.CudaError) as cm:
            pipelink.Function(routing, "moe_topk", ["ptr", "u32", "u32", "ptr", "ptr", "ptr", "ptr"])
        self.assertIn("libcuda", str(cm.exception))

    def test_pdl_link(self):
        # pdl=True is `pipelink link --pdl`: the same bytes as the command line's, the entry waits
        # (griddepcontrol.wait) before any role, the map's launch line says pdl, and the manifest
        # (whose hash the map carries) has the pdl line; without it nothing of that.
        import subprocess  # noqa: PLC0415
        r = pipelink.link(GEMM, library_dirs=[OBJ], pdl=True)
        plain = pipelink.link(GEMM, library_dirs=[OBJ])
        self.assertIn("griddepcontrol.wait;", r.generated_source)
        self.assertNotIn("griddepcontrol", plain.generated_source)
        self.assertTrue(pipelink._parse_map(r.map)["pdl"])
        self.assertFalse(pipelink._parse_map(plain.map)["pdl"])
        self.assertRegex(r.map, r"\nlaunch pipelink_kernel threads 384 smem \d+ pdl\n")
        self.assertIn("\\npdl 1\\n", r.generated_source)  # in pl_manifest's literal
        self.assertNotEqual(r.cubin, plain.cubin)
        cli = self.out / "cli.cubin"
        subprocess.run([str(BUILD / "pipelink"), "link", "--pdl", *map(str, GEMM), "-L", str(OBJ), "-o", str(cli)], check=True)
        self.assertEqual(cli.read_bytes(), r.cubin, "Python pdl link and CLI --pdl link differ")
        c = pipelink.check(GEMM, pdl=True)
        self.assertTrue(pipelink._parse_map(c.map)["pdl"])
        with self.assertRaises(TypeError):
            pipelink.link(GEMM, library_dirs=[OBJ], pdl="yes")
        with self.assertRaises(TypeError):
            pipelink.check(GEMM, pdl=1)

    def test_tile_order(self):
        # tile_order is `--tile-order`: the MoE down_store link's four contracts say order = "any"
        # and the link chooses row_major; a contract that names col_major refuses another order.
        moe = SRC / "examples" / "moe"
        parts = [moe / "dispatch/a_loader.toml", moe / "gemm/w_loader.toml", moe / "gemm/mma_down.toml",
                 moe / "gemm/mma_down.toml", SRC / "examples/qwen_mlp/store/contract.toml"]
        c = pipelink.check(parts, connect={"out": "acc"}, tile_order="row_major")
        self.assertIn("\n  row_major (--tile-order), tile 128x128", c.map)
        c = pipelink.check(parts, connect={"out": "acc"})
        self.assertIn("\n  row_major, tile 128x128", c.map)  # every contract says "any": row_major
        with self.assertRaises(pipelink.LinkError) as cm:
            pipelink.check(parts[:-1] + [moe / "combine/contract.toml"], connect={"out": "acc"}, tile_order="row_major")
        self.assertIn("'moe_combine' walks its tiles in col_major order, but --tile-order asks row_major", str(cm.exception))
        with self.assertRaises(TypeError):
            pipelink.check(parts, tile_order=1)

    def test_min_registers(self):
        # min_registers=True is `pipelink link --min-registers`: the same bytes as the command
        # line's; the entry carries __maxnreg__ with the budgets' mean (the GEMM's math warpgroups
        # 232, its loader 40: (232 + 232 + 40) / 3 = 168) instead of __launch_bounds__, and the map says so.
        import subprocess  # noqa: PLC0415
        r = pipelink.link(GEMM, library_dirs=[OBJ], min_registers=True)
        plain = pipelink.link(GEMM, library_dirs=[OBJ])
        m = re.search(r"register-cap (\d+)  \(--min-registers: 384 threads x (\d+) = \d+ of the SM's 65536 registers\)", r.map)
        self.assertIsNotNone(m, r.map[:400])
        self.assertEqual(m.group(1), m.group(2))
        self.assertIn(f"__maxnreg__({m.group(1)})", r.generated_source)
        self.assertNotIn("__launch_bounds__", r.generated_source)
        self.assertIn("__launch_bounds__(384, 1)", plain.generated_source)
        self.assertNotIn("--min-registers", plain.map)
        cli = self.out / "cli.cubin"
        subprocess.run([str(BUILD / "pipelink"), "link", "--min-registers", *map(str, GEMM), "-L", str(OBJ), "-o", str(cli)], check=True)
        self.assertEqual(cli.read_bytes(), r.cubin, "Python min_registers link and CLI --min-registers link differ")
        self.assertIn("--min-registers", pipelink.check(GEMM, min_registers=True).map)
        with self.assertRaises(TypeError):
            pipelink.link(GEMM, library_dirs=[OBJ], min_registers="yes")

    def test_function_launch_pdl_argument(self):
        # Function.launch(..., pdl=True) asks the runtime for the programmatic-stream-serialization
        # attribute (plrt_function_launch_ex with PLRT_LAUNCH_PDL); the default asks for none; a
        # non-bool is refused before anything is launched. The runtime library is replaced by a
        # recorder, so this runs without a driver.
        calls = []

        class FakeRt:
            def plrt_function_launch_ex(self, h, grid, block, smem, stream, args, flags, err, size):
                calls.append((grid, block, smem, stream.value, flags))
                return 0

        f = object.__new__(pipelink.Function)
        f._h, f._lib, f.name, f.signature, f.device = 1, FakeRt(), "k", ["ptr", "u32"], 0
        f.launch(3, 256, 0x1000, 7, stream=0)
        f.launch(3, 256, 0x1000, 7, stream=0, pdl=True)
        f.launch(3, 256, 0x1000, 7, stream=0, pdl=False)
        self.assertEqual([c[-1] for c in calls], [0, 1, 0])
        self.assertEqual(calls[1][:3], (3, 256, 0))
        with self.assertRaises(TypeError):
            f.launch(3, 256, 0x1000, 7, stream=0, pdl=1)
        self.assertEqual(len(calls), 3)
        f._h = None  # nothing to free


if __name__ == "__main__":
    unittest.main(verbosity=2)
