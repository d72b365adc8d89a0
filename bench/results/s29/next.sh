#!/usr/bin/env bash
# Ready for the next session (not run in session 29: the device time ran out). 1) every Qwen kernel and
# control checked per element at M = 24 / 136 / 576 / 2446 (REQUIRE_ALL: includes the
# 256-column token tile's links, its fused twin fused_tok144w_splitk and the narrow token tiles
# gemm/fused_tok{32,48,64}_sk, never run yet); 2) the fused twin /
# the fused kernel's pick and / the best pair, sustained, 5 rounds, at new M where the GEMM takes
# gemm-tok144w-splitk (544 / 848 / 1424 / 1696 / 1808 / 2446 were c6's): 560 / 1720 / 1860 / 2436, where
# the fused pick is fused-tok144-splitk, and 860, where it is fused-sw-splitk. (Only these kernels are
# loaded, so the bench's own rule selects none and prints no claims; read the JSON with
# ../s29/ratios_pick.py: the named variant is the pick, the probe the candidate.) About 450 s; then
# next2.sh (the narrow token tiles) in a second call.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=240 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 24,136,576,2446 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
for spec in "560 tok144_splitk" "860 sw_splitk" "1720 tok144_splitk" "1860 tok144_splitk" "2436 tok144_splitk"; do
  set -- $spec; M=$1
  A=(--fused-${2//_/-} $K/fused_$2.cubin $K/fused_$2.map
     --probe fused-tok144w-splitk $K/fused_tok144w_splitk.cubin $K/fused_tok144w_splitk.map
     --gemm-tok144w-splitk $K/gemm_tok144w_splitk.cubin $K/gemm_tok144w_splitk.map)
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/next.tgz -C $OUT r
done
