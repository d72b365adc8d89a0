// qwen_select.h — which PipeLink kernel the Qwen benches report as the one a caller would run at M.
//
// One definition for bench_qwen_mlp (the C++ bench) and qwen_select_cli (which prints its choices
// for tests/python/test_qwen_select.py, where bench/qwen_mlp/qwen_select.py, the Python benches'
// copy of the rule, is held to the same answers for every M). The choice is made before timing,
// from each linked kernel's label and tile facts only; it never looks at a measurement.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace qwen_select {

constexpr unsigned kInter = 25600;  // H's width: the gate (and up) width of the Qwen3-32B MLP

// A linked kernel as the rule sees it: its bench label (fused-..., gemm-...), its tile, whether its
// accumulator stage is the four 64-column panels, and whether it is a probe or reads a packed W
// (neither is ever selected).
struct Candidate {
  std::string label;
  unsigned tile_m = 0, tile_n = 0;
  bool panels = false, probe = false, packed_w = false;
};

// The token-tile kernels (gemm-tok<T>-sk / -splitk and, since session 23, fused-tok<T>-sk / -splitk:
// wgmma_tok.cu, T tokens x 128 W rows, the tokens as the wgmma N). Their accumulator stage is two
// 64-column panels; only token_tile() below selects them.
inline bool is_token_tile(const std::string& label) { return label.find("-tok") != std::string::npos; }

// The label names the panel kernels: "-sw" at the end, before a '-', or before a digit; and the
// token tiles (their two panels).
inline bool has_panels(const std::string& label) {
  if (is_token_tile(label)) return true;
  for (size_t at = label.find("-sw"); at != std::string::npos; at = label.find("-sw", at + 1))
    if (at + 3 == label.size() || label[at + 3] == '-' || (label[at + 3] >= '0' && label[at + 3] <= '9')) return true;
  return false;
}

