#!/usr/bin/env bash
# session 29 call 3: the token tiles in bands of 8 token tiles (grouped:8, the *_splitk_g8 links) against the
# same links in col_major and the split-k panel kernel, at M where c2 found the col_major token tile
# slower (3000 / 5000 / 7000; 2100 where it was faster; 4000 = 25 x 160), sustained, 5 rounds.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $O/run.log
for spec in "5000 tok144" "2100 tok176" "7000 tok160" "3000 tok144" "4000 tok160"; do
  set -- $spec; M=$1; A=(--gemm-sw-splitk $K/gemm_sw_splitk.cubin $K/gemm_sw_splitk.map --fused-sw-splitk $K/fused_sw_splitk.cubin $K/fused_sw_splitk.map)
  for k in gemm_$2_splitk fused_$2_splitk gemm_$2_splitk_g8 fused_$2_splitk_g8; do A+=(--probe ${k//_/-} $K/$k.cubin $K/$k.map); done
  timeout 100 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c3.tgz -C $OUT r
done
