#!/usr/bin/env bash
# Session 31, held out for the rule of commit "qwen_select ... 136- / 152-token tiles" (kNarrowTokenFactor),
# fixed before this run: at 8 M never measured inside the ranges where the GEMM's pick changed, the new pick
# (named) against the old one (probe: session 30's rule), sustained, 5 rounds; read with
# python3 ../s29/ratios_pick.py r/c*.json (named = new / probe = old; each / the best cuBLAS).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
# every Qwen kernel and control checked per element (run.sh REQUIRE_ALL): the new links' controls first run here
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=200 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 136,296,905 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
while read M new old; do
  A=(--${new//_/-} $K/$new.cubin $K/$new.map --probe ${old//_/-} $K/$old.cubin $K/$old.map)
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/c$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c1.tgz -C $OUT r
done <<'LIST'
131 gemm_tok136_sk gemm_tok144_sk
134 gemm_tok136_sk gemm_tok144_sk
147 gemm_tok152_sk gemm_tok160_sk
262 gemm_tok136_splitk gemm_tok144_splitk
268 gemm_tok136_splitk gemm_tok144_splitk
296 gemm_tok152_splitk gemm_tok160_splitk
452 gemm_tok152_splitk gemm_tok160_splitk
905 gemm_tok152_splitk gemm_tok160_splitk
LIST
