#!/usr/bin/env bash
# session 28 call 3: 1) every Qwen kernel checked at 288 / 560 / 720 (split-k with shares, 8 and 6 pieces)
# 2) the SASS of gemm_tok144_splitk, this build and old28: instruction counts (does the shares code cost the other paths?)
# 3) split-k links where they do not use shares (s < 10) / their old28 builds, sustained 5 rounds: 672 (tok176, s = 8),
#    720 (tok144, s = 6), 800 (tok160, s = 6), 960 (tok160, s = 5)
# 4) the new rule held out: split-k / stream-k at 280 / 312 / 344 / 408 (two token tiles)
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=150 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 288,560,720 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
for k in gemm_tok144_splitk gemm_tok144_splitk_old28; do
  cuobjdump -sass $K/$k.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed -E 's|^\s+/\*[0-9a-f]+\*/\s+||; s|^@!?U?P[0-9T] ||' | awk '{print $1}' | sort | uniq -c | sort -rn > $O/$k.hist
  echo "$k: $(cuobjdump -sass $K/$k.cubin | grep -cE '^\s+/\*[0-9a-f]{4}\*/') instructions" | tee -a $O/run.log
done
for spec in "672 tok176_splitk" "720 tok144_splitk" "800 tok160_splitk" "960 tok160_splitk"; do
  set -- $spec; M=$1; A=()
  for k in gemm_$2 fused_$2; do A+=(--${k//_/-} $K/$k.cubin $K/$k.map --probe ${k//_/-}-old28 $K/${k}_old28.cubin $K/${k}_old28.map); done
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
for spec in "280 144" "312 160" "344 176" "408 208"; do
  set -- $spec; M=$1; T=$2; A=()
  for k in gemm_tok${T}_sk gemm_tok${T}_splitk fused_tok${T}_sk fused_tok${T}_splitk; do A+=(--${k//_/-} $K/$k.cubin $K/$k.map); done
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
tar czf $OUT/c3.tgz -C $OUT r && rm -rf $OUT/r
