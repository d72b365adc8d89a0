#!/usr/bin/env bash
# Session 31, held out for the 168- / 200- / 216-token tiles (in place of 176 / 208 / 224 by the rule and
# factor of the 136- / 152-token tiles; fixed before this run, the links never run before): REQUIRE_ALL at
# 168 / 400 (their controls' first run), then at 7 M never measured each kind's new pick (named) against
# its old pick (probe), sustained, 5 rounds; read with python3 ../s29/ratios_pick.py r/c*.json.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=200 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 168,400 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
while read M gn go fn fo; do
  A=(--${gn//_/-} $K/$gn.cubin $K/$gn.map --probe ${go//_/-} $K/$go.cubin $K/$go.map)
  [ "$fn" != - ] && A+=(--${fn//_/-} $K/$fn.cubin $K/$fn.map --probe ${fo//_/-} $K/$fo.cubin $K/$fo.map)
  timeout 70 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/c$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c3.tgz -C $OUT r
done <<'LIST'
165 gemm_tok168_sk gemm_tok176_sk fused_tok168_sk fused_tok176_sk
190 gemm_tok200_sk gemm_tok208_sk fused_tok200_sk fused_tok208_sk
212 gemm_tok216_sk gemm_tok224_sk fused_tok216_sk fused_tok224_sk
330 gemm_tok168_splitk gemm_tok176_splitk fused_tok168_splitk fused_tok176_splitk
395 gemm_tok200_splitk gemm_tok208_splitk fused_tok200_splitk fused_tok208_splitk
590 gemm_tok200_splitk gemm_tok208_splitk - -
660 gemm_tok168_splitk gemm_tok176_splitk fused_tok168_splitk fused_tok176_splitk
LIST
