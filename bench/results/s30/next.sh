#!/usr/bin/env bash
# Ready for the next session (one device call, ~450 s). 1) Every Qwen kernel and control checked per
# element (run.sh REQUIRE_ALL) at M = 24 / 1080 / 3730 / 5150: the g8 links' controls have never run on
# the GPU. 2) The product at 12 M never measured (picks of every kind: the 256-column tile, its g8 links, the
# panel kernel; the rule of session 30, picks from
# build/bench/qwen_select_cli over the sustained set of tests/python/test_qwen_select.py): each kind's pick
# against the best cuBLAS / the best pair, sustained, 5 rounds. Read with python3 ../s29/ratios.py r/s*.json
# (each / the best baseline; the bench's own rule may select none, as the split-k panel kernel is not loaded).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
env -u OUT REQUIRE_ALL=1 BENCH_TIMEOUT=200 RESULTS_DIR=$O/t bash bench/qwen_mlp/run.sh build --M 24,1080,3730,5150 --iters 2 > $O/check.log 2>&1
echo "check rc=$?" | tee $O/run.log; grep -cE "FAIL" $O/check.log | sed 's/^/FAIL lines: /' | tee -a $O/run.log; rm -f $O/t/qwen_mlp.json
python3 - > $O/picks.txt <<'PY'
import sys; sys.argv = [sys.argv[0]]; sys.path.insert(0, "tests/python")
import test_qwen_select as T
T.CLI = "build/bench/qwen_select_cli"
g = T.cpp(T.SUSTAINED)
for M in (1111, 1250, 1777, 1999, 2400, 2650, 2999, 3150, 3595, 4444, 5020, 7050):
    print(M, g[("gemm", M)], g[("fused", M)])
PY
cat $O/picks.txt >> $O/run.log
while read M gp fp; do
  A=(--${gp//_/-} $K/$gp.cubin $K/$gp.map --${fp//_/-} $K/$fp.cubin $K/$fp.map)
  timeout 70 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/next.tgz -C $OUT r
done < $O/picks.txt
