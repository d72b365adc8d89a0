#!/usr/bin/env bash
# many_contracts.sh <pipelink> <N> <expect>: writes N small contracts, each at its binding-table
# capacity (8 [[smem]] regions with live phases, 4 ports forming pipes with its neighbours, 4
# named barriers, 8 mbarrier groups, 8 params), checks them in one link and requires that the
# linker answers within 10 seconds with the expected diagnostic:
#   refused   the link is refused up front (more instances than a link may have);
#   checked   the link runs every pass and reports its resource errors (too many threads, ...).
set -u
bin=$(realpath "$1"); n=$2; want=$3
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
for ((i = 0; i < n; i++)); do
  next=$(((i + 1) % n))
  {
    printf '[component]\nname = "c%d"\nentry = "c%d_main"\nobject = "c%d.ltoir"\n\n' "$i" "$i" "$i"
    printf '[provide]\nf%d = %d\n\n[warps]\ncount = 1\n\n' "$i" "$((i % 7 + 1))"
    for ((r = 0; r < 8; r++)); do
      printf '[[smem]]\nname = "r%d"\nbytes = "f%d * %d"\nlive = ["p%d", "p%d", "q%d"]\n\n' "$r" "$i" "$((r * 16 + 16))" "$r" "$((i % 5))" "$((i % 11))"
    done
    for ((p = 0; p < 2; p++)); do
      printf '[[port]]\nname = "pipe_%d_%d"\ndirection = "out"\nstages = 2\n\n  [[port.tensor]]\n  name = "t"\n  dtype = "bf16"\n  shape = [16, 16]\n\n' "$i" "$p"
      printf '[[port]]\nname = "pipe_%d_%d"\ndirection = "in"\nstages = 2\n\n  [[port.tensor]]\n  name = "t"\n  dtype = "bf16"\n  shape = [16, 16]\n\n' "$next" "$p"
    done
    for ((b = 0; b < 4; b++)); do printf '[[named_barrier]]\nname = "b%d"\nthreads = 32\n\n' "$b"; done
    for ((m = 0; m < 8; m++)); do printf '[[mbarrier]]\nname = "m%d"\ncount = 4\n\n' "$m"; done
    for ((p = 0; p < 8; p++)); do printf '[[param]]\nname = "w%d"\ntype = "u32"\n\n' "$p"; done
  } > "$dir/c$i.toml"
done
start=$(date +%s.%N)
( cd "$dir" && timeout 60 "$bin" check $(for ((i = 0; i < n; i++)); do printf 'c%d.toml ' "$i"; done) ) 2> "$dir/stderr"
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "pipelink check of $n contracts: exit $rc in ${secs}s"
head -c 2000 "$dir/stderr"; echo
[ "$rc" = 124 ] && { echo "FAIL: did not finish in 60 s"; exit 1; }
[ "$rc" = 1 ] || { echo "FAIL: expected exit status 1"; exit 1; }
if (( $(echo "$secs > 10" | bc) )); then echo "FAIL: took more than 10 s"; exit 1; fi
case $want in
  refused) grep -q "PipeLink links at most 256 instances" "$dir/stderr" || { echo "FAIL: not refused"; exit 1; } ;;
  checked) grep -q "\[threads-limit\]" "$dir/stderr" && grep -q "\[smem-limit\]" "$dir/stderr" || { echo "FAIL: resource errors missing"; exit 1; } ;;
esac
echo ok