// The variant is decided before timing, from the tile facts alone: the 64-row tile (weight
// streaming) for M <= 64; otherwise the 128-row tile with the least quantised work,
// ceil(tiles / SMs) waves of tile_m x tile_n each (ties: the wider tile). Revised in session 9,
// before the run that measured it: the 128 x 128 tile with the accumulator panels (*-sw; its
// epilogue stores free of bank conflicts) wherever its last wave wastes at most 5% of its
// rounds, ceil(w) / w - 1 <= 0.05 for w = tiles / SMs (M >= 2048 here).
// Session 10, fixed before the run that measured it: at M >= 1024 (8 or more 128-row tiles:
// compute-bound) the panel kernel linked with --tile-schedule split-k (*-sw-splitk), whose
// partial last wave no longer idles (2.4-4.1% faster than *-sw at M = 1024 / 2048 in the run
// that first timed it, level at 4096 / 8192).
// Session 11, fixed before the run that measured it: at M <= 16 the 16-row decode tile
// (*-small16: X slices of 16 rows, a 7-stage ring; fused 1.3-1.6% faster than *-small at
// M = 1, 8, 16 in bench_decode.py, results/qwen_s11/dec11).
// Session 12, fixed before the run that measured it: at M >= 4096 the fused kernel with the
// ping-pong main loop in the grouped:8 order (fused-pp-g8: 1.6-2.4% faster than fused-sw-splitk
// at M = 4096 / 8192 in two runs, results/qwen_s12/pp4, pp5; level at 1024 / 2048).
// Session 15, fixed before the runs that confirm it: the plain GEMM at 64 < M <= 1024 takes the
// 128 x 104 tile with a 4-stage ring (gemm-medium-s4; the ring fits beside the accumulator stage
// only without the SwiGLU's, so the fused kernel keeps its selection): 0.977-0.986 x gemm-medium
// at M = 128 (results/qwen_s13/run8, run11, s15/m4) and 0.982 / 0.987 x gemm-sw-splitk at M =
// 1024 (results/s15/mc, m4; 247 column tiles: 14.97 waves there), level with it at 2048 / 4096.
// Session 16, fixed before the runs that confirm it: the fused kernel at 64 < M <= 1024 takes the
// 128 x 104 tile with the SwiGLU in the main loop's epilogue (-DGU_SWIGLU=1: no SwiGLU warps or
// out stage, so its ring has 4 stages as gemm-medium-s4's): 0.964 / 0.969 x fused-medium at
// M = 128, 0.986 / 0.987 x fused-sw-splitk at 1024 in two runs (results/s16/swf1, swf2), level
// at 2048; with silu in the tanh form since, 0.989 x that at 1024 (results/s16/swft).
// Session 17, fixed before the runs that confirm it: the fused kernel at M >= 4096 is
// fused-sw-splitk again (now linked grouped:8), not fused-pp-g8. With each contender in its own
// power steady state (--sustain-ms 300 --region-ms 50; results/s17/grp) fused-sw-splitk-g8 is
// 0.978 / 0.970 x fused-pp-g8 at M = 4096 / 8192; in the plain timer 1.017 / 1.019 with a few
// contenders and level (0.99-1.01) in the full runs of sessions 15-16, whose mixes set every
// contender's clock. A kernel that runs sustained runs in its own steady state.
// Session 21, fixed before the run that confirms it: at 64 < M <= 1024 the 128-row data-parallel
// tiles 128 x 104 (the two above, since session 21 one m64n208k16 per k16 step), 128 x 112 and
// 128 x 120 (gemm-n112 / -n120, fused-n112-swf / -n120-swf: one m64n{224,240}k16 per k16 step) are
// chosen by whole rounds: the least ceil(tiles / SMs) * tile_n (a round's time taken as
// proportional to the tile's width), ties to 128 x 104. At M = 384, 128 x 120 takes 5 rounds of
// 214 column tiles where 128 x 104 takes 6 of 247 (5 * 120 < 6 * 104): 0.953 [0.946, 0.974] x
// gemm-medium-s4 and 0.955 [0.947, 0.960] x fused-medium-swf (results/s21/n56); at 512 the model has
// 128 x 112 (7 * 112 < 8 * 104). (Ties went to the wider tile for one run, c3, after 128 x 120 was
// 0.995 [0.971, 0.997] x 128 x 104 at M = 1024 in c1; c3 did not confirm it: 1.022 [1.013, 1.035]
// at 960, within the noise at 1000 / 1024. Back to 128 x 104.)
// Session 21, fixed before the run that confirms it: the split-k panel kernel (<kind>-sw-splitk,
// whose last wave is cut along k, so its rounds are not whole) is taken there instead when
// 1.04 * tiles / SMs * tile_n is below that cost: in results/s21/sel1 it was 0.978 [0.972, 0.984] x
// the selected 128 x 120 at M = 896 (GEMM; fused 0.976), where the unweighted model gives 1358
// against 1440, and slower at 512 / 768 (1.088 / 1.023; 776 / 1164 against 784 / 1200): the split
// costs about 4%. Revised after results/s21/c1, where it took the split-k kernel at M = 128 / 256
// (the weighted model: 202 / 403 against 208 / 416): 1.09 / 1.28 x the best cuBLAS there, 1.34-1.41
// in n56 / c2 at 256. At four or fewer row tiles it is slower than the selected data-parallel tile
// (1.04 at 384 against 128 x 120, 1.09 at 512 against 128 x 112, sel1), so it is compared only
// from M > 512. At 513-640 the two costs are 1008.5 against 1008 (128 x 112): a knife edge, level
// in the data (sel1: split-k 0.991 [0.982, 0.999] x 128 x 112 at 640).
// Session 22: the token tiles (gemm-tok<T>: T tokens x 128 columns, the tokens as the wgmma N;
// T = 144, 160 or 176, the one with the fewest padded tokens ceil(M / T) * T), linked under
// stream-k (-sk) when their tiles fill fewer than 8 rounds, else split-k (-splitk): 400 column
// tiles are 3 rounds of 132 and 4 tiles per token tile, so the last round's few tiles run as k
// pieces across the SMs. Their cost in the rule's units (tile_n of a 128 x 2 tile_n tile, per round) is
// 1.09 * tiles / SMs * T / 2: the split's k pieces, and a tile that is ~5-12% slower per unit of
// work than the 128-row tiles. The factor comes from results/s22/c1 (sustained), where the token
// tile against the rule's 128-row pick was 0.938 at M = 320, 1.016 at 448, 0.950 at 576, 0.959 at
// 704, 1.029 at 832 (against the split-k panel kernel) and 0.974 at 960: with 1.09 the rule takes it
// at 320 / 576 / 704 and not at 448 / 832 / 960 (at 960 it forgoes 2.6%; with 1.07 it would also
// take it at 448 / 832, 1.6% / 2.9% slower there, and at 960). The held-out points of
// results/s22/c2 imply 1.11-1.20 (four of six faster than the 128-row pick, 720 1.2% slower). Only at
// 256 < M <= 1024 (128 tokens at M = 256 were 1.15-1.20 x the best cuBLAS).
// Session 23, fixed before the run that confirms it: the fused kernel takes its token tile by the
// same rule (fused-tok<T>-<sched>: the W blocks gate and up, the SwiGLU warps reading the two
// panels; the same 400 column tiles). In results/s23/s1 it was 0.890-0.952 x the fused kernel this
// rule chose before at M = 288 / 320 / 400 / 528 / 800, where the GEMM takes a token tile; there,
// with a group in flight (wgmma_tok.cu TOK_INFLIGHT), the GEMM's token tile was 0.963-0.994 x
// session 22's (the selected tile at each M; tok176-sk was 1.006-1.027 x its old build at 288 /
// 400 / 528, where it is not selected). Refitted after results/s23/s2: the GEMM's factor is
// 1.06, the fused kernel's stays 1.09. In s2 the token tile's ratio to the 128-row pick times the
// model's break-even factor (the pick's cost over tiles / SMs * T / 2) gives the factor the data
// imply: for the GEMM (with a group in flight) 1.035-1.085 over eight M, median 1.056 (448: 0.986 x
// gemm-n112, 960: 0.971 x gemm-medium-s4, both left out by 1.09); for the fused kernel 1.049-1.12,
// median ~1.08 (448: 1.029 x fused-n112-swf, 608: 1.016). s3 tried 1.05 (the median misread) at
// held-out M: the token tile / the old pick 0.986 at 464, 0.968 at 928, 1.008 (noise) at 848,
// 1.022 slower at 872, whose break-even 1.059 is the one point 1.05 and 1.06 decide differently:
// 1.06 leaves 865-880 to the split-k kernel. s3 is not held out for 1.06.
// Session 25, fixed before the run that confirms it: T = 208 joins (contract_tok208_sk.toml; 4 stages
// beside its two 208-row panels), by the same rule and factors: two token tiles at M = 385-416
// (stream-k) instead of three of 144 (split-k), and three / four at 577-624 / 801-832 (split-k; the
// GEMM only at 577-624, where its cost 1002 is a hair under 128 x 112's 1008). The probe runs of
// session 24 (H200; plain timer at 400, results/s24/t: gemm-tok208-sk 0.952 x gemm-tok144-splitk,
// fused 0.939) are not held out for it.
// Session 26, fixed before the run that confirms it: T = 224 joins (contract_tok224_sk.toml, a 3-stage
// ring beside its two 224-row panels; linked stream-k only, so it competes only where two token tiles,
// 800 tiles, make fewer than 8 rounds): M = 433-448 in two token tiles (stream-k) for both kinds
// (costs 720 / 740 against 128 x 112's 784), instead of three of 160 (split-k) for the GEMM (1.059 x the
// best cuBLAS at 440 in results/s25/d1) and 128 x 112 for the fused kernel. T = 240 would tie 3 x 160 everywhere it applies and
// lose the tie. The probe run of session 26 (plain timer at 440, results/s26/t: gemm-tok224-sk 0.974 x
// gemm-tok160-splitk, fused 0.992 x fused-n112-swf) is not held out for it. Returns null where the
// rule does not apply or the kernel is absent; cost receives the token tile's cost.
// Session 28, after results/s28/c2 (held out for session 27's lead at 288): where two token tiles make
// 800 tiles (fewer than 8 rounds), split-k cuts each of the last 8 tiles into 16 pieces, and since
// the pieces sum the partials in shares (src/generate.cpp, kReduceSharesPieces) the split-k link was
// never slower than the stream-k one the rule took, at M = 272 / 288 / 304 / 320 / 336 / 352 / 400 /
// 416 (sustained): GEMM 0.961-1.007 (faster at 3 of 8 M, noise at 5), fused 0.974-0.997 (faster at
// 5, noise at 3). So split-k is taken also below 8 rounds wherever its split tiles have 10 pieces or
// more and the split-k link exists (tok224 has none and stays stream-k). Not held out.
// Session 29, fixed before the run that confirms it (results/s29/c4), from results/s29/c1 / c2, the
// first runs at M the rule had never been measured at (24 / 48 / 96 / 200 / 1100 / 1536 / 2100 / 3000 /
// 5000 / 7000): the GEMM trailed the best cuBLAS by 1.5-10% wherever the rule gave 128-row tiles with
// many padded rows, and cuBLAS's fastest tile there had a token side of 128-304. (1) The token tile
// competes at every M > 64, not only at 256 < M <= 1024: at M = 200 (one token tile of 208, 400 tiles)
// gemm-tok208-sk was 0.911 x gemm-medium-s4 (two 128-row tiles, 56 rows padded), fused 0.946 x
// fused-medium-swf; the model's cost decides (the 128-row tiles keep M <= 128, where one row tile has
// 2 rounds against the token tile's 3.03, and 225-256). (2) Above 1024 it is compared with the split-k
// panel kernel's 1.04 * tiles / SMs * tile_n, with the factor 1.06 for both kinds: there the fused
// kernel's alternative has SwiGLU warps reading accumulator panels as the token tile's do (at <= 1024 the
// fused factor 1.09 was fitted against 128-row tiles with the SwiGLU in the main loop). In c2 the token
// tile / the split-k panel kernel was 0.952 / 0.962 (GEMM) and 0.968 / 0.980 (fused) at 1100 / 2100,
// where 1.06 takes it, and 1.051-1.165 (GEMM), 1.039-1.165 (fused) at 3000 / 5000 / 7000, where 1.06 does
// not; the factors those runs imply are 1.02-1.05 at <= 2100 and 1.09-1.19 at >= 3000. (3) Split-k below
// 8 rounds only up to kSharesPiecesMax pieces per split tile: at one token tile (400 tiles, the last 4
// cut into 33 pieces each) gemm-tok208-splitk was 1.039 x gemm-tok208-sk at M = 200 (fused 1.043);
// the shares were measured good at 11-16 pieces (session 28). (4) Above 1024 only while X fits in half
// the L2 (M * K * 2 bytes <= 25 MiB: M <= 2560 at K = 5120; kTokenMaxXBytes): the token tiles run in
// col_major, so every wave of ~132 / (M / T) column tiles reads all of X again, where the split-k panel
// kernel runs in bands of 8 row tiles. In results/s29/c3 the token tile in col_major / the panel kernel
// was 0.970 at 2100 (X 21.5 MB) and 1.025-1.187 at 3000-7000; in bands of 8 token tiles (grouped:8
// links, probes) 0.977 at 2100 and still 1.005-1.033 slower at 3000 / 4000 / 5000 / 7000.
// Held out (results/s29/c4, sustained, 5 rounds, 15 M not measured before; the new pick / the old):
// 136 / 152 / 170 / 192 / 216: GEMM 0.695 / 0.760 / 0.825 / 0.922 / 0.977, fused 0.772 / 0.812 / 0.868 /
// 0.939 / 0.999, all faster; 1200 / 1290 / 1430 / 1560 / 1700 / 1850 / 1930 / 2200 / 2440 / 2480: GEMM
// faster at 7 (0.936-0.989), within noise at 1850 / 2440 / 2480; fused faster at 6 (0.959-0.986), within
// noise at 1930 / 2200, slower at 1850 (1.013) and 2440 (1.012), both 144-token tiles.
constexpr double kTokenMaxXBytes = 25.0 * 1024 * 1024;
constexpr unsigned kHidden = 5120;  // K: X's row length
// The split-k plan's pieces per split tile from which they sum the partials in shares
// (kReduceSharesPieces in src/generate.cpp), and the most pieces at which the rule takes split-k below
// 8 rounds.
constexpr unsigned kSharesPieces = 10, kSharesPiecesMax = 16;
// Session 29, fixed before the run that confirms it (results/s29/c6), from results/s29/c5: the GEMM's
// 144-token tile with two W blocks per warpgroup (gemm-tok144w-splitk: 144 tokens x 256 columns,
// wgmma_tok.cu -DTOK_WB=2, the X slice read for twice the work) / gemm-tok144-splitk was 0.974 /
// 0.993 / 0.979 / 0.951 at M = 576 / 1290 / 1560 / 2440 (4 / 9 / 11 / 17 token tiles; against the
// best cuBLAS 0.961 / 0.991 / 0.989 / 0.983), level at 288 (two token tiles: 400 of its tiles, 33 pieces
// per split tile; its stream-k link 0.998) and slower at 136 (one token tile, 200 tiles). So where the
// rule takes gemm-tok144-splitk and the 256-column tile's own tile count takes split-k (8 rounds or
// more, or 10-16 pieces per split tile), the GEMM takes gemm-tok144w-splitk instead. (Its 3-stage ring
// and four acc panels fit only up to 144 tokens: 227456 of 232448 bytes of shared memory.) Held out (results/s29/c6, new / old pick): 0.978 / 0.940 / 0.973 / 0.984 / 0.968 / 0.936 at
// M = 544 / 848 / 1424 / 1696 / 1808 / 2446, all faster; / the best cuBLAS 0.979 / 0.989 (faster),
// 0.999 / 1.005 / 1.004 / 0.997 (noise), where the old pick was 1.001-1.072.
// Session 30, from results/s30/n1 (sustained, 5 rounds; its first run): the fused twin
// fused-tok144w-splitk (the SwiGLU warps read gate rows from W block 0 and up rows from W block 1;
// one 16 x 128 out stage) / fused-tok144-splitk was 0.977 / 0.975 / 0.951 / 0.940 at M = 560 / 1720 /
// 1860 / 2436 and / fused-sw-splitk 0.994 (noise) at 860; / the best cuBLAS + SwiGLU 0.923-0.958. So
// the fused kernel takes it by the GEMM's condition: where its pick is fused-tok144-splitk and the
// 256-column tile's own plan is split-k. (At 833-864 the fused pick is fused-sw-splitk, kept.)
// Session 30, fixed before the run that confirms it (results/s30/c1), from results/s30/p1 (sustained, 5
// rounds, 12 M above 1024 where the rule did not take it): the 256-column tile / the split-k panel
// kernel was 0.976-1.037 (GEMM) and 0.973-1.032 (fused), and it won where it pads no more rows than the
// panel kernel: 0.985 / 0.991 at 2300 (2304 rows both), 0.976 / 0.973 at 3000 (3024 against 3072); it
// lost or was level where it pads 3-5.5% more (GEMM 1.008-1.037 at 1536 / 1900 / 2048, level at 1632 /
// 1760). Its cost in the rule's units,
// kWideFactor * tiles / SMs * 144 * tile_n / 128 (tile_n = 128 here: 200 tiles per 144 tokens), with
// kWideFactor = 1.03 against the panel kernel's 1.04 * tiles / SMs * 128, decides every p1 point the way
// it measured except 1350 and 2560 (GEMM 0.998 / 0.979, forgone; fused 1.011 / 1.011); the medians of the
// factors the points imply are 1.016 (GEMM) and 1.023 (fused), and 1.04 at 4096 (GEMM), where X (42 MB) no longer sits in the L2
// beside W's stream: its col_major order reads all of X again every ~132 / (M / 144) column tiles. So it
// competes above 1024 against the panel kernel and the token tiles only while X <= 32 MiB (M <= 3276;
// measured to 3000). At 1100 it takes over from the 160-token tile by a hair (factor x padded rows 1.03 x
// 1152 = 1186.6 against 1.06 x 1120 = 1187.2):
// 0.995 / 0.976 x gemm- / fused-tok160-splitk there in p1.
// Held out (results/s30/c1, sustained, 5 rounds, 11 M never measured, the new pick / session 29's): GEMM
// 0.962-0.986 at 9 M where it changed (faster at 8, 2210 0.976 within noise), fused 0.957-0.997 at 11
// (all faster); / the best cuBLAS 0.989-1.020 (1.009-1.016 slower at 1960 / 2210 / 2380, where the old pick
// was 1.027-1.040), fused / the best pair 0.928-0.985.
// Session 30, fixed before the run that confirms it (results/s30/c2), from the probe in results/s30/c1
// (g*.json): above 32 MiB of X the tile linked in bands of 8 token tiles (TILE_ORDER grouped:8, the
// panel kernel's order; *-tok144w-splitk-g8) / the split-k panel kernel was 0.965 / 0.982 at 3600 (3600
// rows against 3712), 0.993 / 0.990 at 5000 (5040 against 5120), 1.014 / 1.033 at 7000 and 1.014 / 0.993
// at 8192 (7056 / 8208 against 7040 / 8192): the factors these imply are 1.035-1.052 (GEMM) and
// 1.031-1.072 (fused), so kWideG8Factor = 1.05: it is taken where it pads about 1% fewer rows.
// Held out (results/s30/c2, 5 M never measured where it now takes the g8 tile, / the split-k panel kernel):
// GEMM 0.966 / 0.975 / 0.976 / 0.987 (faster) at 3730 / 4150 / 5150 / 6030, 0.991 (noise) at 7320; fused
// 0.986 / 0.982 / 0.988 (faster) at 3730 / 5150 / 7320, 0.999 / 0.998 (noise) at 4150 / 6030.
constexpr double kWideFactor = 1.03, kWideMaxXBytes = 32.0 * 1024 * 1024, kWideG8Factor = 1.05;
// Session 31, fixed before the run that confirms it (results/s31/c1), from the probe in results/s31/p1:
// the 136- and 152-token tiles (an odd count of n8 blocks; probed as the plain GEMM) / the 144- and
// 160-token picks were 0.966-0.986 (faster) at M = 136 / 152 / 264 / 272 / 300 / 304 and 1.001 / 1.017
// (noise) at 130 / 150, and their time per padded token 1.016-1.053 x the wider tile's (from the median
// times; median 1.033): the W rows a token tile streams do not shrink with it. So a narrow tile competes
// with its padded tokens x kNarrowTokenFactor, only in place of the tile 8 tokens wider (the comparison
// measured; against wider tiles a narrow one streams W for more token tiles) and up to M = 1024. At the
// same count of token tiles it pads 3.7-5.9% fewer tokens than that tile (224 / 216 ... 144 / 136), so it
// is taken wherever it needs no more token tiles: the factor decides only its cost against the 128-row
// tiles (select()). The GEMM at 129-136, 145-152, 257-272, 289-304, 449-456 and 897-912; never where the
// 256-column tile was taken (the check above comes first).
// Held out (results/s31/c1, 8 M never measured, the new pick / the old): 0.951-0.987 (faster) at 131 / 262 /
// 268 / 296 / 452 / 905, 1.002 / 0.998 (noise) at 134 / 147. Their fused twins (the SwiGLU in 8-row out
// stages, built after that run) take the same rule, with the same factor, fixed before the run that
// measures them (results/s31/c2): 129-136, 145-152, 257-272, 289-304, and by their cost against the
// 128-row tiles 449-456 (0.6% below fused-n112-swf's) and 897-912 (0.07% below fused-medium-swf's).
// Held out (results/s31/c2): 0.932-0.979 (faster) at 136 / 293 / 302 / 450 / 910, within noise at 132 / 149
// / 265. Then, fixed before the run that confirms it (results/s31/c3), the same rule and factor for 168 /
// 200 / 216 tokens in place of 176 / 208 / 224 (216 stream-k only, 3 stages, as 224): both kinds at 161-168,
// 177-200, 209-216, 321-336, 385-400, 641-672, the GEMM also at 577-600.
constexpr double kNarrowTokenFactor = 1.035;
// Session 32, fixed before the run that confirms it (results/s32/c1), from the probe in results/s32/p2:
// the 136- / 152-token links with a 5-stage ring (loader/contract_tok_sk5.toml; 4 stages beside the acc
// panels before) / the same tile with 4 stages, at one token tile (stream-k) and two (split-k): GEMM
// 0.975 / 0.969 / 0.995 / 0.977 at 131 / 136 / 147 / 152, 0.983 / 0.977 / 0.992 / 0.984 at 264 / 272 / 296
// / 304 (medians of the paired per-round ratios, all faster); fused 1.009 (noise) at 131, 0.991 / 0.978 /
// 0.964 (faster) at 136 / 147 / 152, 0.971 / 0.972 at 264 / 272, 1.009 (slower) at 296, 1.000 (noise) at
// 304. There W is half of each stage and is streamed from DRAM for one or two token tiles, so a fifth
// stage holds 25% more of it in flight. (The 144-token tile with 5 stages: GEMM level at 140 / 288, fused
// 0.980 / 1.001; session 25 measured 5 stages on the 144- / 160-token tiles at 288-720: mixed.) So the
// narrow pick at T = 136 / 152 takes its 5-stage link where M <= 2 T: both kinds at 129-136, 145-152,
// 257-272 and 289-304 (the fused kernel too at 289-304, against 296's 1.009: one rule for the class).
constexpr unsigned kFiveStageTokens = 2;  // token tiles
inline bool split_k_plan(double tiles, unsigned sms) {
  const unsigned last = unsigned(tiles) % sms;
  return tiles >= 8.0 * sms || (last > 0 && sms / last >= kSharesPieces && sms / last <= kSharesPiecesMax);
}
inline const Candidate* token_tile(const std::string& kind, unsigned M, unsigned sms, const std::vector<Candidate>& kernels,
                                   double& cost) {
  if ((kind != "gemm" && kind != "fused") || M <= 64) return nullptr;
  const double factor = kind == "gemm" || M > 1024 ? 1.06 : 1.09;
  // The kind's T-token link its plan takes, and its tiles: split-k from 8 rounds of tiles, and below
  // where its split tiles have kSharesPieces pieces or more (their pieces sum the partials in shares;
  // session 28) and at most kSharesPiecesMax (session 29), when the split-k link is there; else stream-k.
  auto planned = [&](unsigned T, double& tiles) -> const Candidate* {
    const std::string sk = kind + "-tok" + std::to_string(T) + "-sk", splitk = kind + "-tok" + std::to_string(T) + "-splitk";
    bool have_splitk = false;
    for (const Candidate& o : kernels) have_splitk |= !o.probe && o.label == splitk && o.tile_m == T;
    for (const Candidate& k : kernels) {
      if (k.probe || k.tile_m != T || (k.label != sk && k.label != splitk)) continue;
      tiles = double((M + T - 1) / T) * double((kInter + k.tile_n - 1) / k.tile_n);
      const bool want_splitk = tiles >= 8.0 * sms || (split_k_plan(tiles, sms) && have_splitk);
      if (k.label == (want_splitk ? splitk : sk)) return &k;
    }
    return nullptr;
  };
  const Candidate* pick = nullptr;
  unsigned pick_padded = 0;
  for (const unsigned T : {144u, 160u, 176u, 208u, 224u}) {  // ties to the smaller T
    double tiles = 0;
    const Candidate* k = planned(T, tiles);
    const unsigned padded = (M + T - 1) / T * T;
    if (k && (!pick || padded < pick_padded)) pick = k, pick_padded = padded, cost = factor * tiles / sms * T / 2.0;
  }
  // session 29: the 256-column 144-token tile where its own split-k plan applies (session 30: the
  // fused kernel's too)
  if (pick && pick->label == kind + "-tok144-splitk")
    for (const Candidate& k : kernels)
      if (!k.probe && k.label == kind + "-tok144w-splitk" && k.tile_m == 144 &&
          split_k_plan(double((M + 143) / 144) * double((kInter + k.tile_n - 1) / k.tile_n), sms))
        return &k;
  // session 31: the 136- / 152-token tiles in place of the 144- / 160-token pick (the tile 8 tokens
  // wider, the one they were measured against) up to M = 1024, where kNarrowTokenFactor x their padded
  // tokens is below the pick's; later in the session 168 / 200 / 216 in place of 176 / 208 / 224
  if (!pick || M > 1024) return pick;
  for (const unsigned T : {136u, 152u, 168u, 200u, 216u}) {
    double tiles = 0;
    const Candidate* k = pick->tile_m == T + 8 ? planned(T, tiles) : nullptr;
    if (k && kNarrowTokenFactor * ((M + T - 1) / T * T) < pick_padded) {
      cost = (kind == "gemm" ? 1.06 : 1.09) * kNarrowTokenFactor * tiles / sms * T / 2.0;
      // session 32: at one or two token tiles the 136- / 152-token links with a 5-stage ring (the
      // same tile and plan; kFiveStageTokens)
      if ((T == 136 || T == 152) && M <= kFiveStageTokens * T)
        for (const Candidate& f : kernels)
          if (!f.probe && f.tile_m == T && f.label == k->label + "5") return &f;
      return k;
    }
  }
  return pick;
}

