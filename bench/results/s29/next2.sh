#!/usr/bin/env bash
# Ready for the next session, after next.sh (not run in session 29): the narrow token tiles
# gemm/fused_tok{32,48,64}_sk (built in session 29) / the 64-row tile, the rule's pick at 17 <= M <= 64,
# sustained, 5 rounds, at M = 24 / 40 / 48 / 56 / 64 (next.sh's REQUIRE_ALL run checks them first).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
for spec in "24 32" "40 48" "48 48" "56 64" "64 64"; do
  set -- $spec; M=$1
  A=(--gemm-small $K/gemm_small.cubin $K/gemm_small.map --fused-small $K/fused_small.cubin $K/fused_small.map
     --probe gemm-tok$2-sk $K/gemm_tok$2_sk.cubin $K/gemm_tok$2_sk.map --probe fused-tok$2-sk $K/fused_tok$2_sk.cubin $K/fused_tok$2_sk.map)
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/n$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/next2.tgz -C $OUT r
done
