#!/usr/bin/env bash
# Session 30, one device call. 1) Held out for the rule of commit c0fbe48 (qwen_select.h, kWideFactor / kWideMaxXBytes,
# and the fused twin by the GEMM's condition), fixed before this run: at 11 M never measured, each kind's
# new pick (named) against its pick under session 29's rule (probe), sustained, 5 rounds; read with
# ../s29/ratios_pick.py. At 1420 / 1690 only the fused pick changed (the GEMM's is loaded once).
# 2) Probe: the 256-column tile in bands of 8 token tiles (*_tok144w_splitk_g8) against the split-k panel
# kernel (named) at 3600 / 5000 / 7000 / 8192, where the rule keeps the tile out (X > 32 MiB).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
a() { echo "--$1-${2//_/-} $K/$1_$2.cubin $K/$1_$2.map"; }
p() { echo "--probe $1-${2//_/-} $K/$1_$2.cubin $K/$1_$2.map"; }
for spec in "1080 tok144w_splitk tok160_splitk tok144w_splitk tok160_splitk" "1420 tok144w_splitk - tok144w_splitk tok144_splitk" \
            "1690 tok144w_splitk - tok144w_splitk tok144_splitk" "1960 tok144w_splitk sw_splitk tok144w_splitk sw_splitk" \
            "2130 tok144w_splitk sw_splitk tok144w_splitk sw_splitk" "2210 tok144w_splitk tok160_splitk tok144w_splitk tok160_splitk" \
            "2380 tok144w_splitk sw_splitk tok144w_splitk sw_splitk" "2720 tok144w_splitk sw_splitk tok144w_splitk sw_splitk" \
            "2850 tok144w_splitk sw_splitk tok144w_splitk sw_splitk" "3100 tok144w_splitk sw_splitk tok144w_splitk sw_splitk" \
            "3250 tok144w_splitk sw_splitk tok144w_splitk sw_splitk"; do
  set -- $spec; M=$1
  A="$(a gemm $2) $(a fused $4) $(p fused $5)"; [ "$3" != - ] && A="$A $(p gemm $3)"
  timeout 70 $B --sustain-ms 300 --region-ms 50 $A --M $M --rounds 5 --json $O/c$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
tar czf $OUT/c1.tgz -C $OUT r
for M in 3600 5000 7000 8192; do
  A="$(a gemm sw_splitk) $(a fused sw_splitk) $(p gemm tok144w_splitk_g8) $(p fused tok144w_splitk_g8)"
  timeout 90 $B --sustain-ms 300 --region-ms 50 $A --M $M --rounds 5 --json $O/g$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/c1.tgz -C $OUT r
done
