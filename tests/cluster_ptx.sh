#!/usr/bin/env bash
# The 2-block cluster GEMM's linked PTX (--save-temps) holds the cluster setup the generated entry
# must emit, and the one-block GEMM's holds none of it: the cluster code folds away without one.
set -u
K=$1/examples/qwen_mlp
fail=0
need() { grep -q -- "$2" "$1" || { echo "FAIL: $1 lacks '$2'"; fail=1; }; }
none() { ! grep -q -- "$2" "$1" || { echo "FAIL: $1 has '$2'"; fail=1; }; }
P=$K/gemm_cluster.cubin.ptx
need "$P" "fence.mbarrier_init.release.cluster"
need "$P" "barrier.cluster.arrive.release.aligned"
need "$P" "barrier.cluster.wait.acquire.aligned"
need "$P" "%cluster_nctarank"
need "$P" "multicast::cluster"
need "$P" "mapa.shared::cluster"
need "$P" "mbarrier.arrive.shared::cluster.b64"
none "$P" "mbarrier.arrive.release.cluster.shared::cluster"   # a cluster-scope release halves the speed (bench/results/cluster.md)
need "$K/gemm_cluster.map" "^cluster 2 1 1"
need "$K/gemm_cluster.cubin.generated.cu" 'cluster 2 1 1\\n'      # in the launch manifest
need "$K/gemm_cluster.map" "empty@[0-9]* arrivals 16"
for p in "$K/gemm.cubin.ptx" "$K/gemm_grouped.cubin.ptx"; do
  none "$p" "barrier.cluster"; none "$p" "mapa"; none "$p" "multicast::cluster"
done
[ $fail = 0 ] && echo "ok: cluster setup in gemm_cluster, none in the one-block links"
exit $fail
