"""The Python benches' kernel selection (bench_torch.py): which PipeLink kernel is reported as the
one a caller would run at M, from each kernel's name and tile facts only (never a measurement).

It is the C++ rule of bench/qwen_mlp/qwen_select.h written again for the Python benches, which load
the kernels by name (underscores where the C++ labels have hyphens); tests/python/test_qwen_select.py
holds the two to the same answers for every M from 1 to 8192 on the benches' kernel sets. No torch.
"""
import math

INTER = 25600  # H's width: the gate (and up) width of the Qwen3-32B MLP
SHARES_PIECES = 10  # the split-k plan's pieces per split tile from which they sum in shares (src/generate.cpp)
SHARES_PIECES_MAX = 16  # session 29: the most pieces at which the rule takes split-k below 8 rounds
HIDDEN = 5120  # K: X's row length
TOKEN_MAX_X_BYTES = 25 * 1024 * 1024  # session 29: above M = 1024 the token tile only while X fits in half the L2
WIDE_FACTOR, WIDE_MAX_X_BYTES = 1.03, 32 * 1024 * 1024  # session 30: the 256-column 144-token tile above M = 1024
WIDE_G8_FACTOR = 1.05  # session 30: the same tile in bands of 8 token tiles (_g8) above 32 MiB of X
NARROW_TOKEN_FACTOR = 1.035  # session 31: a token tile against the one 8 tokens wider (136 / 144, ..., 216 / 224)
FIVE_STAGE_TOKENS = 2  # session 32: the 136- / 152-token tiles' 5-stage links at up to two token tiles

VARIANTS = ["fused", "fused_medium", "fused_narrow", "fused_small", "gemm", "gemm_medium", "gemm_narrow", "gemm_small"]
# The other kernels the benches load where present; select() below names the ones it may take (e.g.
# gemm_sw, the 128 x 128 GEMM whose accumulator stage is four 128-byte-swizzled 64-column panels, is
# timed beside the selected kernels and never selected).
EXTRA = ["gemm_sw", "fused_sw", "gemm_cluster_sw", "fused_cluster_sw", "gemm_sw_pair", "fused_sw_pair", "gemm_sw_splitk",
         "fused_sw_splitk", "gemm_small16", "fused_small16", "fused_pp_g8", "fused_small16_swap_packed",
         "gemm_small16_swap_packed", "fused_medium_packed", "gemm_medium_packed", "gemm_medium_s4", "fused_medium_swf",
         "fused_medium_swf_packed", "gemm_n112", "gemm_n120", "fused_n112_swf", "fused_n120_swf",
         "gemm_tok144_sk", "gemm_tok144_splitk", "gemm_tok160_sk", "gemm_tok160_splitk", "gemm_tok176_sk",
         "gemm_tok176_splitk", "fused_tok144_sk", "fused_tok144_splitk", "fused_tok160_sk", "fused_tok160_splitk",
         "fused_tok176_sk", "fused_tok176_splitk", "gemm_tok208_sk", "gemm_tok208_splitk", "fused_tok208_sk",
         "fused_tok208_splitk", "gemm_tok224_sk", "fused_tok224_sk", "gemm_tok144w_sk", "gemm_tok144w_splitk", "fused_tok144w_splitk",
         "gemm_tok144w_splitk_g8", "fused_tok144w_splitk_g8", "gemm_tok136_sk", "gemm_tok136_splitk", "gemm_tok152_sk",
         "gemm_tok152_splitk", "fused_tok136_sk", "fused_tok136_splitk", "fused_tok152_sk", "fused_tok152_splitk",
         "gemm_tok168_sk", "gemm_tok168_splitk", "fused_tok168_sk", "fused_tok168_splitk", "gemm_tok200_sk", "gemm_tok200_splitk", "fused_tok200_sk", "fused_tok200_splitk", "gemm_tok216_sk", "fused_tok216_sk",
         "gemm_tok136_sk5", "gemm_tok136_splitk5", "gemm_tok152_sk5", "gemm_tok152_splitk5", "fused_tok136_sk5",
         "fused_tok136_splitk5", "fused_tok152_sk5", "fused_tok152_splitk5"]


