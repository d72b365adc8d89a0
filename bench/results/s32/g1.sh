#!/usr/bin/env bash
# Session 32 probe: the grid. Session 11 found W's TMA stream 2-4% faster on 124 blocks than on 132
# (data-parallel, M <= 64). The split-schedule links (stream-k / split-k token tiles) run on every
# resident block (132). Here the rule's GEMM and fused picks (named) beside the same cubins launched on
# fewer blocks (--probe-grid; the stream-k / split-k plans follow gridDim), sustained, 5 rounds.
# Read with python3 ../s29/ratios_pick.py r/g*.json (named / probe).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
while read M g f grids; do
  A=(--${g//_/-} $K/$g.cubin $K/$g.map --${f//_/-} $K/$f.cubin $K/$f.map)
  for n in ${grids//,/ }; do
    A+=(--probe-grid ${g//_/-}-g$n $K/$g.cubin $K/$g.map $n --probe-grid ${f//_/-}-g$n $K/$f.cubin $K/$f.map $n)
  done
  timeout 150 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/g$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/g1.tgz -C $OUT r
done <<'LIST'
136 gemm_tok136_sk fused_tok136_sk 124,116
152 gemm_tok152_sk fused_tok152_sk 124,116
272 gemm_tok136_splitk fused_tok136_splitk 124,116
288 gemm_tok144_splitk fused_tok144_splitk 124,116
420 gemm_tok144_splitk fused_tok144_splitk 124,116
660 gemm_tok168_splitk fused_tok168_splitk 124,116
905 gemm_tok152_splitk fused_tok152_splitk 124,116
24 gemm_small fused_small 132,116
1250 gemm_sw_splitk fused_sw_splitk 124
LIST