// Returns the label of the kernel of `kind` ("fused" or "gemm") selected at M on `sms` SMs, or `kind`
// itself when none of `kernels` qualifies.
inline std::string select(const std::string& kind, unsigned M, unsigned sms, const std::vector<Candidate>& kernels) {
  if (M > 64 && M <= 1024) {
    const std::string base = kind == "gemm" ? "gemm-medium-s4" : "fused-medium-swf";
    const std::string wide[] = {kind == "gemm" ? "gemm-n112" : "fused-n112-swf", kind == "gemm" ? "gemm-n120" : "fused-n120-swf"};
    const Candidate* pick = nullptr;
    double pick_cost = 0;
    for (const std::string& label : {base, wide[0], wide[1]})
      for (const Candidate& k : kernels) {
        if (k.label != label || k.probe) continue;
        const double tiles = double((M + k.tile_m - 1) / k.tile_m) * double((kInter + k.tile_n - 1) / k.tile_n);
        const double cost = std::ceil(tiles / sms) * k.tile_n;
        if (!pick || cost < pick_cost) pick = &k, pick_cost = cost;  // in order: ties to 128 x 104
      }
    const Candidate* choice = pick;
    double choice_cost = pick_cost;
    if (pick && M > 512)
      for (const Candidate& k : kernels)
        if (k.label == kind + "-sw-splitk" && !k.probe) {
          const double tiles = double((M + k.tile_m - 1) / k.tile_m) * double((kInter + k.tile_n - 1) / k.tile_n);
          if (1.04 * tiles / sms * k.tile_n < choice_cost) choice = &k, choice_cost = 1.04 * tiles / sms * k.tile_n;
        }
    double tok_cost = 0;
    if (const Candidate* tok = pick ? token_tile(kind, M, sms, kernels, tok_cost) : nullptr)
      if (tok_cost < choice_cost) choice = tok;
    if (choice) return choice->label;
  }
  if (M <= 16)
    for (const Candidate& k : kernels)
      if (k.label == kind + "-small16") return k.label;
  if (M >= 1024)
    for (const Candidate& k : kernels)
      if (k.label == kind + "-sw-splitk") {
        // session 29: the token tile where its cost is below the split-k panel kernel's
        const double tiles = double((M + k.tile_m - 1) / k.tile_m) * double((kInter + k.tile_n - 1) / k.tile_n);
        const Candidate* pick = &k;
        double pick_cost = 1.04 * tiles / sms * k.tile_n, tok_cost = 0;
        if (const Candidate* tok = double(M) * kHidden * 2 <= kTokenMaxXBytes ? token_tile(kind, M, sms, kernels, tok_cost) : nullptr)
          if (tok_cost < pick_cost) pick = tok, pick_cost = tok_cost;
        // session 30: the 256-column 144-token tile by its own cost (always 8 rounds or more here, so
        // split-k), in col_major while X <= 32 MiB, else in bands of 8 token tiles (-g8)
        const bool col_major = double(M) * kHidden * 2 <= kWideMaxXBytes;
        const std::string wide = kind + (col_major ? "-tok144w-splitk" : "-tok144w-splitk-g8");
        for (const Candidate& w : kernels)
          if (!w.probe && w.label == wide && w.tile_m == 144) {
            const double w_tiles = double((M + 143) / 144) * double((kInter + w.tile_n - 1) / w.tile_n);
            const double w_cost = (col_major ? kWideFactor : kWideG8Factor) * w_tiles / sms * 144.0 * w.tile_n / 128.0;
            if (w_cost < pick_cost) pick = &w, pick_cost = w_cost;
          }
        return pick->label;
      }
  for (const Candidate& k : kernels) {
    if (k.probe || k.packed_w || is_token_tile(k.label)) continue;
    if (!k.panels || k.label.find("control") != std::string::npos || k.label.rfind(kind, 0) != 0 || M <= 64) continue;
    const double w = double((M + k.tile_m - 1) / k.tile_m) * double((kInter + k.tile_n - 1) / k.tile_n) / sms;
    if (std::ceil(w) / w - 1.0 <= 0.05) return k.label;
  }
  std::string pick;
  double best_cost = 0;
  unsigned best_n = 0;
  for (const Candidate& k : kernels) {
    if (k.probe || k.packed_w || is_token_tile(k.label)) continue;
    if (k.panels || k.label.find("control") != std::string::npos || k.label.rfind(kind, 0) != 0) continue;
    if ((k.tile_m < 128) != (M <= 64) || k.tile_m < 64) continue;  // the 16-row tile only by the rule above
    const double tiles = double((M + k.tile_m - 1) / k.tile_m) * double((kInter + k.tile_n - 1) / k.tile_n);
    const double cost = std::ceil(tiles / sms) * k.tile_m * k.tile_n;
    if (pick.empty() || cost < best_cost || (cost == best_cost && k.tile_n > best_n)) pick = k.label, best_cost = cost, best_n = k.tile_n;
  }
  return pick.empty() ? kind : pick;
}

}  // namespace qwen_select
