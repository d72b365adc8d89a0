#!/usr/bin/env bash
# Session 31, held out for the fused twins of the 136- / 152-token tiles (fused_tok{136,152}_{sk,splitk}: the
# SwiGLU in 8-row out stages), which the rule of commit 0b8d02d takes by the GEMM's factor (fixed before
# this run; never run before): REQUIRE_ALL at 136 / 452 (their controls' first run), then at 8 M the fused
# kind's new pick (named) against the old (probe), sustained, 5 rounds; read with
# python3 ../s29/ratios_pick.py r/c*.json (named = new / probe = old; each / the best pair).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=200 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 136,452 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
while read M new old; do
  A=(--${new//_/-} $K/$new.cubin $K/$new.map --probe ${old//_/-} $K/$old.cubin $K/$old.map)
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/c$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c2.tgz -C $OUT r
done <<'LIST'
132 fused_tok136_sk fused_tok144_sk
136 fused_tok136_sk fused_tok144_sk
149 fused_tok152_sk fused_tok160_sk
265 fused_tok136_splitk fused_tok144_splitk
293 fused_tok152_splitk fused_tok160_splitk
302 fused_tok152_splitk fused_tok160_splitk
450 fused_tok152_splitk fused_n112_swf
910 fused_tok152_splitk fused_medium_swf
LIST
