#!/usr/bin/env bash
# session 29 call 6: the rule of the commit "qwen_select: gemm-tok144w-splitk where ..." (fixed before this run)
# held out at M not measured before where it takes the 256-column 144-token tile: each / the pick before
# (gemm-tok144-splitk), sustained, 5 rounds.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $O/run.log
for M in 1808 544 2446 848 1696 1424; do
  A=(--gemm-tok144w-splitk $K/gemm_tok144w_splitk.cubin $K/gemm_tok144w_splitk.map --probe gemm-tok144-splitk $K/gemm_tok144_splitk.cubin $K/gemm_tok144_splitk.map)
  timeout 45 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c6.tgz -C $OUT r
done
