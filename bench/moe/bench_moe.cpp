// bench_moe — the Qwen3-30B-A3B expert layer (hidden 2048, expert intermediate 768, 128 experts,
// top-8 renormalized, bf16) from routing to combined output, with PipeLink-linked expert kernels:
//
//   route    logits = X · Wr^T (cuBLASLt, fp32 out); moe_topk, moe_offsets (routing.cubin); the
//            host reads the padded row total (one 4-byte copy); moe_scatter
//   gate/up  linked kernel: moe_gather (dispatch) + moe_w_loader & wgmma_gu x2 (gemm) +
//            moe_swiglu (activation: SwiGLU and routing-weight scale) + tma_store -> Hm [rows, 768]
//   down     linked kernel: moe_a_loader (dispatch) + moe_w_loader & wgmma_gu x2 (gemm) +
//            moe_combine (combine: scatter-add into Y[T, 2048] fp32)
//   down_store (optional, the layer's down when given) the same without moe_combine: io-team's
//            tma_store writes the rows to Hd [rows, 2048] bf16 in the expert-sorted order, then
//            routing.cubin's moe_topk_sum adds each token's 8 rows into Y (fp32)
//
//   bench_moe --gu K.cubin K.map --down K.cubin K.map [--down-store K.cubin K.map]
//             [--gu-control ... --down-control ... --down-store-control ...]
//             --routing routing.cubin [--util bench_util.cubin] [--T 512,4096,16384] [--rounds 20]
//             [--json F] [--check-only]
//
// Data: X ~ N(0,1), Wr ~ N(0, 0.05^2), Wgu and Wd ~ N(0, 0.03^2), bf16 (bench_util's generator).
// Checks, per T, on fresh random inputs: Hm is poisoned with NaN before the gate/up kernel and every
// row must be written; Y rows of 64 sampled tokens are compared per element with a CPU double
// reference that recomputes the whole layer from the same inputs (experts chosen from the device
// logits): |y - ref| <= rms(ref)/16 + 2^-6 |ref|. Timing (bench/common): gate/up, down and their
// controls in the spin + round-robin timer; the whole layer (its routing reads a count back to
// the host, so it cannot sit behind a spin) timed run by run. The PyTorch pipeline is timed in the
// same process as these kernels by bench/moe/bench_torch.py.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/bench.h"
#include "../common/gemm_baselines.h"

