#!/usr/bin/env bash
# Session 32, held out for the rule of commit 2071e9d (the 136- / 152-token tiles' 5-stage links at one or
# two token tiles), fixed before this run: at 8 M not probed, the new pick of each kind (named, 5 stages)
# against the old (probe: the same tile with 4 stages), sustained, 5 rounds; read with
# python3 ../s29/ratios_pick.py r/c*.json (named = new / probe = old; each / the best baseline).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
# every Qwen kernel and control checked per element (run.sh REQUIRE_ALL): the new links' controls first run here
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=200 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 136,300 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
tar czf $OUT/c1.tgz -C $OUT r
while read M T sched; do
  g=gemm_tok${T}_$sched; f=fused_tok${T}_$sched
  A=(--${g//_/-}5 $K/${g}5.cubin $K/${g}5.map --${f//_/-}5 $K/${f}5.cubin $K/${f}5.map
     --probe ${g//_/-} $K/$g.cubin $K/$g.map --probe ${f//_/-} $K/$f.cubin $K/$f.map)
  timeout 120 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/c$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c1.tgz -C $OUT r
done <<'LIST'
129 136 sk
133 136 sk
145 152 sk
150 152 sk
258 136 splitk
266 136 splitk
291 152 splitk
299 152 splitk
LIST
grep -c "PASS: every check passed" $O/run.log; grep "FAIL" $O/run.log | head
