#!/usr/bin/env bash
# Session 32 probe: the rule's token-tile picks at one and two token tiles (named: 4-stage ring) beside
# the same tiles with a 5-stage ring (probes: gemm/fused-tok<T>-<sched>5, loader/contract_tok_sk5.toml),
# sustained, 5 rounds. Read with python3 ../s29/ratios_pick.py r/p*.json (named / probe).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
while read M T sched; do
  g=gemm_tok${T}_$sched; f=fused_tok${T}_$sched
  A=(--${g//_/-} $K/$g.cubin $K/$g.map --${f//_/-} $K/$f.cubin $K/$f.map
     --probe ${g//_/-}5 $K/${g}5.cubin $K/${g}5.map --probe ${f//_/-}5 $K/${f}5.cubin $K/${f}5.map)
  timeout 120 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/p$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/p2.tgz -C $OUT r
done <<'LIST'
131 136 sk
136 136 sk
140 144 sk
147 152 sk
152 152 sk
264 136 splitk
272 136 splitk
288 144 splitk
296 152 splitk
304 152 splitk
LIST
grep -c "PASS: every check passed" $O/run.log; grep "FAIL" $O/run.log | head
