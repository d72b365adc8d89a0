#!/usr/bin/env bash
# Ready for the next session, after next.sh (one device call, ~250 s): the 256-column tile with 128 tokens
# (gemm- / fused-tok128w-splitk, col_major at M <= 3276, -g8 above; built in session 30, never run) as
# probes beside the split-k panel kernel, the rule's pick at these M, sustained, 5 rounds. Both pad the same
# rows, so the ratio is the tile's own per-row cost (the 144-token tile's was 1-3% below the panel
# kernel's in results/s30/p1 / c1); the 144-token tile (named) beside it in the same runs
# (session 31: 128w / 144w read directly). Read with python3 ../s30/ratios_g8.py r/t*.json (probe / named).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
for M in 1500 1760 2048 2560 4096 6144 8192; do
  s=""; [ $M -gt 3276 ] && s=_g8
  A=(--gemm-sw-splitk $K/gemm_sw_splitk.cubin $K/gemm_sw_splitk.map --fused-sw-splitk $K/fused_sw_splitk.cubin $K/fused_sw_splitk.map
     --gemm-tok144w-splitk${s//_/-} $K/gemm_tok144w_splitk$s.cubin $K/gemm_tok144w_splitk$s.map
     --fused-tok144w-splitk${s//_/-} $K/fused_tok144w_splitk$s.cubin $K/fused_tok144w_splitk$s.map
     --probe gemm-tok128w-splitk${s//_/-} $K/gemm_tok128w_splitk$s.cubin $K/gemm_tok128w_splitk$s.map
     --probe fused-tok128w-splitk${s//_/-} $K/fused_tok128w_splitk$s.cubin $K/fused_tok128w_splitk$s.map)
  timeout 110 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/t$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/next2.tgz -C $OUT r
done
