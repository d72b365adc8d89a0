#!/usr/bin/env bash
# One device call: the C++ Qwen bench (autotuned cuBLASLt, cublasGemmEx), the Python benches
# (PyTorch in the same process as the PipeLink kernels; bench_decode.py: the decode-size kernel on
# the runtime's persistent grid and on one block per SM), ncu profiles of the headline kernels, the
# C++ MoE bench, and a short bench_lvc run on the new harness. Everything goes to $W; after each
# step $W is packed into $OUT/results.tgz, so a timeout keeps what finished.
# Usage (on the GPU machine, from the repository root): bash STAGED/src/bench/gpu/run.sh STAGED
set -uo pipefail
S=$(cd "$1" && pwd)
W=$(mktemp -d)
OUT=${OUT:-$W/out}
mkdir -p "$OUT"
export PYTHONPATH=$S/py
export PATH=/usr/local/cuda/bin:$PATH
pack() { tar -C "$W" -czf "$OUT/results.tgz" --exclude=out . 2>/dev/null; }
step() {  # step NAME TIMEOUT CMD...  (SKIP="name ..." leaves steps out)
  local name=$1 t=$2; shift 2
  case " ${SKIP:-} " in *" $name "*) echo "=== $name: skipped"; return;; esac
  echo "=== $name ($(date -u +%H:%M:%S))"
  local t0=$SECONDS
  timeout "$t" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  echo "=== $name: rc $rc in $((SECONDS - t0)) s"
  tail -n 40 "$W/$name.log"
  pack
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv | tee "$W/gpu.txt"
K=$S/k/qwen_mlp
qargs=()
for k in fused fused_control fused_medium fused_medium_control fused_narrow fused_narrow_control fused_small fused_small_control \
         gemm gemm_control gemm_medium gemm_medium_control gemm_narrow gemm_narrow_control gemm_small gemm_small_control \
         fused_sw fused_sw_control gemm_sw gemm_sw_control fused_sw_splitk gemm_sw_splitk \
         fused_small16 fused_small16_control gemm_small16 gemm_small16_control; do
  qargs+=("--${k//_/-}" "$K/$k.cubin" "$K/$k.map")
done
MS=${MS:-16,128,1024,2048,4096,8192}
step qwen_cpp 120 "$S/bin/bench_qwen_mlp" "${qargs[@]}" --M "$MS" --rounds 20 --algos 32 --json "$W/qwen_mlp.json" --md "$W/qwen_mlp.md"
step qwen_torch 150 python3 "$S/src/bench/qwen_mlp/bench_torch.py" --kernels "$K" --M "$MS" --rounds 20 \
  --json "$W/qwen_mlp_torch.json" --md "$W/qwen_mlp_torch.md"
step qwen_streamk 120 python3 "$S/src/bench/qwen_mlp/bench_streamk.py" --kernels "$K" --M 16,128,1024,2048,4096 --rounds 15 \
  --json "$W/qwen_streamk.json" --md "$W/qwen_streamk.md"
step qwen_decode 60 python3 "$S/src/bench/qwen_mlp/bench_decode.py" --qwen "$K" --llama "" --grids 132 --M 16,64 --rounds 30 \
  --json "$W/qwen_decode.json" --md "$W/qwen_decode.md"
M=$S/k/moe
step moe_torch 90 python3 "$S/src/bench/moe/bench_torch.py" --kernels "$M" --T 512,4096,16384 --rounds 20 \
  --json "$W/moe_torch.json" --md "$W/moe_torch.md"
step ncu_qwen 90 bash "$S/src/bench/gpu/ncu.sh" qwen "$W" "$S/src/bench/qwen_mlp/bench_torch.py" --kernels "$K" --M 8192 --profile
NCU_COUNT=4 NCU_KERNELS='pipelink_kernel|moe_topk_sum' step ncu_moe 60 bash "$S/src/bench/gpu/ncu.sh" moe "$W" "$S/src/bench/moe/bench_torch.py" --kernels "$M" --T 16384 --profile
step moe_cpp 90 "$S/bin/bench_moe" --gu "$M/gate_up.cubin" "$M/gate_up.map" --down "$M/down.cubin" "$M/down.map" \
  --down-store "$M/down_store.cubin" "$M/down_store.map" --down-store-control "$M/down_store_control.cubin" "$M/down_store_control.map" \
  --gu-control "$M/gate_up_control.cubin" "$M/gate_up_control.map" --down-control "$M/down_control.cubin" "$M/down_control.map" \
  --routing "$M/routing.cubin" --T 512,4096,16384 --rounds 20 --json "$W/moe.json"
step lvc 45 "$S/bin/bench_lvc" --kernels "$S/k" --util "$S/bin/lvc_util.cubin" --routing "$M/routing.cubin" --families qwen,moe \
  --qwen-M 1024 --moe-T 4096 --rounds 5 --json "$W/lvc_smoke.json"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$W/gpu.txt"
pack
ls -la "$W" "$OUT"
