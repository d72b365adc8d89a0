#!/usr/bin/env bash
# session 28 call 5: the build the session ends with (peer loop unrolled by 2). 1) every Qwen kernel checked at 304 / 672
# 2) held out: each split-k pick / its old28 build, GEMM and fused, sustained 5 rounds, at M not in c4:
#    304 (tok160, 16 pieces, shares), 592 (tok208, 11, shares), 672 (tok176, 8), 720 (tok144, 6)
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=150 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 304,672 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
for spec in "304 tok160_splitk" "592 tok208_splitk" "672 tok176_splitk" "720 tok144_splitk"; do
  set -- $spec; M=$1; A=()
  for k in gemm_$2 fused_$2; do A+=(--${k//_/-} $K/$k.cubin $K/$k.map --probe ${k//_/-}-old28 $K/${k}_old28.cubin $K/${k}_old28.map); done
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
tar czf $OUT/c5.tgz -C $OUT r && rm -rf $OUT/r
