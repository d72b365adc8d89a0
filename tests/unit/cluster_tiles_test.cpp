// The tile sequence of a cluster link, checked by running it: for every tile order, cluster size
// and multicast tensor (tile_coords = ["n"], ["m"] or []), the linker's generated pl_tile_at is
// compiled for the host (the system C++ compiler) and walked for every small problem extent and
// grid. It must cover every tile of the extent exactly once, give every block of a cluster the
// same number of tiles, and give every block of a multicast group the same value of each
// coordinate its multicast tensor follows (check_cluster's claim, by construction).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "pipelink/pipelink.h"

namespace {

struct Config {
  std::string order;  // row_major | col_major | grouped
  int group;          // grouped only
  int cluster;        // blocks per cluster
  int multicast;      // blocks per multicast group
  std::string coords; // tile_coords of the multicast tensor: "n", "m" or ""
};

std::string contracts(const Config& k, const std::filesystem::path& dir) {
  const std::string coords = k.coords.empty() ? "[]" : "[\"" + k.coords + "\"]";
  const std::string tiles = "\n[tiles]\norder = \"" + k.order + "\"\n" + (k.group ? "group = " + std::to_string(k.group) + "\n" : "") +
                            "tile = [128, 128]\nextent = [\"M\", \"N\"]\n";
  std::ofstream(dir / "loader.toml") << "[component]\nname = \"loader\"\nentry = \"loader_main\"\nobject = \"loader.ltoir\"\n"
                                     << "[cluster]\ndims = [" << k.cluster << ", 1, 1]\n[warps]\ncount = 1\n"
                                     << "[[port]]\nname = \"ab\"\ndirection = \"out\"\nstages = 2\ncompletion = \"tx\"\n"
                                     << "multicast = " << k.multicast << "\nmulticast_tensors = [\"b\"]\n"
                                     << "  [[port.tensor]]\n  name = \"b\"\n  dtype = \"bf16\"\n  shape = [64, 64]\n"
                                     << "  tile_coords = " << coords << "\n"
                                     << tiles;
  std::ofstream(dir / "mma.toml") << "[component]\nname = \"mma\"\nentry = \"mma_main\"\nobject = \"mma.ltoir\"\n[warps]\ncount = 4\n"
                                  << "[[port]]\nname = \"ab\"\ndirection = \"in\"\nstages = 2\narrive = \"warp\"\n"
                                  << "  [[port.tensor]]\n  name = \"b\"\n  dtype = \"bf16\"\n  shape = [64, 64]\n"
                                  << tiles;
  pipelink::LinkOptions o;
  o.inputs = {(dir / "loader.toml").string(), (dir / "mma.toml").string()};
  o.check_only = true;
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  std::ostringstream s;
  d.print(s);
  EXPECT_TRUE(r.ok) << s.str();
  // The generated scheduler, as a host function named tile_at_<n>.
  const std::string& src = r.generated_source;
  const std::string head = "extern \"C\" __device__ bool pl_tile_at(";
  const size_t a = src.find(head), b = src.find("\n}\n", a);
  if (a == std::string::npos || b == std::string::npos) return {};
  return src.substr(a + head.size(), b + 3 - a - head.size());
}

}  // namespace

