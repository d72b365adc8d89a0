#!/usr/bin/env bash
# Session 30, probe (one device call): the 256-column 144-token tiles (gemm- / fused-tok144w-splitk,
# named) against the rule's pick of each kind (the probes) at 12 M above 1024 where the rule does not
# take them (the split-k panel kernel; at 1100 the 160-token tile), sustained, 5 rounds. Read with
# ../s29/ratios_pick.py (the named kernel is the new, the probe the old).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
for spec in "1100 tok160_splitk" "1350 sw_splitk" "1500 sw_splitk" "1536 sw_splitk" "1632 sw_splitk" "1760 sw_splitk" \
            "1900 sw_splitk" "2048 sw_splitk" "2300 sw_splitk" "2560 sw_splitk" "3000 sw_splitk" "4096 sw_splitk"; do
  set -- $spec; M=$1
  A=(--probe gemm-${2//_/-} $K/gemm_$2.cubin $K/gemm_$2.map --probe fused-${2//_/-} $K/fused_$2.cubin $K/fused_$2.map
     --gemm-tok144w-splitk $K/gemm_tok144w_splitk.cubin $K/gemm_tok144w_splitk.map
     --fused-tok144w-splitk $K/fused_tok144w_splitk.cubin $K/fused_tok144w_splitk.map)
  timeout 80 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/p$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
tar czf $OUT/p1.tgz -C $OUT r
