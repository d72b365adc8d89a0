"""The Qwen benches' kernel selection, C++ (bench/qwen_mlp/qwen_select.h, through qwen_select_cli)
against the Python benches' copy (bench/qwen_mlp/qwen_select.py): the same kernel for every kind and
every M from 1 to 8192, on the kernel sets the benches load (run_sustained.sh's, run.sh's, and
bench_torch.py's), plus the choices the session-21 rule is documented to make. No GPU, no torch.

    python3 tests/python/test_qwen_select.py BUILD/bench/qwen_select_cli
"""
import os
import math
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "qwen_mlp"))
import qwen_select as Q  # noqa: E402

CLI = sys.argv.pop(1) if len(sys.argv) > 1 else None

# Each kernel's tile facts (tile_m, tile_n), as its link's map states them (examples/qwen_mlp).
TILES = {
    "fused": (128, 128), "gemm": (128, 128), "fused_medium": (128, 104), "gemm_medium": (128, 104),
    "fused_narrow": (128, 80), "gemm_narrow": (128, 80), "fused_small": (64, 104), "gemm_small": (64, 104),
    "fused_sw": (128, 128), "gemm_sw": (128, 128), "fused_sw_splitk": (128, 128), "gemm_sw_splitk": (128, 128),
    "fused_small16": (16, 104), "gemm_small16": (16, 104), "fused_pp_g8": (128, 64),
    "fused_medium_swf": (128, 104), "gemm_medium_s4": (128, 104),
    "gemm_n112": (128, 112), "gemm_n120": (128, 120), "fused_n112_swf": (128, 112), "fused_n120_swf": (128, 120),
    "gemm_tok144_sk": (144, 64), "gemm_tok144_splitk": (144, 64), "gemm_tok160_sk": (160, 64),
    "gemm_tok160_splitk": (160, 64), "gemm_tok176_sk": (176, 64), "gemm_tok176_splitk": (176, 64),
    "fused_tok144_sk": (144, 64), "fused_tok144_splitk": (144, 64), "fused_tok160_sk": (160, 64),
    "fused_tok160_splitk": (160, 64), "fused_tok176_sk": (176, 64), "fused_tok176_splitk": (176, 64),
    "gemm_tok208_sk": (208, 64), "gemm_tok208_splitk": (208, 64), "fused_tok208_sk": (208, 64),
    "fused_tok208_splitk": (208, 64), "gemm_tok224_sk": (224, 64), "fused_tok224_sk": (224, 64),
    "gemm_tok144w_sk": (144, 128), "gemm_tok144w_splitk": (144, 128), "fused_tok144w_splitk": (144, 128),
    "gemm_tok144w_splitk_g8": (144, 128), "fused_tok144w_splitk_g8": (144, 128),
    "gemm_tok136_sk": (136, 64), "gemm_tok136_splitk": (136, 64), "gemm_tok152_sk": (152, 64), "gemm_tok152_splitk": (152, 64),
    "fused_tok136_sk": (136, 64), "fused_tok136_splitk": (136, 64), "fused_tok152_sk": (152, 64), "fused_tok152_splitk": (152, 64),
    "gemm_tok168_sk": (168, 64),
    "gemm_tok168_splitk": (168, 64),
    "fused_tok168_sk": (168, 64),
    "fused_tok168_splitk": (168, 64),
    "gemm_tok200_sk": (200, 64),
    "gemm_tok200_splitk": (200, 64),
    "fused_tok200_sk": (200, 64),
    "fused_tok200_splitk": (200, 64),
    "gemm_tok216_sk": (216, 64),
    "fused_tok216_sk": (216, 64),
    # session 32: the 136- / 152-token tiles with a 5-stage ring (the same tiles)
    "gemm_tok136_sk5": (136, 64), "gemm_tok136_splitk5": (136, 64), "gemm_tok152_sk5": (152, 64),
    "gemm_tok152_splitk5": (152, 64), "fused_tok136_sk5": (136, 64), "fused_tok136_splitk5": (136, 64),
    "fused_tok152_sk5": (152, 64), "fused_tok152_splitk5": (152, 64),
}
TOK = [n for n in TILES if "_tok" in n]
SUSTAINED = ["fused_small16", "gemm_small16", "fused_medium_swf", "gemm_medium_s4", "gemm_n112", "gemm_n120",
             "fused_n112_swf", "fused_n120_swf", "fused_sw_splitk", "gemm_sw_splitk", "fused_pp_g8"] + TOK
