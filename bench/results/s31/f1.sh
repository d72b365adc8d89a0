#!/usr/bin/env bash
# Session 31, the product at 12 M in 65-1024 never measured (the rule as of commit a42e47d, picks from
# build/bench/qwen_select_cli over the sustained set): each kind's pick against the best cuBLAS / the best
# pair, sustained, 5 rounds. Read with python3 ../s29/ratios.py r/f*.json.
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
python3 - > $O/picks.txt <<'PY'
import sys; sys.argv = [sys.argv[0]]; sys.path.insert(0, "tests/python")
import test_qwen_select as T
T.CLI = "build/bench/qwen_select_cli"
g = T.cpp(T.SUSTAINED)
for M in (100, 140, 158, 172, 205, 238, 310, 345, 420, 500, 700, 990):
    print(M, g[("gemm", M)], g[("fused", M)])
PY
cat $O/picks.txt > $O/run.log
while read M gp fp; do
  A=(--${gp//_/-} $K/$gp.cubin $K/$gp.map --${fp//_/-} $K/$fp.cubin $K/$fp.map)
  timeout 45 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/f$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
  tar czf $OUT/f1.tgz -C $OUT r
done < $O/picks.txt
