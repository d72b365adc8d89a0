#!/usr/bin/env bash
# session 28 call 2: shares from 10 pieces (kReduceSharesPieces). 1) every Qwen kernel checked at 288 / 600 / 1000 (16 / 11 / 6 pieces)
# 2) where a token tile has two row tiles (800 tiles, 16 pieces under split-k): split-k (with shares) against the stream-k link the
#    selection takes today, GEMM and fused, sustained 5 rounds; 3) at 560 (8 pieces: no shares now) the split-k link / its old28 build
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=150 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 288,600,1000 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
for spec in "272 144" "288 144" "304 160" "320 160" "336 176" "352 176" "400 208" "416 208"; do
  set -- $spec; M=$1; T=$2; A=()
  for k in gemm_tok${T}_sk gemm_tok${T}_splitk fused_tok${T}_sk fused_tok${T}_splitk; do A+=(--${k//_/-} $K/$k.cubin $K/$k.map); done
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
A=(); for k in gemm_tok144_splitk fused_tok144_splitk; do A+=(--${k//_/-} $K/$k.cubin $K/$k.map --probe ${k//_/-}-old28 $K/${k}_old28.cubin $K/${k}_old28.map); done
timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M 560 --rounds 5 --json $O/s560.json >> $O/run.log 2>&1
echo "M=560 rc=$?" | tee -a $O/run.log
A=(); for k in fused_medium_swf gemm_medium_s4 fused_sw_splitk gemm_sw_splitk; do A+=(--${k//_/-} $K/$k.cubin $K/$k.map); done
timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M 1024 --rounds 5 --json $O/s1024.json --md $O/s1024.md >> $O/run.log 2>&1
echo "M=1024 rc=$?" | tee -a $O/run.log
tar czf $OUT/c2.tgz -C $OUT r && rm -rf $OUT/r
