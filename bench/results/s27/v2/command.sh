#!/usr/bin/env bash
# session 27 call 6: split-k sums in shares, v2 (memory only, no spill): check, then each M its own sustained run
set -u
O=$OUT
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=60 RESULTS_DIR=$O/t4 bash bench/qwen_mlp/run.sh build --M 288,600,1000 --iters 2 > $O/run.log 2>&1
echo "check rc=$?" | tee -a $O/run.log; grep -E "FAIL|PASS" $O/run.log | tail -2; rm -f $O/t4/qwen_mlp.json
A=(); for k in gemm_tok208_splitk fused_tok208_splitk gemm_tok144_splitk gemm_sw_splitk fused_sw_splitk; do
  A+=(--${k//_/-} $K/$k.cubin $K/$k.map --probe ${k//_/-}-old $K/${k}_old.cubin $K/${k}_old.map); done
A+=(--gemm-tok144-sk $K/gemm_tok144_sk.cubin $K/gemm_tok144_sk.map)
for M in 600 288 1024; do
  timeout 100 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json --md $O/s$M.md >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