namespace {

using namespace plbench;

constexpr unsigned kHidden = 2048, kInter = 768, kExperts = 128, kTopK = 8, kTileM = 128, kAlign = 128;
constexpr unsigned kSampleTokens = 64;

struct Kernel {
  std::string label, cubin, map;
  pipelink::Module mod;
};

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<Kernel> gu, down, gu_control, down_control, down_store, down_store_control;
  std::string routing_cubin, util_cubin = exe_dir(argv[0]) + "/bench_util.cubin", json;
  std::vector<unsigned> Ts{512, 4096, 16384};
  TimerOptions topt;
  topt.rounds = 20;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) die(a + " needs a value");
      return std::string(argv[++i]);
    };
    auto kernel = [&](std::unique_ptr<Kernel>& k) {
      k = std::make_unique<Kernel>();
      k->label = a.substr(2);
      k->cubin = next();
      k->map = next();
    };
    if (a == "--gu") kernel(gu);
    else if (a == "--down") kernel(down);
    else if (a == "--gu-control") kernel(gu_control);
    else if (a == "--down-control") kernel(down_control);
    else if (a == "--down-store") kernel(down_store);
    else if (a == "--down-store-control") kernel(down_store_control);
    else if (a == "--routing") routing_cubin = next();
    else if (a == "--util") util_cubin = next();
    else if (a == "--T") Ts = parse_list(next(), "--T");
    else if (a == "--rounds" || a == "--iters") topt.rounds = parse_list(next(), "--rounds")[0];
    else if (a == "--json") json = next();
    else if (a == "--check-only") check_only = true;
    else die("unknown argument " + a);
  }
  if (!gu || !down || routing_cubin.empty())
    die("usage: bench_moe --gu K M --down K M [--gu-control K M --down-control K M] --routing R [--util U] [--T ...] [--rounds N] "
        "[--json F] [--check-only]");
  const bool controls = gu_control && down_control;

  Device dev = open_device();
  const CUstream stream = dev.stream;
  const int sms = dev.sms;
  Util util(util_cubin, unsigned(sms), stream);

  const std::vector<Kernel*> all = {gu.get(), down.get(), gu_control.get(), down_control.get(), down_store.get(), down_store_control.get()};
  for (Kernel* k : all)
    if (k) must(k->mod.load(k->cubin, k->map), k->label);
  auto is_store = [&](const Kernel* k) { return k == down_store.get() || k == down_store_control.get(); };
  // What the host needs from the gate/up link: the tile width (weight box, column tiles), the
  // out-stage height (the store's box) and the expert padding (routing).
  long long gu_tile_n = 128, out_rows = 64, align_ll = kAlign;
  gu->mod.fact("tile_n", gu_tile_n);
  gu->mod.fact("out_rows", out_rows);
  gu->mod.fact("expert_align", align_ll);
  const unsigned align_rows = static_cast<unsigned>(align_ll);
  std::printf("gate/up link: tile_n %lld, out_rows %lld, expert_align %u\n", gu_tile_n, out_rows, align_rows);
  CUmodule routing;
  CU(cuModuleLoad(&routing, routing_cubin.c_str()));
  CUfunction f_topk, f_offsets, f_scatter, f_sum = nullptr;
  CU(cuModuleGetFunction(&f_topk, routing, "moe_topk"));
  CU(cuModuleGetFunction(&f_offsets, routing, "moe_offsets"));
  CU(cuModuleGetFunction(&f_scatter, routing, "moe_scatter"));
  if (down_store) CU(cuModuleGetFunction(&f_sum, routing, "moe_topk_sum"));

  const unsigned long long seed = static_cast<unsigned long long>(std::chrono::system_clock::now().time_since_epoch().count());
  const std::string date = utc_now();
  std::printf("device: %s (%d SMs), %s; Qwen3-30B-A3B experts: hidden %u, intermediate %u, %u experts, top-%u; seed %llu\n",
              dev.name.c_str(), sms, date.c_str(), kHidden, kInter, kExperts, kTopK, seed);

  // Weights once: router, gate/up (per expert: 768 gate rows then 768 up rows), down.
  DeviceBuffer Wr(size_t(kExperts) * kHidden * 2), Wgu(size_t(kExperts) * 2 * kInter * kHidden * 2),
      Wd(size_t(kExperts) * kHidden * kInter * 2);
  util.fill_bf16(Wr.p, size_t(kExperts) * kHidden, seed + 1, 0.05f);
  util.fill_bf16(Wgu.p, size_t(kExperts) * 2 * kInter * kHidden, seed + 2, 0.03f);
  util.fill_bf16(Wd.p, size_t(kExperts) * kHidden * kInter, seed + 3, 0.03f);
  std::vector<uint16_t> hWgu(size_t(kExperts) * 2 * kInter * kHidden), hWd(size_t(kExperts) * kHidden * kInter);
  CU(cuStreamSynchronize(stream));
  CU(cuMemcpyDtoH(hWgu.data(), Wgu.p, hWgu.size() * 2));
  CU(cuMemcpyDtoH(hWd.data(), Wd.p, hWd.size() * 2));
  LtGemm lt;

  Json js;
  js.obj();
  js.key("bench").str("qwen3_30b_a3b_moe_experts");
  js.key("device").str(dev.name);
  js.key("date").str(date);
  js.key("seed").integer(static_cast<long long>(seed));
  js.key("data").str("X ~ N(0,1), Wr ~ N(0,0.05^2), Wgu, Wd ~ N(0,0.03^2), bf16");
  js.key("timer").str("bench/common: gate/up, down (+ controls) spin + round robin; layer run by run (host read in routing)");
  js.key("rounds").integer(topt.rounds);
  js.key("results").arr();
  bool all_ok = true;
  for (const unsigned T : Ts) {
    const unsigned max_rows = T * kTopK + kExperts * (align_rows - 1);
    DeviceBuffer X(size_t(T) * kHidden * 2), logits(size_t(T) * kExperts * 4), counts(kExperts * 4), topk_e(size_t(T) * kTopK * 4),
        topk_w(size_t(T) * kTopK * 4), topk_pos(size_t(T) * kTopK * 4), offsets(kExperts * 4), tile_expert((max_rows / kTileM + 1) * 4),
        total(4), row_token(size_t(max_rows) * 4), row_weight(size_t(max_rows) * 4), Hm(size_t(max_rows) * kInter * 2),
        Y(size_t(T) * kHidden * 4), Hd(down_store ? size_t(max_rows) * kHidden * 2 : 2);
    util.fill_bf16(X.p, size_t(T) * kHidden, seed + 100 + T, 1.0f);
    const auto router = lt.plan(T, kExperts, kHidden, CUDA_R_32F, 1);  // logits[T, E] = X · Wr^T

    unsigned rows_total = 0;
    auto route = [&] {
      lt.run(*router, 0, X.p, Wr.p, logits.p, stream);
      CU(cuMemsetD32Async(counts.p, 0, kExperts, stream));
      unsigned t = T, e = kExperts, align = align_rows, tm = kTileM;
      void* a1[] = {&logits.p, &t, &e, &counts.p, &topk_e.p, &topk_w.p, &topk_pos.p};
      CU(cuLaunchKernel(f_topk, (T * 32 + 255) / 256, 1, 1, 256, 1, 1, 0, stream, a1, nullptr));
      void* a2[] = {&counts.p, &e, &align, &tm, &offsets.p, &tile_expert.p, &total.p};
      CU(cuLaunchKernel(f_offsets, 1, 1, 1, 128, 1, 1, 0, stream, a2, nullptr));
      CU(cuMemsetD32Async(row_token.p, 0xFFFFFFFFu, max_rows, stream));
      CU(cuMemsetD32Async(row_weight.p, 0, max_rows, stream));
      void* a3[] = {&t, &topk_e.p, &topk_w.p, &topk_pos.p, &offsets.p, &row_token.p, &row_weight.p};
      CU(cuLaunchKernel(f_scatter, (T * kTopK + 255) / 256, 1, 1, 256, 1, 1, 0, stream, a3, nullptr));
      CU(cuMemcpyDtoHAsync(&rows_total, total.p, 4, stream));
      CU(cuStreamSynchronize(stream));
    };
    auto setup = [&](Kernel& k, bool is_gu) {
      const unsigned M = rows_total;
      auto s = [&](pipelink::Status st) { must(st, k.label); };
      if (is_gu) {
        const unsigned tn = static_cast<unsigned>(gu_tile_n);
        s(k.mod.set_ptr("x", X.p));
        s(k.mod.set_ptr("row_token", row_token.p));
        s(k.mod.set_ptr("row_weight", row_weight.p));
        s(k.mod.set_u32("K", kHidden));
        // the maps' boxes and swizzles are the link's (the contracts name each map's tensor)
        s(k.mod.set_tensor("w_map", Wgu.p, size_t(kExperts) * 2 * kInter, kHidden));
        s(k.mod.set_tensor("out_map", Hm.p, M, kInter));
        s(k.mod.set_u32("n_step", tn));
        s(k.mod.set_u32("b_stride", kInter));
        s(k.mod.set_u32("expert_rows", 2 * kInter));
        s(k.mod.set_u32("N", kInter));
      } else {
        if (is_store(&k)) {
          s(k.mod.set_tensor("out_map", Hd.p, M, kHidden));
        } else {
          s(k.mod.set_ptr("row_token", row_token.p));
          s(k.mod.set_ptr("y", Y.p));
          s(k.mod.set_u32("hidden", kHidden));
        }
        s(k.mod.set_tensor("a_map", Hm.p, M, kInter));
        s(k.mod.set_u32("K", kInter));
        s(k.mod.set_tensor("w_map", Wd.p, size_t(kExperts) * kHidden, kInter));
        s(k.mod.set_u32("n_step", 256));
        s(k.mod.set_u32("b_stride", 128));
        s(k.mod.set_u32("expert_rows", kHidden));
        s(k.mod.set_u32("N", kHidden / 2));
      }
      s(k.mod.set_ptr("tile_expert", tile_expert.p));
      s(k.mod.set_u32("M", M));
    };
    auto grid_of = [&](unsigned n_tiles) { return std::min<unsigned>(static_cast<unsigned>(sms), (rows_total / kTileM) * n_tiles); };
    const unsigned gu_n_tiles = static_cast<unsigned>((kInter + gu_tile_n - 1) / gu_tile_n);
    auto run_gu = [&](Kernel& k, CUstream s) { must(k.mod.launch(grid_of(gu_n_tiles), s), k.label); };
    auto run_sum = [&](CUstream s) {
      unsigned t = T, h = kHidden;
      void* a[] = {&t, &h, &topk_e.p, &topk_pos.p, &offsets.p, &Hd.p, &Y.p};
      CU(cuLaunchKernel(f_sum, T, 1, 1, kHidden / 8, 1, 1, 0, s, a, nullptr));
    };
    auto run_down = [&](Kernel& k, CUstream s) {
      if (is_store(&k)) {  // the rows to Hd, then each token's 8 rows added
        must(k.mod.launch(grid_of(kHidden / 256), s), k.label);
        run_sum(s);
        return;
      }
      CU(cuMemsetD32Async(Y.p, 0, size_t(T) * kHidden, s));  // the combine scatter-adds
      must(k.mod.launch(grid_of(kHidden / 256), s), k.label);
    };
    Kernel& layer_down = down_store ? *down_store : *down;

    // ---- correctness ----
    route();
    for (Kernel* k : all)
      if (k) setup(*k, k == gu.get() || k == gu_control.get());
    std::vector<float> hlog(size_t(T) * kExperts);
    std::vector<uint16_t> hX(size_t(T) * kHidden);
    CU(cuMemcpyDtoH(hlog.data(), logits.p, hlog.size() * 4));
    CU(cuMemcpyDtoH(hX.data(), X.p, hX.size() * 2));
    std::mt19937 rng(static_cast<unsigned>(seed + T));
    std::vector<unsigned> sample;
    for (unsigned i = 0; i < kSampleTokens; ++i) sample.push_back(rng() % T);
    // CPU reference for the sampled tokens, in double, from the device's logits for the routing.
    std::vector<double> ref(sample.size() * kHidden, 0.0);
    for (size_t si = 0; si < sample.size(); ++si) {
      const unsigned t = sample[si];
      std::vector<int> idx(kExperts);
      for (unsigned e = 0; e < kExperts; ++e) idx[e] = int(e);
      const float* lg = &hlog[size_t(t) * kExperts];
      std::partial_sort(idx.begin(), idx.begin() + kTopK, idx.end(), [&](int a, int b) { return lg[a] > lg[b] || (lg[a] == lg[b] && a < b); });
      double z = 0;
      for (unsigned k = 0; k < kTopK; ++k) z += std::exp(double(lg[idx[k]]) - lg[idx[0]]);
      std::vector<double> x(kHidden), h(kInter);
      for (unsigned c = 0; c < kHidden; ++c) x[c] = bf16_to_f(hX[size_t(t) * kHidden + c]);
      for (unsigned k = 0; k < kTopK; ++k) {
        const int e = idx[k];
        const double w = std::exp(double(lg[e]) - lg[idx[0]]) / z;
        for (unsigned j = 0; j < kInter; ++j) {
          const uint16_t* g = &hWgu[(size_t(e) * 2 * kInter + j) * kHidden];
          const uint16_t* u = &hWgu[(size_t(e) * 2 * kInter + kInter + j) * kHidden];
          double sg = 0, su = 0;
          for (unsigned c = 0; c < kHidden; ++c) { sg += x[c] * bf16_to_f(g[c]); su += x[c] * bf16_to_f(u[c]); }
          h[j] = sg / (1 + std::exp(-sg)) * su * w;
        }
        for (unsigned o = 0; o < kHidden; ++o) {
          const uint16_t* d = &hWd[(size_t(e) * kHidden + o) * kInter];
          double s = 0;
          for (unsigned j = 0; j < kInter; ++j) s += h[j] * bf16_to_f(d[j]);
          ref[si * kHidden + o] += s;
        }
      }
    }
    double rms = 0;
    for (double v : ref) rms += v * v;
    rms = std::sqrt(rms / double(ref.size()));
    // bf16 intermediates (Hm) and fp32 atomics: errors scale with the output's typical size.
    const double atol = rms / 16, rtol = 1.0 / 64;
    struct Check {
      TolCheck y;
      size_t hm_unwritten = 0;
      bool ok() const { return hm_unwritten == 0 && y.ok(); }
    };
    auto check = [&](Kernel& g, Kernel& d) {
      Check c;
      poison(Hm.p, size_t(max_rows) * kInter * 2, stream);  // every routed row must be written
      if (is_store(&d)) poison(Hd.p, size_t(max_rows) * kHidden * 2, stream);  // and every down row the sum reads
      run_gu(g, stream);
      run_down(d, stream);
      const CUresult sync = cuStreamSynchronize(stream);
      for (Kernel* k : {&g, &d})  // a checked kernel's record of a pipe wait that never completed
        if (std::string rep = k->mod.checked_report(); !rep.empty()) std::printf("%s: %s\n", k->label.c_str(), rep.c_str());
      CU(sync);
      std::vector<uint16_t> hm(size_t(rows_total) * kInter);
      CU(cuMemcpyDtoH(hm.data(), Hm.p, hm.size() * 2));
      for (uint16_t v : hm) c.hm_unwritten += (v & 0x7F80) == 0x7F80 && (v & 0x7F);
      std::vector<double> out(sample.size() * kHidden);
      std::vector<float> y(kHidden);
      for (size_t si = 0; si < sample.size(); ++si) {
        CU(cuMemcpyDtoH(y.data(), Y.p + size_t(sample[si]) * kHidden * 4, kHidden * 4));
        for (unsigned o = 0; o < kHidden; ++o) out[si * kHidden + o] = y[o];
      }
      c.y = tol_check_host(out, ref, atol, rtol);
      return c;
    };
    const Check linked = check(*gu, *down);
    Check control, store, store_control;
    if (controls) control = check(*gu_control, *down_control);
    if (down_store) store = check(*gu, *down_store);
    if (down_store_control) store_control = check(*gu, *down_store_control);
    std::printf("\n== T = %u tokens: %u routed rows, padded to %u (%u tiles of %u)\n", T, T * kTopK, rows_total, rows_total / kTileM, kTileM);
    std::printf("  linked : Hm unwritten %zu; Y vs CPU double (%u tokens): %s\n", linked.hm_unwritten, kSampleTokens, linked.y.summary().c_str());
    if (controls)
      std::printf("  control: Hm unwritten %zu; Y vs CPU double (%u tokens): %s\n", control.hm_unwritten, kSampleTokens,
                  control.y.summary().c_str());
    if (down_store)
      std::printf("  down_store + topk_sum: Y vs CPU double (%u tokens): %s\n", kSampleTokens, store.y.summary().c_str());
    if (down_store_control)
      std::printf("  down_store_control + topk_sum: Y vs CPU double (%u tokens): %s\n", kSampleTokens, store_control.y.summary().c_str());
    all_ok &= linked.ok() && (!controls || control.ok()) && (!down_store || store.ok()) && (!down_store_control || store_control.ok());

    js.obj();
    js.key("T").integer(T);
    js.key("rows").integer(rows_total);
    // Flat copies of the linked check (read by bench/modified_facts/run_gpu.sh).
    js.key("ok").boolean(linked.ok());
    js.key("unwritten").integer(static_cast<long long>(linked.hm_unwritten + linked.y.nans));
    js.key("rel_err").num(linked.y.rel_l2);
    js.key("max_abs_err").num(linked.y.max_abs);
    js.key("check").obj();
    js.key("ok").boolean(linked.ok());
    js.key("hm_unwritten").integer(static_cast<long long>(linked.hm_unwritten));
    js.key("y").tol(linked.y);
    js.end();
    if (down_store) {
      js.key("store_check").obj();
      js.key("ok").boolean(store.ok());
      js.key("y").tol(store.y);
      js.end();
    }
    if (down_store_control) {
      js.key("store_control_check").obj();
      js.key("ok").boolean(store_control.ok());
      js.key("y").tol(store_control.y);
      js.end();
    }
    if (controls) {
      js.key("control_check").obj();
      js.key("ok").boolean(control.ok());
      js.key("hm_unwritten").integer(static_cast<long long>(control.hm_unwritten));
      js.key("y").tol(control.y);
      js.end();
    }
    if (!check_only) {
      // ---- timing: the kernels in the round-robin timer ----
      std::vector<Contender> cs;
      cs.push_back({"gate_up", [&](CUstream s) { run_gu(*gu, s); }, {}, 1});
      cs.push_back({"down", [&](CUstream s) { run_down(*down, s); }, {}, 1});
      if (controls) {
        cs.push_back({"gate_up_control", [&](CUstream s) { run_gu(*gu_control, s); }, {}, 1});
        cs.push_back({"down_control", [&](CUstream s) { run_down(*down_control, s); }, {}, 1});
      }
      if (down_store) {  // the GEMM with its store alone, the sum alone, and both (the layer's down)
        cs.push_back({"down_store", [&](CUstream s) { must(down_store->mod.launch(grid_of(kHidden / 256), s), "down_store"); }, {}, 1});
        cs.push_back({"topk_sum", [&](CUstream s) { run_sum(s); }, {}, 1});
        cs.push_back({"down_store_sum", [&](CUstream s) { run_down(*down_store, s); }, {}, 1});
      }
      if (down_store_control)
        cs.push_back({"down_store_control", [&](CUstream s) { must(down_store_control->mod.launch(grid_of(kHidden / 256), s), "down_store_control"); }, {}, 1});
      const Clocks before = read_clocks();
      time_round_robin(cs, topt, util);
      // ---- the whole layer (and routing alone), run by run ----
      CUevent e0, e1;
      CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
      CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
      auto time = [&](auto&& fn) {
        CU(cuEventRecord(e0, stream));
        fn();
        CU(cuEventRecord(e1, stream));
        CU(cuEventSynchronize(e1));
        float ms = 0;
        CU(cuEventElapsedTime(&ms, e0, e1));
        return double(ms);
      };
      std::vector<double> t_layer, t_route;
      for (unsigned it = 0; it < topt.rounds + topt.warmup; ++it) {
        const double a = time([&] { route(); run_gu(*gu, stream); run_down(layer_down, stream); });
        const double r = time([&] { route(); });
        if (it >= topt.warmup) t_layer.push_back(a), t_route.push_back(r);
      }
      CU(cuEventDestroy(e0));
      CU(cuEventDestroy(e1));
      const Clocks after = read_clocks();
      const double flops = 2.0 * T * kTopK * kHidden * (3.0 * kInter);
      const Stats layer = stats_of(t_layer), rt = stats_of(t_route);
      std::printf("  clocks before: %s; after: %s\n", before.line().c_str(), after.line().c_str());
      std::printf("  layer %.4f ms ±%.1f%% (%.1f TFLOP/s of expert math; down = %s), route %.4f ms\n", layer.median, 100 * layer.spread,
                  flops / (layer.median * 1e-3) / 1e12, down_store ? "down_store + topk_sum" : "down", rt.median);
      for (const Contender& c : cs) {
        const Stats s = c.stats();
        const double f = c.label == "topk_sum" ? 0.0 : c.label.rfind("gate_up", 0) == 0 ? 2.0 * T * kTopK * kHidden * 2 * kInter : 2.0 * T * kTopK * kHidden * kInter;
        std::printf("  %-16s %.4f ms ±%.1f%%  (%.1f TFLOP/s over the %u routed rows)\n", c.label.c_str(), s.median, 100 * s.spread,
                    f / (s.median * 1e-3) / 1e12, T * kTopK);
      }
      js.key("clocks_before").raw(before.json());
      js.key("clocks_after").raw(after.json());
      js.key("expert_flops").num(flops);
      js.key("layer_down").str(down_store ? "down_store + topk_sum" : "down");
      js.key("layer_ms").stats(layer);
      js.key("route_ms").stats(rt);
      js.key("layer_runs_ms").samples(t_layer);
      for (const Contender& c : cs) {
        js.key(c.label + "_ms").stats(c.stats());
        js.key(c.label + "_runs_ms").samples(c.ms);
      }
      auto find = [&](const std::string& l) -> const Contender* {
        for (const Contender& c : cs)
          if (c.label == l) return &c;
        return nullptr;
      };
      for (const char* k : {"gate_up", "down", "down_store"}) {
        const Contender *lk = find(k), *ct = find(std::string(k) + "_control");
        if (lk && ct) {
          const Ratio r = paired_ratio(lk->ms, ct->ms);
          std::printf("  %s linked / control %.4f [%.4f, %.4f] %s\n", k, r.s.median, r.s.q1, r.s.q3, r.verdict.c_str());
          js.key(std::string(k) + "_linked_over_control").obj();
          js.key("ratio").stats(r.s);
          js.key("verdict").str(r.verdict);
          js.end();
        }
      }
    }
    js.end();
  }
  js.end();
  js.key("ok").boolean(all_ok);
  js.end();
  if (!json.empty() && !js.write(json)) die("cannot write " + json);
  CU(cuModuleUnload(routing));
  std::printf("\n%s\n", all_ok ? "PASS: every check passed" : "FAIL: a check failed");
  return all_ok ? 0 : 1;
}
