#!/usr/bin/env bash
# session 28 call 4: the generated sum loop's size. Probes (not committed code; built by hand from c18329e+ with one
# line added to src/generate.cpp's pl_partials_sum, before the peer loop): -u1 "#pragma unroll 1", -u2 "#pragma unroll 2".
# GEMM split-k link, its old28 build, -u1 and -u2, sustained 5 rounds: 288 / 424 (tok144, 16 / 11 pieces: shares run),
# 560 (tok144, 8: no shares), 800 (tok160, 6: no shares).
set -u
O=$OUT/r; mkdir -p $O
K=build/examples/qwen_mlp
B=build/bench/bench_qwen_mlp
for spec in "288 144" "424 144" "560 144" "800 160"; do
  set -- $spec; M=$1; k=gemm_tok$2_splitk; A=(--${k//_/-} $K/$k.cubin $K/$k.map)
  for v in old28 u1 u2; do A+=(--probe ${k//_/-}-$v $K/${k}_$v.cubin $K/${k}_$v.map); done
  timeout 60 $B --sustain-ms 300 --region-ms 50 "${A[@]}" --M $M --rounds 5 --json $O/s$M.json >> $O/run.log 2>&1
  echo "M=$M rc=$?" | tee -a $O/run.log
done
tar czf $OUT/c4.tgz -C $OUT r && rm -rf $OUT/r
