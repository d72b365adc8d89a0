// bench_stream — which way of reading a weight matrix does the H200's DRAM serve fastest?
//
// Reads the Qwen3-32B gate/up weight W [51200, 5120] bf16 (524 MB, N(0, 0.02^2)) with the kernels
// of stream_probe.cu and nothing else: a TMA ring as the GEMM loaders run it, in several box
// shapes (rows per box, contiguous bytes per row per box), stage depths and grids; 1-D bulk copies
// of contiguous pieces (the sequential order); and a plain vector read by every thread. All in one
// process, round robin, behind a spin (bench/common's timer), so the figures compare.
//
// Usage: bench_stream [--rounds N] [--only SUBSTR[,SUBSTR...]] [--json F] [--md F]
// A configuration: name  kind  e r d nb box_stride tile_rows stages grid
//   kind tma:   box {e, r, d} of W viewed as {e, rows, K / e} (e = 64: 128-byte swizzle; 128 or 256:
//               none), nb boxes per stage box_stride rows apart, tiles of tile_rows rows, a ring of
//               `stages`, `grid` persistent blocks (0: one per SM)
//   kind bulk:  e = the chunk in KB, tiles of tile_rows rows
//   kind ldg:   grid blocks of 512 threads
//   kind gemv:  the weight stream read by every thread into mma.sync (stream_probe.cu, gemv16): one
//               block per 16 W rows, e warps splitting K, d steps of 64 bytes per row in a batch;
//               X [16, K] multiplied for real and the output checked on sampled rows
//   kind rows:  gemv's blocks and K slices read 512 contiguous bytes of one row per warp load, no
//               X, no multiply (stream_probe.cu, rows16); rows2: the same with two batches of d
//               loads in registers; frag2: gemv's W loads alone (8 rows x 64 bytes per warp load)
//               with two batches of 2d loads. For gemv / rows kinds `stages` caps the blocks per SM
//               (shared memory), and the table prints the registers and blocks per SM the driver reports

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench.h"

using namespace plbench;

