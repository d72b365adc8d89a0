// build_cache — NVRTC output reused across links (--cache-dir, or $PIPELINK_CACHE_DIR).
//
// A relink after one component changed recompiles neither the generated unit nor the conformance
// probe when the contracts did not change: both are NVRTC programs whose output depends only on
// their source text, the options, the headers they include (PipeLink's own pipelink/device.cuh
// and pipelink/limits.h: the generated code includes nothing else) and the NVRTC that compiled
// them. The key is the SHA-256 of all of these; the NVRTC library is identified by the path, size
// and modification time of the file the loader would find first (toolchain_dl.cpp's search
// order, without loading it: loading runs LLVM's static initialisers, which a cache hit avoids).
// An entry is written to a temporary name and renamed, so a reader sees a whole entry or none.
//
// Does not: cache programs that include files PipeLink does not know (a component source, the
// monolithic control, -D PL_CLASSIC_HEADER), or the nvJitLink link (its inputs are the objects
// that changed); evict anything (delete the directory to empty the cache).
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "context.h"
#include "objects.h"

#ifndef PIPELINK_CUDA_LIB_DIR
#define PIPELINK_CUDA_LIB_DIR "/usr/local/cuda/lib64"
#endif
#ifndef PIPELINK_CUDA_MAJOR
#define PIPELINK_CUDA_MAJOR "13"
#endif

namespace pipelink {

std::string default_include_dir();

namespace {

// SHA-256 (FIPS 180-4).
class Sha256 {
 public:
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    total_ += n;
    while (n) {
      size_t k = std::min(n, size_t(64) - fill_);
      std::memcpy(buf_ + fill_, p, k);
      fill_ += k, p += k, n -= k;
      if (fill_ == 64) block(buf_), fill_ = 0;
    }
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    const unsigned char zero = 0;
    add(&zero, 1);  // a separator: ("ab","c") and ("a","bc") differ
  }
  std::string hex() {
    const uint64_t bits = total_ * 8;
    const unsigned char one = 0x80, zero = 0;
    add(&one, 1);
    while (fill_ != 56) add(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    add(len, 8);
    std::string out;
    static const char* digits = "0123456789abcdef";
    for (uint32_t w : h_)
      for (int i = 28; i >= 0; i -= 4) out += digits[(w >> i) & 15];
    return out;
  }

 private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void block(const unsigned char* b) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
        0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
        0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
        0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(b[4 * i]) << 24 | uint32_t(b[4 * i + 1]) << 16 | uint32_t(b[4 * i + 2]) << 8 | uint32_t(b[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], bb = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = bb, bb = a, a = t1 + t2;
    }
    h_[0] += a, h_[1] += bb, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
  }
  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char buf_[64];
  size_t fill_ = 0;
  uint64_t total_ = 0;
};

std::string file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "<missing>";
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The NVRTC library the loader would find first: path, size, modification time.
std::string nvrtc_identity() {
  const std::string soname = std::string("libnvrtc.so.") + PIPELINK_CUDA_MAJOR;
  std::vector<std::string> dirs;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH")) {
    std::istringstream is(llp);
    for (std::string d; std::getline(is, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  for (const char* d : {PIPELINK_CUDA_LIB_DIR, "/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib/x86_64-linux-gnu"})
    dirs.push_back(d);
  for (const std::string& d : dirs) {
    const std::string p = d + "/" + soname;
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) {
      std::error_code ec;
      const std::string real = std::filesystem::canonical(p, ec).string();
      return real + " " + std::to_string(st.st_size) + " " + std::to_string(static_cast<long long>(st.st_mtime));
    }
  }
  return soname + " (not found)";
}

}  // namespace

// The cache key of one NVRTC program; "" when it must not be cached.
std::string nvrtc_cache_key(const LinkContext& ctx, const std::string& source, const std::string& name,
                            const std::vector<std::string>& options) {
  if (ctx.opt.cache_dir.empty()) return "";
  for (const std::string& d : ctx.opt.defines)
    if (d.rfind("PL_CLASSIC", 0) == 0) return "";  // device.cuh then includes a file named by the define
  Sha256 h;
  h.add(std::string("pipelink nvrtc cache 1"));
  h.add(nvrtc_identity());
  h.add(name);
  for (const std::string& o : options) h.add(o);
  h.add(source);
  const std::string inc = default_include_dir();
  h.add(file_text(inc + "/pipelink/device.cuh"));
  h.add(file_text(inc + "/pipelink/limits.h"));
  return h.hex();
}

bool nvrtc_cache_get(const LinkContext& ctx, const std::string& key, std::vector<char>& out) {
  if (key.empty()) return false;
  std::string why;
  const std::string path = (std::filesystem::path(ctx.opt.cache_dir) / (key + ".ltoir")).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::vector<char> bytes;
  if (!read_regular_file(path, kMaxObjectBytes, bytes, why) || bytes.empty()) return false;
  out = std::move(bytes);
  return true;
}

void nvrtc_cache_put(const LinkContext& ctx, const std::string& key, const std::vector<char>& bytes) {
  if (key.empty() || bytes.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(ctx.opt.cache_dir, ec);
  const std::filesystem::path final_path = std::filesystem::path(ctx.opt.cache_dir) / (key + ".ltoir");
  const std::string tmp = final_path.string() + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o || !o.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !o.flush()) {
      std::filesystem::remove(tmp, ec);
      return;  // a cache that cannot be written is no error: the link goes on without it
    }
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace pipelink
