#!/usr/bin/env bash
# Session 30, held out for the rule of commit "qwen_select: above 32 MiB of X ..." (kWideG8Factor), fixed
# before this run: at 5 M above 3276 never measured where the rule now takes *-tok144w-splitk-g8, each kind's
# new pick (named) against the split-k panel kernel, its pick under session 29's rule (probe), sustained,
# 5 rounds; read with ../s29/ratios_pick.py.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
for M in 3730 4150 5150 6030 7320; do
  A=()
  for kind in gemm fused; do
    A+=(--$kind-tok144w-splitk-g8 $K/${kind}_tok144w_splitk_g8.cubin $K/${kind}_tok144w_splitk_g8.map
        --probe $kind-sw-splitk $K/${kind}_sw_splitk.cubin $K/${kind}_sw_splitk.map)
  done
  timeout 80 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/c$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c2.tgz -C $OUT r
done
