#!/usr/bin/env bash
# session 29 call 2: where c1 found the GEMM behind the best cuBLAS at M the rule gives 128-row tiles
# (1100 / 2100 / 3000 / 5000 / 7000: 128 x 256 tiles, up to 127 token rows padded; 200: 128 x 104,
# 56 rows padded), cuBLAS's fastest tile had a token side of 128 / 152 / 160 / 200 / 304. The token tiles
# (tokens as the wgmma N, any multiple of 16) with the fewest padded tokens, as probes beside the
# rule's picks, sustained, 5 rounds. Then the MoE layer at 512 tokens (C++ and the PyTorch pipeline).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $O/run.log
for spec in "1100 sw_splitk sw_splitk tok224_sk tok160_splitk" "2100 sw_splitk sw_splitk tok176_splitk tok144_splitk" \
            "200 medium_s4 medium_swf tok208_sk tok208_splitk" "5000 sw_splitk sw_splitk tok144_splitk tok176_splitk" \
            "3000 sw_splitk sw_splitk tok144_splitk tok160_splitk" "7000 sw_splitk sw_splitk tok160_splitk tok176_splitk"; do
  set -- $spec; M=$1; A=(--gemm-${2//_/-} $K/gemm_$2.cubin $K/gemm_$2.map --fused-${3//_/-} $K/fused_$3.cubin $K/fused_$3.map)
  for t in $4 $5; do for k in gemm_$t fused_$t; do A+=(--probe ${k//_/-} $K/$k.cubin $K/$k.map); done; done
  timeout 100 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c2.tgz -C $OUT r
done
env -u OUT RESULTS_DIR=$O/moe BENCH_TIMEOUT=150 bash bench/moe/run.sh build --T 512 --rounds 10 > $O/moe.log 2>&1
echo "moe rc=$?" | tee -a $O/run.log
tar czf $OUT/c2.tgz -C $OUT r
