// The tile schedules (--tile-schedule split-k, stream-k, stream-k:0, and data-parallel), checked by running
// them: for every tile order, the linker's generated scheduler (pl_unit_at, pl_tile_at and the
// static helpers they call) is compiled for the host (the system C++ compiler) and walked by every
// block for small and odd extents, grids and k-slice counts, including K = 0 and K not a multiple
// of k_tile. Every (tile, k slice) must be computed by exactly one unit; every tile emitted by
// exactly one unit; an emitting unit's peers [peer_begin, peer_end) must be exactly the blocks
// holding the tile's other pieces, each as its first and only non-emitting unit (with reduce_shares,
// set exactly where split-k cuts the tile into 10 pieces or more, every unit of the tile agrees on it and each piece
// names its emitter's peers, itself among them); and pl_tile_at
// (what components without k_extent walk) must give each block exactly the tiles its units emit,
// in the same order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "pipelink/pipelink.h"

namespace {

struct Config {
  std::string order;     // row_major | col_major | grouped
  int group;             // grouped only
  std::string schedule;  // split-k | stream-k | stream-k:0 | data-parallel
};

// The generated scheduler of a check-only link of a loader and a main loop that walk k ranges
// (the main loop sums partials), renamed with suffix _<n> so that every configuration's copy
// lives in one host program.
std::string scheduler(const Config& k, const std::filesystem::path& dir, size_t n) {
  const std::string tiles = "\n[tiles]\norder = \"" + k.order + "\"\n" + (k.group ? "group = " + std::to_string(k.group) + "\n" : "") +
                            "tile = [128, 128]\nextent = [\"M\", \"N\"]\nk_extent = \"K\"\nk_tile = 64\n";
  std::ofstream(dir / "loader.toml") << "[component]\nname = \"loader\"\nentry = \"loader_main\"\nobject = \"loader.ltoir\"\n"
                                     << "[warps]\ncount = 1\n[[param]]\nname = \"K\"\ntype = \"u32\"\n"
                                     << "[[port]]\nname = \"ab\"\ndirection = \"out\"\nstages = 2\ncompletion = \"tx\"\n"
                                     << "  [[port.tensor]]\n  name = \"b\"\n  dtype = \"bf16\"\n  shape = [64, 64]\n"
                                     << tiles;
  std::ofstream(dir / "mma.toml") << "[component]\nname = \"mma\"\nentry = \"mma_main\"\nobject = \"mma.ltoir\"\n[warps]\ncount = 4\n"
                                  << "[[param]]\nname = \"K\"\ntype = \"u32\"\n"
                                  << "[[port]]\nname = \"ab\"\ndirection = \"in\"\nstages = 2\narrive = \"warp\"\n"
                                  << "  [[port.tensor]]\n  name = \"b\"\n  dtype = \"bf16\"\n  shape = [64, 64]\n"
                                  << tiles << "partial_bytes = 1024\n";
  pipelink::LinkOptions o;
  o.inputs = {(dir / "loader.toml").string(), (dir / "mma.toml").string()};
  o.check_only = true;
  o.tile_schedule = k.schedule;
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  std::ostringstream s;
  d.print(s);
  EXPECT_TRUE(r.ok) << s.str();
  const std::string& src = r.generated_source;
  // split schedules: from the plan struct; data-parallel (no plan): from pl_tile_at, whose units follow it
  size_t a = src.find("struct pl_sk_plan");
  if (a == std::string::npos) a = src.find("extern \"C\" __device__ bool pl_tile_at(");
  const size_t b = src.find("extern \"C\" __device__ unsigned char* pl_partials(", a);
  if (a == std::string::npos || b == std::string::npos) return {};
  std::string text = src.substr(a, b - a);
  // Host spelling: no CUDA qualifiers, C++ linkage, and one name per configuration.
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  };
  replace_all("extern \"C\" __device__ ", "static ");
  replace_all("static __device__ __forceinline__ ", "static ");
  const std::string sfx = "_" + std::to_string(n);
  for (const char* name : {"pl_sk_plan", "pl_sk_make", "pl_sk_coords", "pl_sk_owner", "pl_sk_unit", "pl_unit_at", "pl_tile_at"})
    replace_all(name, std::string(name) + sfx);
  return text;
}

}  // namespace