FULL = [k for k in TILES]


class Kernel:
    def __init__(self, name):
        self.tm, self.tn = TILES[name]

    def fact(self, f):
        return {"tile_m": self.tm, "tile_n": self.tn}[f]


def cpp(names, sms=132, lo=1, hi=8192):
    args = [CLI, "--sms", str(sms), "--M", f"{lo}-{hi}"] + [f"{n.replace('_', '-')}:{TILES[n][0]}:{TILES[n][1]}" for n in names]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split("\n")
    got = {}
    for line in out:
        if line:
            kind, M, label = line.split()
            name = label.replace("-", "_")
            # qwen_select::select returns the kind itself when no kernel qualifies (Python: None)
            got[(kind, int(M))] = None if name == kind and name not in names else name
    return got


def py(names, sms=132, lo=1, hi=8192):
    ks = {n: Kernel(n) for n in names}
    return {(kind, M): Q.select(ks, kind, M, sms) for kind in ("fused", "gemm") for M in range(lo, hi + 1)}


def cpp_token_costs(names, sms=132, lo=65, hi=4096):
    args = [CLI, "--sms", str(sms), "--M", f"{lo}-{hi}", "--token-costs"] + \
        [f"{n.replace('_', '-')}:{TILES[n][0]}:{TILES[n][1]}" for n in names]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split("\n")
    got = {}
    for line in out:
        if line:
            kind, M, label, cost = line.split()
            got[(kind, int(M))] = None if label == "none" else (label.replace("-", "_"), float(cost))
    return got