TEST(ClusterTiles, MulticastGroupsShareTheCoordinateTheirTensorFollows) {
  std::vector<Config> configs;
  for (const char* order : {"row_major", "col_major", "grouped"})
    for (int cluster : {2, 4, 8})      // red team 4: clusters of 8, groups of 2 and 4 inside them,
      for (int multicast : {2, 4, 8})  // bands of 5, 8, 12 and 16 tiles
        for (const char* coords : {"n", "m", ""})
          for (int group : {0, 4, 3, 5, 8, 12, 16}) {
            if (multicast > cluster) continue;
            const bool grouped = std::string(order) == "grouped";
            if (grouped != (group != 0)) continue;
            // ranks along m in a grouped order need bands that split into clusters (refused otherwise)
            if (grouped && std::string(coords) != "m" && group % cluster != 0) continue;
            configs.push_back({order, group, cluster, multicast, coords});
          }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pl_cluster_tiles_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ostringstream h;
  h << "#include <cstdio>\n#include <map>\n#include <utility>\n#include <vector>\n"
       "namespace pl { struct Args { unsigned long long word[64]; }; struct Tile { unsigned m, n, linear, rows, cols; }; }\n"
       "struct Dim { unsigned x; };\nstatic Dim blockIdx, gridDim;\n"
       "typedef bool (*TileAt)(const pl::Args*, unsigned, pl::Tile*);\n";
  for (size_t k = 0; k < configs.size(); ++k) {
    const std::string fn = contracts(configs[k], dir);
    ASSERT_FALSE(fn.empty()) << "no pl_tile_at in the generated unit of config " << k;
    h << "static bool tile_at_" << k << "(" << fn;
  }
  h << "struct Config { TileAt f; const char* what; unsigned cluster, multicast; char follows; };\n"
       "static const Config configs[] = {\n";
  for (size_t k = 0; k < configs.size(); ++k) {
    const Config& c = configs[k];
    h << "  {tile_at_" << k << ", \"" << c.order << (c.group ? " group " + std::to_string(c.group) : std::string()) << ", cluster "
      << c.cluster << ", multicast " << c.multicast << ", tile_coords [" << c.coords << "]\", " << c.cluster << "u, " << c.multicast
      << "u, '" << (c.coords.empty() ? '-' : c.coords[0]) << "'},\n";
  }
  h << R"(};
int main() {
  int bad = 0;
  for (const Config& c : configs)
    for (unsigned tm = 0; tm <= 17; ++tm)  // past two clusters of 8 along either coordinate
      for (unsigned tn = 0; tn <= 17; ++tn)
        for (unsigned clusters = 1; clusters <= 4; ++clusters) {
          pl::Args args{};
          args.word[0] = tm * 128u - (tm ? 5u : 0u);  // M, N: not multiples of the tile
          args.word[1] = tn * 128u - (tn ? 7u : 0u);
          gridDim.x = clusters * c.cluster;
          std::map<std::pair<unsigned, unsigned>, int> seen;
          std::vector<std::vector<pl::Tile>> walk(gridDim.x);
          for (unsigned b = 0; b < gridDim.x; ++b) {
            blockIdx.x = b;
            pl::Tile t;
            for (unsigned i = 0; c.f(&args, i, &t) && i < 1000; ++i) {
              walk[b].push_back(t);
              // rows / cols: the tile's part of the extent, 0 for a padding tile past it
              const unsigned M = static_cast<unsigned>(args.word[0]), N = static_cast<unsigned>(args.word[1]);
              const unsigned rows = t.m * 128u >= M ? 0u : M - t.m * 128u < 128u ? M - t.m * 128u : 128u;
              const unsigned cols = t.n * 128u >= N ? 0u : N - t.n * 128u < 128u ? N - t.n * 128u : 128u;
              if ((t.rows != rows || t.cols != cols) && ++bad <= 20)
                std::printf("%s: tile (%u, %u) has rows / cols %u / %u, not %u / %u\n", c.what, t.m, t.n, t.rows, t.cols, rows, cols);
              if (t.m < tm && t.n < tn) ++seen[{t.m, t.n}];
            }
          }
          auto fail = [&](const char* why, unsigned b, unsigned i) {
            if (++bad <= 20) std::printf("%s, M tiles %u, N tiles %u, %u clusters: %s (block %u, tile %u)\n", c.what, tm, tn, clusters, why, b, i);
          };
          if (seen.size() != tm * tn) fail("a tile of the extent is never walked", 0, 0);
          for (auto& [tile, n] : seen) if (n != 1) fail("a tile is walked twice", tile.first, tile.second);
          for (unsigned b = 0; b < gridDim.x; ++b) {
            const unsigned first = b / c.cluster * c.cluster, group = b / c.multicast * c.multicast;
            if (walk[b].size() != walk[first].size()) fail("blocks of one cluster walk different numbers of tiles", b, 0);
            for (unsigned i = 0; i < walk[b].size() && i < walk[group].size(); ++i) {
              if (c.follows == 'n' && walk[b][i].n != walk[group][i].n) fail("a multicast group has different n", b, i);
              if (c.follows == 'm' && walk[b][i].m != walk[group][i].m) fail("a multicast group has different m", b, i);
            }
          }
        }
  std::printf("failures: %d over %zu configurations\n", bad, sizeof configs / sizeof configs[0]);
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
  // "failures: 0": "10 failures" would also end in "0 failures"
  EXPECT_NE(log.str().find("failures: 0 over " + std::to_string(configs.size()) + " configurations"), std::string::npos) << log.str();
  if (!std::getenv("PL_KEEP")) std::filesystem::remove_all(dir);  // PL_KEEP=1 keeps the harness and its log
}
