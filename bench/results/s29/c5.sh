#!/usr/bin/env bash
# session 29 call 5: the 144-token tile with two W blocks per warpgroup (gemm-tok144w-sk / -splitk: 144 tokens x
# 256 columns, wgmma_tok.cu -DTOK_WB=2) as probes beside the rule's GEMM pick, sustained, 5 rounds, at
# M = 136 / 288 / 576 / 1290 / 1560 / 2440 (one to seventeen 144-token tiles).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $O/run.log
for spec in "1290 tok144_splitk" "136 tok144_sk" "2440 tok144_splitk" "288 tok144_splitk" "1560 tok144_splitk" "576 tok144_splitk"; do
  set -- $spec; M=$1
  A=(--gemm-${2//_/-} $K/gemm_$2.cubin $K/gemm_$2.map)
  for k in gemm_tok144w_sk gemm_tok144w_splitk; do A+=(--probe ${k//_/-} $K/$k.cubin $K/$k.map); done
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c5.tgz -C $OUT r
done
