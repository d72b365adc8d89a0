#!/usr/bin/env bash
# Session 31 probe: the plain GEMM on 136- / 152-token tiles (gemm-tok136-*, gemm-tok152-*; probes) beside
# the rule's pick (named: the 144- / 160-token tile, which pads 8 tokens more per token tile) at one token
# tile (stream-k: M = 130 / 136 / 150 / 152) and two (split-k, the rule's plan for 800 tiles: 264 / 272 /
# 300 / 304), sustained, 5 rounds. Read with python3 ../s29/ratios_pick.py r/p*.json (it prints named / probe).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
while read M pick T sched; do
  A=(--${pick//_/-} $K/$pick.cubin $K/$pick.map --probe gemm-tok$T-${sched} $K/gemm_tok${T}_${sched}.cubin $K/gemm_tok${T}_${sched}.map)
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/p$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/p1.tgz -C $OUT r
done <<'LIST'
130 gemm_tok144_sk 136 sk
136 gemm_tok144_sk 136 sk
150 gemm_tok160_sk 152 sk
152 gemm_tok160_sk 152 sk
264 gemm_tok144_splitk 136 splitk
272 gemm_tok144_splitk 136 splitk
300 gemm_tok160_splitk 152 splitk
304 gemm_tok160_splitk 152 splitk
LIST
