#!/usr/bin/env bash
# session 29 call 1: the rule's picks at M never measured before (held out: 24 / 48 / 96 / 200 below 256,
# 1100 / 2100 / 3000 / 5000 / 7000 above 1024, none a multiple of the tile height), plus 1536 and 8192
# (the fused target's largest M). Each pick beside the same cubin with X padded to whole tiles
# (--probe-padded-x: no TMA box of X reaches past M), sustained, 5 rounds.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $O/run.log
for spec in "1100 sw_splitk sw_splitk px" "8192 sw_splitk sw_splitk -" "2100 sw_splitk sw_splitk px" "5000 sw_splitk sw_splitk px" \
            "200 medium_s4 medium_swf px" "48 small small px" "3000 sw_splitk sw_splitk px" "7000 sw_splitk sw_splitk px" \
            "96 medium_s4 medium_swf px" "24 small small px" "1536 sw_splitk sw_splitk -"; do
  set -- $spec; M=$1; A=(--gemm-${2//_/-} $K/gemm_$2.cubin $K/gemm_$2.map --fused-${3//_/-} $K/fused_$3.cubin $K/fused_$3.map)
  if [ "$4" = px ]; then
    A+=(--probe-padded-x gemm-${2//_/-}-px $K/gemm_$2.cubin $K/gemm_$2.map --probe-padded-x fused-${3//_/-}-px $K/fused_$3.cubin $K/fused_$3.map)
  fi
  timeout 90 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c1.tgz -C $OUT r
done