TEST(SplitTiles, EveryKSliceOnceEveryTileEmittedOncePeersExact) {
  std::vector<Config> configs;
  for (const char* schedule : {"split-k", "stream-k", "stream-k:0", "data-parallel"}) {
    configs.push_back({"row_major", 0, schedule});
    configs.push_back({"col_major", 0, schedule});
    configs.push_back({"grouped", 3, schedule});
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pl_split_tiles_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ostringstream h;
  h << "#include <cstdio>\n#include <map>\n#include <set>\n#include <string>\n#include <utility>\n#include <vector>\n"
       "namespace pl { struct Args { unsigned long long word[64]; }; struct Tile { unsigned m, n, linear, rows, cols; };\n"
       "struct Unit { Tile tile; unsigned k_begin, k_end, peer_begin, peer_end; bool emit, reduce_shares; }; }\n"
       "struct Dim { unsigned x; };\nstatic Dim blockIdx, gridDim;\n"
       "typedef bool (*UnitAt)(const pl::Args*, unsigned, pl::Unit*);\n"
       "typedef bool (*TileAt)(const pl::Args*, unsigned, pl::Tile*);\n";
  for (size_t k = 0; k < configs.size(); ++k) {
    const std::string text = scheduler(configs[k], dir, k);
    ASSERT_FALSE(text.empty()) << "no scheduler in the generated unit of config " << k;
    h << text << "\n";
  }
  h << "struct Config { UnitAt unit; TileAt tile; const char* what; };\nstatic const Config configs[] = {\n";
  for (size_t k = 0; k < configs.size(); ++k)
    h << "  {pl_unit_at_" << k << ", pl_tile_at_" << k << ", \"" << configs[k].schedule << " " << configs[k].order << "\"},\n";
  // The params' slots: K is the first param of the loader (word 0); M and N follow (words 1, 2).
  h << R"(};
int main() {
  int bad = 0;
  unsigned long cases = 0;
  for (const Config& c : configs)
    for (unsigned tm = 1; tm <= 9; ++tm)
      for (unsigned tn : {1u, 2u, 3u, 5u, 7u, 13u})
        for (unsigned k : {0u, 64u, 100u, 192u, 64u * 7u, 64u * 80u})
          for (unsigned grid : {1u, 2u, 3u, 5u, 8u, 13u, 31u, 64u, 132u}) {
            ++cases;
            pl::Args args{};
            args.word[0] = k;
            args.word[1] = tm * 128u - 3u;  // M, N: not multiples of the tile
            args.word[2] = tn * 128u - 7u;  // (the last column of tiles has 121)
            gridDim.x = grid;
            const unsigned kt = (k + 63u) / 64u, tiles = tm * tn;
            std::map<std::pair<unsigned, unsigned>, int> slices;   // (linear tile, slice) -> count
            std::map<unsigned, unsigned> emitter;                   // linear tile -> block
            std::map<unsigned, std::pair<unsigned, unsigned>> peers;
            std::map<unsigned, unsigned> partial_of;                // block -> linear tile of its partial
            std::map<unsigned, std::pair<unsigned, unsigned>> piece_peers;  // block -> its peers (reduce_shares pieces)
            std::map<unsigned, bool> shares;                        // linear tile -> reduce_shares (every unit of it agrees)
            auto fail = [&](const char* why, unsigned b, unsigned i) {
              if (++bad <= 20)
                std::printf("%s, %u x %u tiles, K %u, grid %u: %s (block %u, unit %u)\n", c.what, tm, tn, k, grid, why, b, i);
            };
            for (unsigned b = 0; b < grid; ++b) {
              blockIdx.x = b;
              std::vector<unsigned> emitted;
              pl::Unit u;
              for (unsigned i = 0; c.unit(&args, i, &u) && i < 10000; ++i) {
                const unsigned lin = u.tile.linear;
                if (lin >= tiles || u.tile.m >= tm || u.tile.n >= tn) { fail("a unit outside the extent", b, i); continue; }
                // rows / cols: the tile's part of the extent (M = tm * 128 - 3: the last row of tiles has 125)
                if (u.tile.rows != (u.tile.m + 1u < tm ? 128u : 125u) || u.tile.cols != (u.tile.n + 1u < tn ? 128u : 121u)) fail("a unit's rows / cols are not its part of the extent", b, i);
                if (u.k_begin > u.k_end || u.k_end > kt || (kt > 0 && u.k_begin == u.k_end)) fail("an empty or bad k range", b, i);
                for (unsigned s = u.k_begin; s < u.k_end; ++s) ++slices[{lin, s}];
                if (shares.count(lin) && shares[lin] != u.reduce_shares) fail("the units of a tile disagree on reduce_shares", b, i);
                shares[lin] = u.reduce_shares;
                if (u.reduce_shares && u.k_begin == 0 && u.k_end == kt) fail("reduce_shares on a whole tile", b, i);
                if (u.emit) {
                  if (emitter.count(lin)) fail("a tile emitted twice", b, i);
                  emitter[lin] = b;
                  peers[lin] = {u.peer_begin, u.peer_end};
                  if (u.k_begin != 0) fail("an emitting unit without the tile's first slice", b, i);
                  emitted.push_back(lin);
                } else {
                  if (i != 0) fail("a partial that is not the block's first unit", b, i);
                  partial_of[b] = lin;
                  if (u.reduce_shares) {
                    piece_peers[b] = {u.peer_begin, u.peer_end};
                    if (b < u.peer_begin || b >= u.peer_end) fail("a reduce_shares piece outside its own peers", b, i);
                  } else if (u.peer_end != u.peer_begin) fail("a non-emitting unit with peers but no reduce_shares", b, i);
                }
              }
              pl::Tile t;
              unsigned n = 0;
              for (; c.tile(&args, n, &t) && n < 10000; ++n)
                if (n >= emitted.size() || t.linear != emitted[n]) { fail("pl_tile_at differs from the emitting units", b, n); break; }
                else if (t.rows != (t.m + 1u < tm ? 128u : 125u) || t.cols != (t.n + 1u < tn ? 128u : 121u)) fail("pl_tile_at's rows / cols are not the tile's part of the extent", b, n);
              if (n < emitted.size()) fail("pl_tile_at ends before the emitting units", b, n);
            }
            if (emitter.size() != tiles) fail("a tile is never emitted", 0, 0);
            if (slices.size() != static_cast<size_t>(tiles) * kt) fail("a k slice is never computed", 0, 0);
            for (auto& [key, n] : slices) if (n != 1) fail("a k slice computed twice", key.first, key.second);
            for (auto& [lin, pe] : peers) {
              std::set<unsigned> want;
              for (auto& [b, l] : partial_of) if (l == lin) want.insert(b);
              std::set<unsigned> got;
              for (unsigned b = pe.first; b < pe.second; ++b) got.insert(b);
              if (want != got) fail("an emitter's peers are not the blocks holding its tile's other pieces", emitter[lin], lin);
              // reduce_shares: exactly where split-k cuts the tile into 10 pieces or more (kReduceSharesPieces
              // in src/generate.cpp; stream-k never), and every piece names the emitter's peers
              const bool split_k = std::string(c.what).rfind("split-k", 0) == 0;
              if (shares[lin] != (split_k && want.size() + 1u >= 10u)) fail("reduce_shares where the pieces are not 10 or more under split-k, or missing where they are", emitter[lin], lin);
              if (shares[lin])
                for (unsigned b : want)
                  if (piece_peers.count(b) == 0 || piece_peers[b] != pe) fail("a piece's peers differ from its emitter's", b, lin);
            }
          }
  std::printf("failures: %d over %lu cases\n", bad, cases);
  return bad != 0;
}
)";
  std::ofstream(dir / "harness.cpp") << h.str();
  const std::string cmd = std::string(PL_CXX) + " -std=c++17 -O1 -o " + (dir / "harness").string() + " " + (dir / "harness.cpp").string() +
                          " > " + (dir / "log").string() + " 2>&1 && " + (dir / "harness").string() + " >> " + (dir / "log").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream lf(dir / "log");
  std::stringstream log;
  log << lf.rdbuf();
  EXPECT_EQ(rc, 0) << log.str();
  EXPECT_NE(log.str().find("failures: 0 over "), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("failures: 0 over 0 cases"), std::string::npos) << log.str();
  if (!std::getenv("PL_KEEP")) std::filesystem::remove_all(dir);  // PL_KEEP=1 keeps the harness and its log
}
