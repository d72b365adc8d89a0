#!/usr/bin/env bash
# Regenerates every checked-in contract header (pipelink header; see docs/components.md, "The
# generated contract header"): <source>.contract.h beside the component's source, from its
# contract, or from all the contracts of a source that serves several (their common part).
#   bash scripts/regen_headers.sh [pipelink]            rewrite the checked-in headers that changed
#   bash scripts/regen_headers.sh --check [pipelink]    regenerate into a temporary directory and
#                                                       diff (the ctest headers_up_to_date)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
PL=${1:-build/pipelink}
E=examples
# header | the contracts it is generated from (paths from the repository root)
HEADERS=(
  "$E/gemm/loader/tma_loader.contract.h|$E/gemm/loader/contract.toml"
  "$E/gemm/mma/mma_consumer.contract.h|$E/gemm/mma/contract.toml"
  "$E/gemm/writer/tile_writer.contract.h|$E/gemm/writer/contract.toml"
  "$E/guide/scale_epilogue.contract.h|$E/guide/contract.toml"
  "$E/qwen_mlp/loader/gu_loader.contract.h|$E/qwen_mlp/loader/contract.toml $E/qwen_mlp/loader/contract_narrow.toml $E/qwen_mlp/loader/contract_small.toml $E/qwen_mlp/loader/contract_small64.toml $E/qwen_mlp/loader/contract_small64_pdl.toml $E/qwen_mlp/loader/contract_small64_pdl_s3.toml $E/qwen_mlp/loader/contract_small16.toml $E/qwen_mlp/loader/contract_medium_s4.toml $E/qwen_mlp/loader/contract_tok.toml"
  "$E/qwen_mlp/loader/gu_loader_packed.contract.h|$E/qwen_mlp/loader/contract_packed16.toml $E/qwen_mlp/loader/contract_packed_medium.toml $E/qwen_mlp/loader/contract_packed_medium_s3.toml"
  "$E/qwen_mlp/mma/wgmma_gu.contract.h|$E/qwen_mlp/mma/contract.toml $E/qwen_mlp/mma/contract_medium.toml $E/qwen_mlp/mma/contract_medium_swf.toml $E/qwen_mlp/mma/contract_n120.toml $E/qwen_mlp/mma/contract_n120_swf.toml $E/qwen_mlp/mma/contract_n112.toml $E/qwen_mlp/mma/contract_n112_swf.toml $E/qwen_mlp/mma/contract_narrow.toml $E/qwen_mlp/mma/contract_small.toml $E/qwen_mlp/mma/contract_small64.toml $E/qwen_mlp/mma/contract_small64_r216.toml $E/qwen_mlp/mma/contract_small16.toml $E/moe/gemm/mma_gu.toml $E/moe/gemm/mma_down.toml $E/moe/gemm/mma_gu64.toml $E/moe/gemm/mma_down64.toml"
  "$E/qwen_mlp/mma/wgmma_gu_swap.contract.h|$E/qwen_mlp/mma/contract_small16_swap.toml"
  "$E/qwen_mlp/cluster/gu_loader_mc.contract.h|$E/qwen_mlp/cluster/loader.toml"
  "$E/qwen_mlp/store/tma_store.contract.h|$E/qwen_mlp/store/contract.toml"
  "$E/qwen_mlp/store/tma_store_sw.contract.h|$E/qwen_mlp/store/contract_sw.toml"
  "$E/qwen_mlp/mma/wgmma_gu_pp.contract.h|$E/qwen_mlp/mma/contract_pp.toml"
  "$E/qwen_mlp/store/tma_store_sw2.contract.h|$E/qwen_mlp/store/contract_pp.toml"
  "$E/qwen_mlp/mma/wgmma_tok.contract.h|$E/qwen_mlp/mma/contract_tok160.toml $E/qwen_mlp/mma/contract_tok144_sk.toml $E/qwen_mlp/mma/contract_tok160_sk.toml $E/qwen_mlp/mma/contract_tok176_sk.toml $E/qwen_mlp/mma/contract_tok208_sk.toml $E/qwen_mlp/mma/contract_tok224_sk.toml $E/qwen_mlp/mma/contract_tok136_sk.toml $E/qwen_mlp/mma/contract_tok152_sk.toml $E/qwen_mlp/mma/contract_tok168_sk.toml $E/qwen_mlp/mma/contract_tok200_sk.toml $E/qwen_mlp/mma/contract_tok216_sk.toml"
  "$E/qwen_mlp/mma/wgmma_tok_w.contract.h|$E/qwen_mlp/mma/contract_tok144w_sk.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue_swr16.contract.h|$E/qwen_mlp/swiglu/contract_tokw.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue_sw2.contract.h|$E/qwen_mlp/swiglu/contract_pp.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue_sw2r16.contract.h|$E/qwen_mlp/swiglu/contract_tok.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue_sw2r8.contract.h|$E/qwen_mlp/swiglu/contract_tok_r8.toml"
  "$E/qwen_mlp/mma/wgmma_gu_sw.contract.h|$E/qwen_mlp/mma/contract_sw.toml $E/qwen_mlp/mma/contract_sw_pair.toml $E/moe/gemm/mma_down_sw.toml $E/moe/gemm/mma_gu_sw.toml $E/moe/gemm/mma_gu64_sw.toml $E/moe/gemm/mma_down64_sw.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue_sw.contract.h|$E/qwen_mlp/swiglu/contract_sw.toml"
  "$E/moe/activation/moe_swiglu_sw.contract.h|$E/moe/activation/contract_sw.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue.contract.h|$E/qwen_mlp/swiglu/contract.toml"
  "$E/qwen_mlp/swiglu/swiglu_epilogue_r16.contract.h|$E/qwen_mlp/swiglu/contract_r16.toml"
  "$E/moe/activation/moe_swiglu.contract.h|$E/moe/activation/contract.toml"
  "$E/moe/combine/moe_combine.contract.h|$E/moe/combine/contract.toml"
  "$E/moe/dispatch/moe_a_loader.contract.h|$E/moe/dispatch/a_loader.toml $E/moe/dispatch/a_loader64.toml"
  "$E/moe/dispatch/moe_gather.contract.h|$E/moe/dispatch/gather.toml $E/moe/dispatch/gather64.toml"
  "$E/moe/gemm/moe_w_loader.contract.h|$E/moe/gemm/w_loader.toml"
  "$E/moe/gemm/moe_w_loader_packed.contract.h|$E/moe/gemm/w_loader_dev_packed.toml $E/moe/gemm/w_loader64_dev_packed.toml"
  "$E/llama_decode/components/kv_loader/kv_loader.contract.h|$E/llama_decode/components/kv_loader/contract.toml"
  "$E/llama_decode/components/attn_core_a/attn_core_a.contract.h|$E/llama_decode/components/attn_core_a/contract.toml"
  "$E/llama_decode/components/attn_core_split/attn_core_split.contract.h|$E/llama_decode/components/attn_core_split/contract.toml"
  "$E/llama_decode/components/attn_writer/attn_writer.contract.h|$E/llama_decode/components/attn_writer/contract.toml"
  "$E/llama_decode/components/splitk/sk_loader.contract.h|$E/llama_decode/components/splitk/sk_loader.toml $E/llama_decode/components/splitk/sk_loader_k1024.toml $E/llama_decode/components/splitk/sk_loader_s6.toml $E/llama_decode/components/splitk/sk_loader_k1024_s6.toml $E/llama_decode/components/splitk/sk_loader_k256.toml"
  "$E/llama_decode/components/splitk/sk_mma.contract.h|$E/llama_decode/components/splitk/sk_mma.toml"
  "$E/llama_decode/components/splitk/sk_red.contract.h|$E/llama_decode/components/splitk/sk_red.toml"
  "$E/llama_decode/components/splitk/sk_rope.contract.h|$E/llama_decode/components/splitk/sk_rope.toml"
  "$E/llama_decode/components/mlp/mlp_loader.contract.h|$E/llama_decode/components/mlp/mlp_loader.toml $E/llama_decode/components/mlp/mlp_loader_g6d5.toml $E/llama_decode/components/mlp/mlp_loader_g8d2.toml"
  "$E/llama_decode/components/mlp/mlp_mma.contract.h|$E/llama_decode/components/mlp/mlp_mma.toml"
  "$E/llama_decode/components/mlp/mlp_uloader.contract.h|$E/llama_decode/components/mlp/mlp_uloader.toml"
  "$E/llama_decode/components/mlp/mlp_umma.contract.h|$E/llama_decode/components/mlp/mlp_umma.toml"
  "$E/llama_decode/components/attn_o_writer/attn_o_writer.contract.h|$E/llama_decode/components/attn_o_writer/contract.toml"
  "tests/gpu/transfer/tile_source.contract.h|tests/gpu/transfer/source.toml"
  "tests/gpu/transfer/tile_sink.contract.h|tests/gpu/transfer/sink.toml"
  "tests/gpu/transfer/tma_source.contract.h|tests/gpu/transfer/tma_source_64.toml tests/gpu/transfer/tma_source_32.toml"
  "tests/gpu/checked/idle_source.contract.h|tests/gpu/checked/idle_source.toml"
)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
unchanged=0
for h in "${HEADERS[@]}"; do
  out=${h%%|*}; contracts=${h#*|}
  # shellcheck disable=SC2086
  if [ $check = 1 ]; then
    mkdir -p "$tmp/$(dirname "$out")"
    "$PL" header $contracts -o "$tmp/$out" || { echo "FAIL: pipelink header $contracts"; fail=1; continue; }
    if ! diff -u "$out" "$tmp/$out"; then
      echo "FAIL: $out is not what its contracts generate (above: - checked in, + generated). Regenerate it:"
      echo "  bash scripts/regen_headers.sh    # or: $PL header $contracts -o $out"
      fail=1
    fi
  else
    # generated beside, and copied over only where it differs: an unchanged header keeps its
    # timestamp, so make rebuilds only the components whose header changed
    mkdir -p "$tmp/$(dirname "$out")"
    "$PL" header $contracts -o "$tmp/$out"
    if cmp -s "$tmp/$out" "$out"; then
      unchanged=$((unchanged + 1))
    else
      cp "$tmp/$out" "$out"
      echo "wrote $out"
    fi
  fi
done
[ $check = 1 ] && [ $fail = 0 ] && echo "ok: ${#HEADERS[@]} contract headers up to date"
[ $check = 0 ] && echo "$unchanged of ${#HEADERS[@]} headers already up to date (left untouched)"
exit $fail