def split_k_plan(tiles, sms: int) -> bool:
    """The split-k schedule's domain (the C++ rule's split_k_plan): 8 rounds or more, or a last
    round whose split tiles get SHARES_PIECES to SHARES_PIECES_MAX pieces."""
    last = int(tiles) % sms
    return tiles >= 8 * sms or (last > 0 and SHARES_PIECES <= sms // last <= SHARES_PIECES_MAX)


def token_tile(ks, kind: str, M: int, sms: int):
    """Session 22 (the C++ rule, qwen_select.h, where the factors are explained): the kind's token
    tile <kind>_tok<T> at M > 64 (256 < M <= 1024 until session 29; the fused kernel's since session 23), T = 144, 160, 176,
    208 (since session 25) or 224 (since session 26; stream-k only) with the fewest padded tokens ceil(M / T) * T (ties to the smaller T),
    under stream-k (_sk) when its tiles fill fewer than 8 rounds, else split-k (_splitk); returns
    (name, cost) with cost = f * tiles / SMs * T / 2 in the 128-row rule's units (f = 1.06 for the
    GEMM since session 23, 1.09 for the fused kernel up to M = 1024, 1.06 above), or None where it does not apply or the kernel
    is absent. Session 31: then up to M = 1024 the tile 8 tokens narrower (136 / 152 / 168 / 200 / 216 in place of 144 /
    160 / 176 / 208 / 224) where NARROW_TOKEN_FACTOR x its padded tokens is below the pick's, with its cost times that factor."""
    if kind not in ("gemm", "fused") or M <= 64:
        return None

    def planned(T):
        """The kind's T-token link its plan takes and its tiles: split-k from 8 rounds of tiles, and below
        where its split tiles have SHARES_PIECES pieces or more (they sum the partials in shares; session
        28) and at most SHARES_PIECES_MAX (session 29: 33 pieces at one token tile were slower), when the
        split-k link is there; else stream-k. (None, 0) where that link is absent."""
        splitk = "%s_tok%d_splitk" % (kind, T)
        have_splitk = splitk in ks and ks[splitk].fact("tile_m") == T
        for name in ("%s_tok%d_sk" % (kind, T), splitk):
            if name not in ks or ks[name].fact("tile_m") != T:
                continue
            tiles = math.ceil(M / T) * math.ceil(INTER / ks[name].fact("tile_n"))
            want_splitk = tiles >= 8 * sms or (split_k_plan(tiles, sms) and have_splitk)
            if name == "%s_tok%d_%s" % (kind, T, "splitk" if want_splitk else "sk"):
                return name, tiles
        return None, 0

    pick, pick_padded, cost = None, 0, 0.0
    for T in (144, 160, 176, 208, 224):
        name, tiles = planned(T)
        padded = math.ceil(M / T) * T
        if name is not None and (pick is None or padded < pick_padded):
            pick, pick_padded, cost = name, padded, (1.06 if kind == "gemm" or M > 1024 else 1.09) * tiles / sms * T / 2.0
    # session 29 (the C++ rule, where it is explained): the 256-column 144-token tile where its own
    # split-k plan applies (session 30: the fused kernel's too, fused_tok144w_splitk)
    w = "%s_tok144w_splitk" % kind
    if pick == "%s_tok144_splitk" % kind and w in ks and ks[w].fact("tile_m") == 144 and \
            split_k_plan(math.ceil(M / 144) * math.ceil(INTER / ks[w].fact("tile_n")), sms):
        return (w, cost)
    # session 31 (the C++ rule, where kNarrowTokenFactor is explained): the 136- / 152- / 168- / 200- /
    # 216-token tiles (both kinds, where the links are there) in place of the pick 8 tokens wider up to
    # M = 1024, where NARROW_TOKEN_FACTOR x their padded tokens is below the pick's
    if pick is None or M > 1024:
        return None if pick is None else (pick, cost)
    for T in (136, 152, 168, 200, 216):
        name, tiles = planned(T) if ks[pick].fact("tile_m") == T + 8 else (None, 0)
        if name is not None and NARROW_TOKEN_FACTOR * math.ceil(M / T) * T < pick_padded:
            cost = (1.06 if kind == "gemm" else 1.09) * NARROW_TOKEN_FACTOR * tiles / sms * T / 2.0
            # session 32 (the C++ rule, where it is explained): at one or two token tiles the 136- /
            # 152-token links with a 5-stage ring
            if T in (136, 152) and M <= FIVE_STAGE_TOKENS * T and name + "5" in ks and ks[name + "5"].fact("tile_m") == T:
                return (name + "5", cost)
            return (name, cost)
    return (pick, cost)


def select(ks, kind: str, M: int, sms: int) -> str:
    """bench_qwen_mlp's rule, fixed before timing: the 64-row tile for M <= 64, else the 128-row tile
    with the least quantised work ceil(tiles / SMs) * tile area (ties: the wider tile). Revised in
    session 9 before the run that measured it: the 128 x 128 tile with the accumulator panels
    (<kind>_sw) wherever its last wave wastes at most 5% of its rounds (ceil(w) / w - 1 <= 0.05,
    w = tiles / SMs)."""
    sw = kind + "_sw"
    # Sessions 15-16 (the C++ bench's rule): at 64 < M <= 1024 the 128 x 104 tile (gemm_medium_s4,
    # fused_medium_swf); since session 21 one of three widths, below.
    # Session 21, fixed before the run that confirms it (the C++ bench's rule): at 64 < M <= 1024
    # the 128 x 104 tile or 128 x 112 / 128 x 120 (one m64n{224,240}k16 per k16 step), whichever
    # takes the least ceil(tiles / SMs) * tile_n; ties to 128 x 104 (results/s21/n56: 128 x 120 at
    # M = 384, 0.953 x gemm_medium_s4, 0.955 x fused_medium_swf).
    if 64 < M <= 1024:
        base = "gemm_medium_s4" if kind == "gemm" else "fused_medium_swf"
        wide = ["gemm_n112", "gemm_n120"] if kind == "gemm" else ["fused_n112_swf", "fused_n120_swf"]
        pick, pick_cost = None, 0.0
        for v in [base] + wide:
            if v not in ks:
                continue
            tm, tn = ks[v].fact("tile_m"), ks[v].fact("tile_n")
            cost = math.ceil(math.ceil(M / tm) * math.ceil(INTER / tn) / sms) * tn
            if pick is None or cost < pick_cost:  # ties to 128 x 104
                pick, pick_cost = v, cost
        # and, from M > 512, the split-k panel kernel where 1.04 * tiles / SMs * tile_n is below that
        # (the C++ rule; at four or fewer row tiles it is slower than the selected tile, s21/sel1).
        sk = kind + "_sw_splitk"
        choice, choice_cost = pick, pick_cost
        if pick is not None and M > 512 and sk in ks:
            tm, tn = ks[sk].fact("tile_m"), ks[sk].fact("tile_n")
            c = 1.04 * math.ceil(M / tm) * math.ceil(INTER / tn) / sms * tn
            if c < choice_cost:
                choice, choice_cost = sk, c
        # and, session 22, the token tile where its cost is below that (token_tile; the fused kernel's since session 23)
        tok = token_tile(ks, kind, M, sms) if pick is not None else None
        if tok is not None and tok[1] < choice_cost:
            choice = tok[0]
        if choice is not None:
            return choice
    # Session 12: at M >= 4096 the fused ping-pong kernel (fused_pp_g8). Session 17, fixed before the
    # runs that confirm it (the C++ bench's rule): fused_sw_splitk (now grouped:8) again, 0.978 /
    # 0.970 x fused_pp_g8 at 4096 / 8192 with each contender in its own power steady state
    # (C++ bench --sustain-ms, results/s17/grp).
    # Session 11, fixed before the run that measured it: at M <= 16 the 16-row decode tile
    # (<kind>_small16; fused 1.3-1.6% faster than _small at M = 1, 8, 16, results/qwen_s11/dec11).
    if M <= 16 and kind + "_small16" in ks:
        return kind + "_small16"
    # Session 10, fixed before the run that measured it: at M >= 1024 (8 or more 128-row tiles:
    # compute-bound) the panel kernel linked with --tile-schedule split-k, whose partial last wave
    # no longer idles (C++ bench, 2026-11-30 23:4x UTC: 2.4-4.1% faster than the data-parallel one at
    # M = 1024 / 2048, level at 4096 / 8192).
    if sw + "_splitk" in ks and M >= 1024:
        # Session 29 (the C++ rule, where it is explained): the token tile where its cost, with the
        # factor 1.06 for both kinds above 1024, is below the split-k panel kernel's.
        tm, tn = ks[sw + "_splitk"].fact("tile_m"), ks[sw + "_splitk"].fact("tile_n")
        # (only while X fits in half the L2: M * K * 2 bytes <= 25 MiB, TOKEN_MAX_X_BYTES)
        pick, pick_cost = sw + "_splitk", 1.04 * math.ceil(M / tm) * math.ceil(INTER / tn) / sms * tn
        tok = token_tile(ks, kind, M, sms) if M * HIDDEN * 2 <= TOKEN_MAX_X_BYTES else None
        if tok is not None and tok[1] < pick_cost:
            pick, pick_cost = tok
        # Session 30 (the C++ rule, where it is explained): the 256-column 144-token tile by its own cost
        # (WIDE_FACTOR) in col_major while X <= 32 MiB (WIDE_MAX_X_BYTES), else in bands of 8 token tiles
        # (_g8, WIDE_G8_FACTOR)
        col_major = M * HIDDEN * 2 <= WIDE_MAX_X_BYTES
        w = kind + ("_tok144w_splitk" if col_major else "_tok144w_splitk_g8")
        if w in ks and ks[w].fact("tile_m") == 144:
            wn = ks[w].fact("tile_n")
            c = (WIDE_FACTOR if col_major else WIDE_G8_FACTOR) * math.ceil(M / 144) * math.ceil(INTER / wn) / sms * 144 * wn / 128
            if c < pick_cost:
                pick, pick_cost = w, c
        return pick
    if sw in ks and M > 64:
        w = math.ceil(M / ks[sw].fact("tile_m")) * math.ceil(INTER / ks[sw].fact("tile_n")) / sms
        if math.ceil(w) / w - 1 <= 0.05:
            return sw
    best, best_cost, best_n = None, 0.0, 0
    for name, k in ks.items():
        if not name.startswith(kind) or name in EXTRA:
            continue
        tm, tn = k.fact("tile_m"), k.fact("tile_n")
        if (tm < 128) != (M <= 64) or tm < 64:  # the 16-row tile only by the rule above
            continue
        tiles = math.ceil(M / tm) * math.ceil(INTER / tn)
        cost = math.ceil(tiles / sms) * tm * tn
        if best is None or cost < best_cost or (cost == best_cost and tn > best_n):
            best, best_cost, best_n = name, cost, tn
    return best
