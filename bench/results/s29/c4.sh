#!/usr/bin/env bash
# session 29 call 4: the rule of commit "qwen_select: token tiles at 129-224 and above 1024" held out, at
# M not measured before: each new pick (GEMM and fused) beside the pick of the rule before it
# (128 x 104 below 256, the split-k panel kernel above 1024), sustained, 5 rounds.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $O/run.log
for spec in "192 tok208_sk medium_s4 medium_swf" "1560 tok144_splitk sw_splitk sw_splitk" "152 tok160_sk medium_s4 medium_swf" \
            "2200 tok160_splitk sw_splitk sw_splitk" "1200 tok176_splitk sw_splitk sw_splitk" "216 tok224_sk medium_s4 medium_swf" \
            "1850 tok144_splitk sw_splitk sw_splitk" "2480 tok208_splitk sw_splitk sw_splitk" "136 tok144_sk medium_s4 medium_swf" \
            "1430 tok144_splitk sw_splitk sw_splitk" "1930 tok176_splitk sw_splitk sw_splitk" "170 tok176_sk medium_s4 medium_swf" \
            "2440 tok144_splitk sw_splitk sw_splitk" "1290 tok144_splitk sw_splitk sw_splitk" "1700 tok144_splitk sw_splitk sw_splitk"; do
  set -- $spec; M=$1
  A=(--gemm-${2//_/-} $K/gemm_$2.cubin $K/gemm_$2.map --fused-${2//_/-} $K/fused_$2.cubin $K/fused_$2.map
     --probe gemm-${3//_/-} $K/gemm_$3.cubin $K/gemm_$3.map --probe fused-${4//_/-} $K/fused_$4.cubin $K/fused_$4.map)
  timeout 80 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c4.tgz -C $OUT r
done