namespace {

constexpr uint64_t kRows = 51200, kK = 5120;

struct Config {
  std::string name, kind;
  unsigned e, r, d, nb, box_stride, tile_rows, stages, grid;
  bool x = false;  // tma: also an X box {e, 16, d} per stage
  unsigned mode = 0, hold_ns = 0;  // tma: the consumer (stream_probe.cu, consume())
};

const std::vector<Config> kConfigs = {
    // name                    kind    e    r    d  nb  bstr tile stg grid
    {"sw128-104x2-s7-g124", "tma", 64, 104, 1, 2, 104, 208, 7, 124},  // the 16 x 104 GEMM's W stream
    {"sw128-104x2+x-s7-g124", "tma", 64, 104, 1, 2, 104, 208, 7, 124, true},  // and X's 16-row slice, as the GEMM loads it
    {"sw128-104x2+x-hold250-s7-g124", "tma", 64, 104, 1, 2, 104, 208, 7, 124, true, 1, 250},
    {"sw128-104x2+x-hold500-s7-g124", "tma", 64, 104, 1, 2, 104, 208, 7, 124, true, 1, 500},
    {"sw128-104x2+x-wgmma-s7-g124", "tma", 64, 104, 1, 2, 104, 208, 7, 124, true, 2, 0},  // + the small16 main loop's wgmma
    {"sw128-104x2+x-swapped-s7-g124", "tma", 64, 104, 1, 2, 104, 208, 7, 124, true, 3, 0},
    {"sw128-104x2-d2+x-s4-g124", "tma", 64, 104, 2, 2, 104, 208, 4, 124, true},
    {"sw128-104x2-s7-g132", "tma", 64, 104, 1, 2, 104, 208, 7, 132},
    {"sw128-104x2-s4-g124", "tma", 64, 104, 1, 2, 104, 208, 4, 124},
    {"sw128-104x2-d2-s4-g124", "tma", 64, 104, 2, 2, 104, 208, 4, 124},  // 256 B of each row per box
    {"sw128-104x2-d4-s2-g124", "tma", 64, 104, 4, 2, 104, 208, 2, 124},  // 512 B
    {"sw128-208x1-s7-g124", "tma", 64, 208, 1, 1, 0, 208, 7, 124},       // one box of 208 rows
    {"sw128-128x2-s6-g132", "tma", 64, 128, 1, 2, 128, 256, 6, 132},     // 200 tiles of 256 rows
    {"sw128-128x2-s6-g100", "tma", 64, 128, 1, 2, 128, 256, 6, 100},
    {"sw128-64x1-s24-g132", "tma", 64, 64, 1, 1, 0, 64, 24, 132},  // 800 tiles of 64 rows, 8 KB stages
    {"sw128-64x1-d4-s6-g132", "tma", 64, 64, 4, 1, 0, 64, 6, 132},
    {"sw128-32x1-d8-s6-g132", "tma", 64, 32, 8, 1, 0, 32, 6, 132},
    {"sw128-64x2-s12-g132", "tma", 64, 64, 1, 2, 64, 128, 12, 132},  // 400 tiles of 128 rows
    {"none256B-104x2-s4-g124", "tma", 128, 104, 1, 2, 104, 208, 4, 124},
    {"none512B-104x2-s2-g124", "tma", 256, 104, 1, 2, 104, 208, 2, 124},
    {"bulk26K+x-208-s7-g124", "bulk", 26, 0, 0, 0, 0, 208, 7, 124, true},  // a packed W's 208 x 64 slice + X's: the GEMM's stage
    {"bulk26K+x-wgmma-208-s7-g124", "bulk", 26, 0, 0, 0, 0, 208, 7, 124, true, 2, 0},
    {"bulk26K+x-swapped-208-s7-g124", "bulk", 26, 0, 0, 0, 0, 208, 7, 124, true, 3, 0},  // 4 x m64n16k16 per k16 instead
    {"bulk13K+x-208-s14-g124", "bulk", 13, 0, 0, 0, 0, 208, 14, 124, true},
    {"bulk16K-208-s12-g124", "bulk", 16, 0, 0, 0, 0, 208, 12, 124},
    {"bulk32K-208-s6-g124", "bulk", 32, 0, 0, 0, 0, 208, 6, 124},
    {"bulk16K-208-s12-g132", "bulk", 16, 0, 0, 0, 0, 208, 12, 132},
    {"bulk8K-64-s24-g132", "bulk", 8, 0, 0, 0, 0, 64, 24, 132},
    {"ldg-g528", "ldg", 0, 0, 0, 0, 0, 0, 0, 528},
    {"ldg-g1056", "ldg", 0, 0, 0, 0, 0, 0, 0, 1056},
    // gemv: e warps, d steps per batch, `stages` = blocks per SM allowed (dynamic shared memory caps
    // the residency; 0 = as many as registers allow), so the blocks in flight read a window of W
    // (blocks start in order) instead of most of it
    {"gemv-w4-u4", "gemv", 4, 16, 4, 0, 0, 16, 0, 3200},
    {"gemv-w4-u8", "gemv", 4, 16, 8, 0, 0, 16, 0, 3200},   // (these five: results/s20/stream/stream1.md)
    {"gemv-w4-u10", "gemv", 4, 16, 10, 0, 0, 16, 0, 3200},
    {"gemv-w8-u5", "gemv", 8, 16, 5, 0, 0, 16, 0, 3200},
    {"gemv-w2-u8", "gemv", 2, 16, 8, 0, 0, 16, 0, 3200},
    {"gemv-w2-u10", "gemv", 2, 16, 10, 0, 0, 16, 0, 3200},
    {"gemv-w1-u8", "gemv", 1, 16, 8, 0, 0, 16, 0, 3200},
    {"gemv-w8-u4", "gemv", 8, 16, 4, 0, 0, 16, 0, 3200},
    {"gemv-w8-u4-b1", "gemv", 8, 16, 4, 0, 0, 16, 1, 3200},
    {"gemv-w8-u4-b2", "gemv", 8, 16, 4, 0, 0, 16, 2, 3200},
    {"gemv-w8-u5-b1", "gemv", 8, 16, 5, 0, 0, 16, 1, 3200},
    {"gemv-w8-u10-b1", "gemv", 8, 16, 10, 0, 0, 16, 1, 3200},
    {"gemv-w16-u5-b1", "gemv", 16, 16, 5, 0, 0, 16, 1, 3200},
    {"gemv-w16-u10-b1", "gemv", 16, 16, 10, 0, 0, 16, 1, 3200},
    {"gemv-w4-u8-b2", "gemv", 4, 16, 8, 0, 0, 16, 2, 3200},
    {"gemv-w4-u8-b4", "gemv", 4, 16, 8, 0, 0, 16, 4, 3200},
    {"gemv-w4-u10-b3", "gemv", 4, 16, 10, 0, 0, 16, 3, 3200},
    // rows: gemv's blocks and slices, each warp load 512 contiguous bytes of one row, no multiply
    {"rows-w4-u8", "rows", 4, 16, 8, 0, 0, 16, 0, 3200},
    {"rows-w4-u16", "rows", 4, 16, 16, 0, 0, 16, 0, 3200},
    {"rows-w2-u8", "rows", 2, 16, 8, 0, 0, 16, 0, 3200},
    {"rows-w2-u16", "rows", 2, 16, 16, 0, 0, 16, 0, 3200},
    {"rows-w1-u16", "rows", 1, 16, 16, 0, 0, 16, 0, 3200},
    {"rows-w4-u16-b4", "rows", 4, 16, 16, 0, 0, 16, 4, 3200},
    {"rows-w2-u16-b8", "rows", 2, 16, 16, 0, 0, 16, 8, 3200},
    // rows2 / frag2 (pattern16): the two access patterns with two batches of loads in registers;
    // frag2 is gemv's W loads alone (8 rows x 64 bytes per warp load), no X, no multiply
    {"rows2-w4-u8", "rows2", 4, 16, 8, 0, 0, 16, 0, 3200},
    {"rows2-w4-u16", "rows2", 4, 16, 16, 0, 0, 16, 0, 3200},
    {"rows2-w2-u16", "rows2", 2, 16, 16, 0, 0, 16, 0, 3200},
    {"rows2-w4-u16-b4", "rows2", 4, 16, 16, 0, 0, 16, 4, 3200},
    {"frag2-w4-u4", "frag2", 4, 16, 4, 0, 0, 16, 0, 3200},
    {"frag2-w4-u8", "frag2", 4, 16, 8, 0, 0, 16, 0, 3200},
    {"frag2-w8-u4", "frag2", 8, 16, 4, 0, 0, 16, 0, 3200},
    {"frag2-w2-u8", "frag2", 2, 16, 8, 0, 0, 16, 0, 3200},
    {"frag2-w4-u8-b4", "frag2", 4, 16, 8, 0, 0, 16, 4, 3200},
};

CUtensorMap map3d(CUdeviceptr w, uint64_t rows, unsigned e, unsigned r, unsigned d) {
  CUtensorMap m;
  cuuint64_t dims[3] = {e, rows, kK / e};
  cuuint64_t strides[2] = {kK * 2, uint64_t(e) * 2};
  cuuint32_t box[3] = {e, r, d};
  cuuint32_t es[3] = {1, 1, 1};
  const CUtensorMapSwizzle sw = e == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
  CU(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, reinterpret_cast<void*>(w), dims, strides, box, es,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned rounds = 15;
  std::string only, json_path, md_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("bench_stream: " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--rounds") rounds = std::stoul(next());
    else if (a == "--only") only = next();
    else if (a == "--json") json_path = next();
    else if (a == "--md") md_path = next();
    else die("bench_stream: unknown argument " + a + " (usage: bench_stream [--rounds N] [--only SUBSTR] [--json F] [--md F])");
  }
  Device dev = open_device();
  const std::string dir = exe_dir(argv[0]);
  Util util(dir + "/bench_util.cubin", dev.sms, dev.stream);
  CUmodule mod;
  CU(cuModuleLoad(&mod, (dir + "/stream_probe.cubin").c_str()));
  CUfunction f_tma, f_bulk, f_ldg;
  CU(cuModuleGetFunction(&f_tma, mod, "stream_tma"));
  CU(cuModuleGetFunction(&f_bulk, mod, "stream_bulk"));
  CU(cuModuleGetFunction(&f_ldg, mod, "stream_ldg"));
  for (CUfunction f : {f_tma, f_bulk})
    CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 227 * 1024));

