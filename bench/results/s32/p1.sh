#!/usr/bin/env bash
# Session 32 probe: the one-warpgroup 32 x 104 / 48 x 104 tiles (gemm/fused-small32, -small48; X slices of
# 32 / 48 rows, 6 stages; new) beside the rule's pick at 17-64 (named: gemm-small / fused-small, the 64 x 104
# tile, 5 stages), sustained, 5 rounds. Read with python3 ../s29/ratios_pick.py r/p*.json (named / probe).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
while read M T; do
  A=(--gemm-small $K/gemm_small.cubin $K/gemm_small.map --fused-small $K/fused_small.cubin $K/fused_small.map
     --probe gemm-small$T $K/gemm_small$T.cubin $K/gemm_small$T.map --probe fused-small$T $K/fused_small$T.cubin $K/fused_small$T.map)
  timeout 120 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/p$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/p1.tgz -C $OUT r
done <<'LIST'
17 32
20 32
24 32
28 32
32 32
36 48
40 48
44 48
48 48
LIST
grep -c "PASS: every check passed" $O/run.log; grep "FAIL" $O/run.log | head