class Agree(unittest.TestCase):
    def test_token_tile_costs(self):
        # session 31 (helper-64): the token tile's cost, not only the pick, must agree: it decides the
        # comparison with the 128-row tiles (e.g. the fused 152-token tile at 897-912 by 0.07%)
        ks = {n: Kernel(n) for n in SUSTAINED}
        c = cpp_token_costs(SUSTAINED)
        for (kind, M), want in sorted(c.items()):
            got = Q.token_tile(ks, kind, M, 132)
            self.assertEqual(got is None, want is None, f"{kind} at M = {M}: {got} / {want}")
            if got is not None:
                self.assertEqual(got[0], want[0], f"{kind} at M = {M}")
                self.assertAlmostEqual(got[1], want[1], delta=1e-9 * want[1], msg=f"{kind} at M = {M}")

    def check_set(self, names):
        c, p = cpp(names), py(names)
        diff = [(k, c[k], p[k]) for k in sorted(c) if c[k] != p[k]]
        self.assertEqual(diff[:10], [], f"{len(diff)} (kind, M) where C++ and Python select differently")

    def test_sustained_set(self):
        self.check_set(SUSTAINED)

    def test_full_set(self):
        # bench_torch.py's names are VARIANTS + EXTRA; the C++ labels are the same names with hyphens.
        self.check_set([n for n in FULL if n in Q.VARIANTS + Q.EXTRA])

    def test_without_the_wide_tiles(self):
        self.check_set([n for n in SUSTAINED if "n112" not in n and "n120" not in n])

    def test_without_the_token_tiles(self):
        self.check_set([n for n in SUSTAINED if n not in TOK])

    def test_five_stage_links(self):
        # session 32: the 136- / 152-token picks take their 5-stage links at one or two token tiles
        # (129-136, 145-152, 257-272, 289-304), both kinds, and nowhere else; without those links the
        # picks are the 4-stage ones
        got, without = py(SUSTAINED), py([n for n in SUSTAINED if not n.endswith("5")])
        self.check_set([n for n in SUSTAINED if not n.endswith("5")])
        for (kind, M), name in sorted(got.items()):
            five = any(lo <= M <= hi for lo, hi in ((129, 136), (145, 152), (257, 272), (289, 304)))
            self.assertEqual(name, without[(kind, M)] + "5" if five else without[(kind, M)], f"{kind} at M = {M}")

    def test_token_tiles(self):
        # bench/NOTES.md, sessions 22-23 and 25: at 256 < M <= 1024 each kind takes its token tile where
        # f * tiles / SMs * T / 2 is below the 128-row rule's cost, f = 1.06 for the GEMM (session 23,
        # refitted after results/s23/s2), 1.09 for the fused kernel (which takes it since session 23);
        # T = 208 since session 25 (385-416, 801-832, and the GEMM's 577-624); T = 224 since session 26
        # (433-448: it is linked stream-k only, so it competes only where two token tiles make fewer
        # than 8 rounds). Session 28: two token tiles (800 tiles, 16 pieces per split tile) take split-k
        # where the split-k link is there (the pieces sum in shares; results/s28/c2), so tok224 stays stream-k.
        got, base = py(SUSTAINED), py([n for n in SUSTAINED if n not in TOK])
        # session 31: the 136- / 152- / 168- / 200-token tiles in place of the tile 8 tokens wider where they
        # pad 3.5% fewer tokens (257-272, 289-304, 321-336, 385-400, 641-672), and by their cost against the
        # 128-row tiles (449-456, 897-912)
        fused_want = [((257, 272), "tok136_splitk5"), ((273, 288), "tok144_splitk"), ((289, 304), "tok152_splitk5"),
                      ((305, 320), "tok160_splitk"), ((321, 336), "tok168_splitk"),
                      ((337, 352), "tok176_splitk"),
                      ((353, 384), "n120"), ((385, 400), "tok200_splitk"), ((401, 416), "tok208_splitk"), ((417, 432), "tok144_splitk"),
                      ((433, 448), "tok224_sk"), ((449, 456), "tok152_splitk"), ((457, 512), "n112"), ((513, 528), "tok176_splitk"), ((529, 576), "tok144w_splitk"),
                      ((577, 640), "n112"), ((641, 672), "tok168_splitk"), ((673, 704), "tok176_splitk"), ((705, 720), "tok144_splitk"),
                      ((721, 768), "n120"), ((769, 800), "tok160_splitk"), ((801, 832), "tok208_splitk"),
                      ((833, 896), "sw_splitk"), ((897, 912), "tok152_splitk"), ((913, 1024), "medium_s4")]
        # the GEMM's factor adds 457-480, 577-624, 833-864 and 913-960 (session 31: and with the narrow tiles
        # 449-456, 897-912, both kinds); session 29: where the GEMM takes
        # tok144-splitk and the 256-column 144-token tile's own plan is split-k (4 or 6 token tiles here:
        # 800 / 1200 of its tiles), tok144w-splitk
        gemm_want = [((257, 272), "tok136_splitk5"), ((273, 288), "tok144_splitk"), ((289, 304), "tok152_splitk5"),
                     ((305, 320), "tok160_splitk"), ((321, 336), "tok168_splitk"),
                      ((337, 352), "tok176_splitk"),
                     ((353, 384), "n120"), ((385, 400), "tok200_splitk"), ((401, 416), "tok208_splitk"), ((417, 432), "tok144_splitk"),
                     ((433, 448), "tok224_sk"), ((449, 456), "tok152_splitk"), ((457, 480), "tok160_splitk"), ((481, 512), "n112"),
                     ((513, 528), "tok176_splitk"),
                     ((529, 576), "tok144w_splitk"), ((577, 600), "tok200_splitk"), ((601, 624), "tok208_splitk"), ((625, 640), "n112"),
                     ((641, 672), "tok168_splitk"), ((673, 704), "tok176_splitk"), ((705, 720), "tok144_splitk"), ((721, 768), "n120"),
                     ((769, 800), "tok160_splitk"), ((801, 832), "tok208_splitk"),
                     ((833, 864), "tok144w_splitk"), ((865, 896), "sw_splitk"), ((897, 912), "tok152_splitk"),
                     ((913, 960), "tok160_splitk"),
                     ((961, 1024), "medium_s4")]
        fused_name = {"n120": "fused_n120_swf", "n112": "fused_n112_swf", "medium_s4": "fused_medium_swf"}
        for kind, want in (("gemm", gemm_want), ("fused", fused_want)):
            for (lo, hi), short in want:
                name = fused_name.get(short, "fused_" + short) if kind == "fused" else "gemm_" + short
                for M in range(lo, hi + 1):
                    self.assertEqual(got[(kind, M)], name, f"{kind} at M = {M}")
        # Session 29: one token tile at 129-224 (stream-k: split-k would cut the last 4 tiles into 33
        # pieces, past SHARES_PIECES_MAX), both kinds; the 128-row tile keeps 65-128 and 225-256.
        # (session 31: the 136- / 152- / 168- / 200- / 216-token tiles at 129-136 / 145-152 / 161-168 / 177-200 / 209-216)
        for kind in ("gemm", "fused"):
            for (lo, hi), T in (((129, 136), 136), ((137, 144), 144), ((145, 152), 152), ((153, 160), 160), ((161, 168), 168),
                                ((169, 176), 176), ((177, 200), 200), ((201, 208), 208), ((209, 216), 216), ((217, 224), 224)):
                for M in range(lo, hi + 1):  # (session 32: 136 / 152 tokens with 5 stages)
                    self.assertEqual(got[(kind, M)], "%s_tok%d_sk%s" % (kind, T, "5" if T in (136, 152) else ""), f"{kind} at M = {M}")
            for M in list(range(65, 129)) + list(range(225, 257)):
                self.assertEqual(got[(kind, M)], base[(kind, M)], f"{kind} at M = {M}")
        # Session 29: above 1024 against the split-k panel kernel, factor 1.06 for both kinds, and only
        # while X fits in half the L2 (M <= 2560 at K = 5120): results/s29/c2's 1100 / 2100 take the
        # token tile, 3000 / 5000 / 7000 do not.
        for M in (1290, 1440, 1584, 1700, 1872, 2440):  # 9-17 token tiles: tok144w-splitk
            self.assertEqual(got[("gemm", M)], "gemm_tok144w_splitk", f"gemm at M = {M}")
            # session 30: the fused twin by the same condition
            self.assertEqual(got[("fused", M)], "fused_tok144w_splitk", f"fused at M = {M}")
        for M in (129, 288, 432, 720):  # its plan is not split-k there (1 / 2 / 3 / 5 token tiles)
            for kind in ("gemm", "fused"):
                self.assertNotIn("tok144w", got[(kind, M)], f"{kind} at M = {M}")
        for M in range(833, 865):  # the GEMM takes tok144w-splitk; the fused kernel's pick is sw-splitk
            self.assertEqual(got[("fused", M)], "fused_sw_splitk", f"fused at M = {M}")
        # Session 30: above 1024 the 256-column tile by its own cost (1.03 * its padded rows against the
        # panel kernel's 1.04 and the token tiles' 1.06), while X <= 32 MiB (M <= 3276): results/s30/p1's
        # 1100 / 2300 / 3000 take it, 1350-2048 / 2560 / 4096 do not.
        for kind in ("gemm", "fused"):
            for M, want in ((1100, "tok144w_splitk"), (2100, "tok144w_splitk"), (1536, "sw_splitk"), (2048, "sw_splitk"),
                            (2300, "tok144w_splitk"), (2496, "tok208_splitk"), (2560, "sw_splitk"), (3000, "tok144w_splitk"),
                            (1350, "sw_splitk"), (1900, "sw_splitk"), (4096, "sw_splitk"), (5000, "tok144w_splitk_g8"),
                            (3600, "tok144w_splitk_g8"), (8192, "sw_splitk"),
                            (7000, "sw_splitk"), (1600, "tok160_splitk"), (3276, "tok144w_splitk")):
                self.assertEqual(got[(kind, M)], kind + "_" + want, f"{kind} at M = {M}")
            # session 30 (results/s30/c1, g*.json): above 3276 the tile in bands of 8 token tiles, factor 1.05
            for M in range(2561, 8193):
                f, w = (1.03, "_tok144w_splitk") if M <= 3276 else (1.05, "_tok144w_splitk_g8")
                want = w if math.ceil(M / 144) * 144 * f < math.ceil(M / 128) * 128 * 1.04 else "_sw_splitk"
                self.assertEqual(got[(kind, M)], kind + want, f"{kind} at M = {M}")
        for M in range(1, 8193):
            for kind in ("gemm", "fused"):
                if got[(kind, M)] not in TOK:
                    self.assertEqual(got[(kind, M)], base[(kind, M)], f"{kind} at M = {M}")
                else:
                    g = got[(kind, M)]
                    self.assertTrue(128 < M <= 224 or 256 < M <= 2560 or (1024 < M <= 3276 and g == kind + "_tok144w_splitk")
                                    or (M > 3276 and g == kind + "_tok144w_splitk_g8"), f"{kind} at M = {M}: {g}")
                    # the bands of 8 only above 32 MiB of X, col_major only below
                    self.assertEqual(g.endswith("_g8"), M > 3276, f"{kind} at M = {M}: {g}")
                    # session 31: the 136- / 152- / 168- / 200- / 216-token tiles only up to 1024, where the tile 8
                    # tokens wider pads more than 3.5% more tokens
                    for T in (136, 152, 168, 200, 216):
                        if "_tok%d_" % T in g:
                            self.assertTrue(M <= 1024, f"{kind} at M = {M}: {g}")
                            self.assertLess(math.ceil(M / T) * T * Q.NARROW_TOKEN_FACTOR, math.ceil(M / (T + 8)) * (T + 8), f"M = {M}")

    def test_documented_choices(self):
        # bench/NOTES.md, session 21: 128 x 104 up to 256, 128 x 120 at 257-384 and 641-768, 128 x 112
        # at 385-640, split-k at 769-896, 128 x 104 at 897-1024; split-k above; the 16-row tile at <= 16.
        got = py([n for n in SUSTAINED if n not in TOK])  # (session 22's token tiles: test_token_tiles)
        want = [((65, 256), "gemm_medium_s4"), ((257, 384), "gemm_n120"), ((385, 640), "gemm_n112"),
                ((641, 768), "gemm_n120"), ((769, 896), "gemm_sw_splitk"), ((897, 1024), "gemm_medium_s4"),
                ((1025, 8192), "gemm_sw_splitk"), ((1, 16), "gemm_small16")]
        for (lo, hi), name in want:
            for M in range(lo, hi + 1):
                self.assertEqual(got[("gemm", M)], name, f"gemm at M = {M}")
                fused = {"gemm_medium_s4": "fused_medium_swf", "gemm_n120": "fused_n120_swf",
                         "gemm_n112": "fused_n112_swf"}.get(name, name.replace("gemm", "fused"))
                self.assertEqual(got[("fused", M)], fused, f"fused at M = {M}")


if __name__ == "__main__":
    if not CLI:
        sys.exit("usage: test_qwen_select.py BUILD/bench/qwen_select_cli")
    unittest.main()