  DeviceBuffer w(kRows * kK * 2), x(16 * kK * 2), sink(4 * 4096), gout(16 * kRows * 4);
  util.fill_bf16(w.p, kRows * kK, 0x5EED, 0.02f);
  util.fill_bf16(x.p, 16 * kK, 0x5EEE, 1.0f);
  CU(cuStreamSynchronize(dev.stream));

  struct Run {
    Config c;
    double bytes = 0;
    unsigned grid = 0, smem = 0, threads = 256;
    std::vector<CUtensorMap> maps;  // W's and X's, kept alive for the launches
    CUdeviceptr sink = 0;
    CUfunction f = nullptr;
    int regs = 0, blocks_per_sm = 0;  // read from the driver (cuFuncGetAttribute, the occupancy API)
  };
  // Dynamic shared memory that lets `blocks` blocks of f share an SM's 228 KB and not one more
  // (each block also holds f's static shared memory and 1 KB the driver reserves); 0: no cap.
  // Also raises f's dynamic shared memory limit to all the SM allows a block (227 KB with the static part).
  auto cap_smem = [](CUfunction f, unsigned blocks) -> unsigned {
    int stat = 0;
    CU(cuFuncGetAttribute(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(227u * 1024u) - stat));
    if (!blocks) return 0;
    return (228u * 1024u) / blocks - 1024u - unsigned(stat);
  };
  std::vector<Run> runs;
  std::vector<Contender> cs;
  runs.reserve(kConfigs.size());
  for (const Config& c : kConfigs) {
    if (!only.empty()) {  // comma-separated substrings: a configuration runs when its name holds one
      bool hit = false;
      for (size_t a = 0; a <= only.size();) {
        const size_t b = std::min(only.find(',', a), only.size());
        if (b > a && c.name.find(only.substr(a, b - a)) != std::string::npos) hit = true;
        a = b + 1;
      }
      if (!hit) continue;
    }
    Run run;
    run.c = c;
    run.grid = c.grid ? c.grid : unsigned(dev.sms);
    run.sink = sink.p;
    if (c.mode >= 2 && !(c.kind == "tma" && c.x && c.e == 64 && c.r == 104 && c.d == 1 && c.nb == 2 && c.box_stride == 104) &&
        !(c.kind == "bulk" && c.x && c.e == 26))
      die("bench_stream: " + c.name + ": the wgmma consumer needs X and two adjacent 104-row boxes of 128 bytes");
    if (c.kind == "tma") {
      run.maps.push_back(map3d(w.p, kRows, c.e, c.r, c.d));
      run.maps.push_back(map3d(x.p, 16, c.e, 16, c.d));
      const unsigned box_bytes = c.e * c.r * c.d * 2, n_tiles = unsigned(kRows / c.tile_rows);
      run.smem = c.stages * (c.nb * box_bytes + (c.x ? c.e * 16 * c.d * 2 : 0)) + 2 * 8 * c.stages + (c.mode == 3 ? 8192 : 0);
      run.bytes = double(n_tiles) * c.tile_rows * kK * 2;
      if (run.smem > 227 * 1024) die("bench_stream: " + c.name + ": " + std::to_string(run.smem) + " bytes of shared memory");
      runs.push_back(std::move(run));
    } else if (c.kind == "bulk") {
      const unsigned chunk = c.e * 1024, n_tiles = unsigned(kRows / c.tile_rows);
      run.maps.push_back(map3d(x.p, 16, 64, 16, 1));
      run.smem = c.stages * (chunk + (c.x ? 2048 : 0)) + 2 * 8 * c.stages + (c.mode == 3 ? 8192 : 0);  // mode 3 reads 48 rows past a stage
      run.bytes = double(n_tiles) * c.tile_rows * kK * 2;
      runs.push_back(std::move(run));
    } else if (c.kind == "rows" || c.kind == "rows2" || c.kind == "frag2") {
      const unsigned per = c.kind == "frag2" ? unsigned(kK * 2 / c.e / 64) : 16u * unsigned(kK * 2 / c.e / 512);
      if (per % c.d != 0) die("bench_stream: " + c.name + ": a warp's " + std::to_string(per) + " loads are not whole batches of " + std::to_string(c.d));
      run.bytes = double(kRows) * kK * 2;
      runs.push_back(std::move(run));
    } else {
      run.bytes = double(kRows) * kK * 2;
      runs.push_back(std::move(run));
    }
  }
  // gemv: check the math once per configuration before timing (sampled rows against the host).
  std::vector<uint16_t> hx(16 * kK), hw(kK);
  CU(cuMemcpyDtoH(hx.data(), x.p, hx.size() * 2));
  auto bf = [](uint16_t v) {
    const uint32_t u = uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  std::vector<CUfunction> f_gemv(runs.size(), nullptr);
  for (size_t i = 0; i < runs.size(); ++i) {
    const Config& c = runs[i].c;
    if (c.kind != "gemv") continue;
    if ((kK * 2 / c.e / 64) % c.d != 0) die("bench_stream: " + c.name + ": a warp's " + std::to_string(kK * 2 / c.e / 64) + " steps are not whole batches of " + std::to_string(c.d));
    const std::string fn = "stream_gemv_w" + std::to_string(c.e) + "_u" + std::to_string(c.d);
    CU(cuModuleGetFunction(&f_gemv[i], mod, fn.c_str()));
    CU(cuMemsetD32Async(gout.p, 0x7FC00000u, 16 * kRows, dev.stream));  // poisoned: NaN
    CUdeviceptr pw = w.p, px = x.p, po = gout.p;
    unsigned n = unsigned(kRows), k = unsigned(kK);
    void* a[] = {&pw, &px, &po, &n, &k};
    runs[i].smem = cap_smem(f_gemv[i], c.stages);
    runs[i].f = f_gemv[i];
    runs[i].threads = c.e * 32;
    CU(cuLaunchKernel(f_gemv[i], unsigned(kRows / 16), 1, 1, c.e * 32, 1, 1, runs[i].smem, dev.stream, a, nullptr));
    CU(cuStreamSynchronize(dev.stream));
    std::vector<float> ho(16 * kRows);
    CU(cuMemcpyDtoH(ho.data(), gout.p, ho.size() * 4));
    double worst = 0;
    for (uint64_t r : {uint64_t(0), uint64_t(1), uint64_t(7), uint64_t(8), uint64_t(15), uint64_t(16), uint64_t(12345), uint64_t(25600),
                       uint64_t(40961), kRows - 1}) {
      CU(cuMemcpyDtoH(hw.data(), w.p + r * kK * 2, kK * 2));
      for (unsigned t = 0; t < 16; ++t) {
        double ref = 0, mag = 0;
        for (unsigned q = 0; q < kK; ++q) ref += double(bf(hw[q])) * bf(hx[t * kK + q]), mag += std::fabs(double(bf(hw[q])) * bf(hx[t * kK + q]));
        const double got = ho[t * kRows + r], err = std::fabs(got - ref) / (mag + 1e-30);
        if (!(err <= 1e-5)) die("bench_stream: " + c.name + ": out[" + std::to_string(t) + "][" + std::to_string(r) + "] = " +
                                std::to_string(got) + ", reference " + std::to_string(ref));
        worst = std::max(worst, err);
      }
    }
    for (float v : ho)
      if (v != v) die("bench_stream: " + c.name + ": an output left unwritten (NaN)");
    std::printf("%s: checked (10 rows x 16 tokens, worst |err| / sum|terms| %.2e; every output written)\n", c.name.c_str(), worst);
  }
  for (Run& run : runs) {
    const Config c = run.c;
    Run* rp = &run;
    Contender ct;
    ct.label = c.name;
    if (c.kind == "tma") {
      rp->f = f_tma;
      ct.enqueue = [rp, f_tma, c](CUstream s) {
        unsigned n_tiles = unsigned(kRows / c.tile_rows), tile_rows = c.tile_rows, nb = c.nb, bs = c.box_stride, d = c.d,
                 k_steps = unsigned(kK / (c.e * c.d)), stages = c.stages, box_bytes = c.e * c.r * c.d * 2,
                 x_bytes = c.x ? c.e * 16 * c.d * 2 : 0, mode = c.mode, hold = c.hold_ns;
        CUdeviceptr sp = rp->sink;
        void* a[] = {&rp->maps[0], &rp->maps[1], &n_tiles, &tile_rows, &nb, &bs, &d, &k_steps, &stages, &box_bytes, &x_bytes, &mode, &hold, &sp};
        CU(cuLaunchKernel(f_tma, rp->grid, 1, 1, 256, 1, 1, rp->smem, s, a, nullptr));
      };
    } else if (c.kind == "bulk") {
      rp->f = f_bulk;
      const CUdeviceptr wp = w.p;
      ct.enqueue = [rp, f_bulk, c, wp](CUstream s) {
        CUdeviceptr p = wp;
        unsigned n_tiles = unsigned(kRows / c.tile_rows), chunk = c.e * 1024, stages = c.stages, x_bytes = c.x ? 2048 : 0,
                 x_steps = unsigned(kK / 64), mode = c.mode, hold = c.hold_ns;
        unsigned long long tile_bytes = uint64_t(c.tile_rows) * kK * 2;
        CUdeviceptr sp = rp->sink;
        void* a[] = {&p, &rp->maps[0], &n_tiles, &tile_bytes, &chunk, &stages, &x_bytes, &x_steps, &mode, &hold, &sp};
        CU(cuLaunchKernel(f_bulk, rp->grid, 1, 1, 256, 1, 1, rp->smem, s, a, nullptr));
      };
    } else if (c.kind == "rows" || c.kind == "rows2" || c.kind == "frag2") {
      CUfunction f;
      CU(cuModuleGetFunction(&f, mod, ("stream_" + c.kind + "_w" + std::to_string(c.e) + "_u" + std::to_string(c.d)).c_str()));
      rp->smem = cap_smem(f, c.stages);
      rp->f = f;
      rp->threads = c.e * 32;
      const CUdeviceptr wp = w.p, sp = sink.p;
      const unsigned smem = rp->smem;
      ct.enqueue = [f, c, wp, sp, smem](CUstream s) {
        CUdeviceptr pw = wp, ps = sp;
        unsigned k = unsigned(kK);
        void* a[] = {&pw, &k, &ps};
        CU(cuLaunchKernel(f, unsigned(kRows / 16), 1, 1, c.e * 32, 1, 1, smem, s, a, nullptr));
      };
    } else if (c.kind == "gemv") {
      const CUdeviceptr wp = w.p, xp = x.p, op = gout.p;
      CUfunction f = f_gemv[size_t(rp - runs.data())];
      const unsigned smem = rp->smem;
      ct.enqueue = [f, c, wp, xp, op, smem](CUstream s) {
        CUdeviceptr pw = wp, px = xp, po = op;
        unsigned n = unsigned(kRows), k = unsigned(kK);
        void* a[] = {&pw, &px, &po, &n, &k};
        CU(cuLaunchKernel(f, unsigned(kRows / 16), 1, 1, c.e * 32, 1, 1, smem, s, a, nullptr));
      };
    } else {
      rp->f = f_ldg;
      rp->threads = 512;
      const CUdeviceptr wp = w.p, sp = sink.p;
      ct.enqueue = [rp, f_ldg, wp, sp](CUstream s) {
        CUdeviceptr p = wp, q = sp;
        unsigned long long n_vec = kRows * kK * 2 / 16;
        void* a[] = {&p, &n_vec, &q};
        CU(cuLaunchKernel(f_ldg, rp->grid, 1, 1, 512, 1, 1, 0, s, a, nullptr));
      };
    }
    cs.push_back(std::move(ct));
  }
  if (cs.empty()) die("bench_stream: no configuration matches --only " + only);
  for (Run& run : runs) {
    CU(cuFuncGetAttribute(&run.regs, CU_FUNC_ATTRIBUTE_NUM_REGS, run.f));
    CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&run.blocks_per_sm, run.f, int(run.threads), run.smem));
  }
  const Clocks before = read_clocks();
  TimerOptions o;
  o.rounds = rounds;
  o.order_seed = 0x5EED5EEDull;
  time_round_robin(cs, o, util);
  CU(cuStreamSynchronize(dev.stream));
  const Clocks after = read_clocks();

  const std::string when = utc_now();
  std::string md = "# Weight-stream probe (bench_stream): W [51200, 5120] bf16 read by each pattern\n\n" + dev.name + ", " + when +
                   ", " + std::to_string(rounds) + " rounds (round robin behind a spin); median ms ± (q3 − q1) / (2 median); TB/s = bytes read / median. "
                   "Clocks before: " + before.line() + "; after: " + after.line() + ".\n\n"
                   "Stage KB and MB read count W's bytes only; a +x pattern also loads a 2 KB slice of X [16, K] per stage (L2-resident). "
                   "Consumer: free = each stage released at once; hold N = held N ns first; wgmma = the 16 x 104 main loop's eight "
                   "m64n104k16; swapped = 16 m64n16k16 (W rows as the m64).\n\n"
                   "gemv, rows, rows2, frag2: contiguous bytes = per row per warp load; stages = the residency cap asked (0: none); "
                   "regs and blocks/SM as the driver reports them (cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor).\n\n"
                   "| pattern | kind | contiguous bytes per row per box | rows per box | boxes per stage | stage KB | stages | grid | regs | blocks/SM | consumer | MB read | ms | TB/s |\n"
                   "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
  Json js;
  js.obj().key("bench").str("bench_stream").key("device").str(dev.name).key("utc").str(when).key("rounds").integer(rounds);
  js.key("clocks_before").raw(before.json()).key("clocks_after").raw(after.json());
  js.key("results").arr();
  for (size_t i = 0; i < cs.size(); ++i) {
    const Run& run = runs[i];
    const Config& c = run.c;
    const Stats st = cs[i].stats();
    const double tbs = run.bytes / (st.median * 1e-3) / 1e12;
    char line[512];
    const unsigned contig = c.kind == "tma" ? c.e * c.d * 2 : c.kind == "bulk" ? c.e * 1024 : c.kind == "gemv" || c.kind == "frag2" ? 64 : c.kind == "rows" || c.kind == "rows2" ? 512 : 16;
    const double stage_kb = c.kind == "tma" ? c.nb * c.e * c.r * c.d * 2 / 1024.0 : c.kind == "bulk" ? double(c.e) : 0;
    const std::string consumer = c.kind == "ldg" ? "—" : c.kind == "gemv" ? "mma.sync, " + std::to_string(c.e) + " warps, " + std::to_string(c.d) + " steps" :
                                 c.kind == "rows" || c.kind == "rows2" || c.kind == "frag2" ? "none, " + std::to_string(c.e) + " warps, batches of " + std::to_string(c.d) : c.mode == 1 ? "hold " + std::to_string(c.hold_ns) : c.mode == 2 ? "wgmma" : c.mode == 3 ? "swapped" : "free";
    std::snprintf(line, sizeof line, "| %s | %s | %u | %u | %u | %.1f | %u | %u | %d | %d | %s | %.1f | %.4f ±%.1f%% | %.3f |\n",
                  c.name.c_str(), c.kind.c_str(), contig, c.r, c.nb, stage_kb, c.stages, run.grid, run.regs, run.blocks_per_sm,
                  consumer.c_str(), run.bytes / 1e6, st.median, 100 * st.spread, tbs);
    md += line;
    std::printf("%s", line);
    js.obj().key("name").str(c.name).key("kind").str(c.kind).key("e").integer(c.e).key("r").integer(c.r).key("d").integer(c.d);
    js.key("nb").integer(c.nb).key("tile_rows").integer(c.tile_rows).key("stages").integer(c.stages).key("grid").integer(run.grid);
    js.key("x_slice").boolean(c.x).key("consumer_mode").integer(c.mode).key("hold_ns").integer(c.hold_ns);
    js.key("regs").integer(run.regs).key("blocks_per_sm").integer(run.blocks_per_sm).key("bytes").num(run.bytes).key("ms").stats(st).key("samples").samples(cs[i].ms).key("tb_per_s").num(tbs).end();
  }
  js.end().end();
  if (!json_path.empty() && !js.write(json_path)) die("bench_stream: cannot write " + json_path);
  if (!md_path.empty()) std::ofstream(md_path) << md;
  cuModuleUnload(mod);
  return 0;
}
