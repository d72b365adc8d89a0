#!/usr/bin/env bash
# Session 31 probe: where the fused kernel's pick is a 128-row tile but the GEMM's a token tile (457-480,
# 577-624, 913-960: the fused token factor is 1.09, the GEMM's 1.06), the fused twin of the GEMM's pick
# (probe) beside the fused pick (named), sustained, 5 rounds. Read with python3 ../s29/ratios_pick.py r/p*.json.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
while read M pick probe; do
  A=(--${pick//_/-} $K/$pick.cubin $K/$pick.map --probe ${probe//_/-} $K/$probe.cubin $K/$probe.map)
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/p$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/p2.tgz -C $OUT r
done <<'LIST'
470 fused_n112_swf fused_tok160_splitk
600 fused_n112_swf fused_tok208_splitk
620 fused_n112_swf fused_tok208_splitk
930 fused_medium_swf fused_tok160_splitk
955 fused_medium_swf fused_tok160_splitk
LIST
