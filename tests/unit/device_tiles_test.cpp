// The tile sequence of a link whose extent is read from device memory, checked by running it: the
// linker's generated pl_tile_at is compiled for the host and walked for every small extent and
// grid. Every tile of the extent must be walked exactly once; only the first
// B = ceil(T / ceil(T / G)) blocks take tiles (grid.h's rule for host extents, applied by the walk
// since the host sized the grid without T), each of them ceil(T / B) or one fewer, in as many rounds
// as all G blocks would take.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "pipelink/grid.h"
#include "pipelink/pipelink.h"

namespace {

std::string tile_at_source(const std::string& order, int group, const std::filesystem::path& dir) {
  std::ofstream(dir / "x.toml") << "[component]\nname = \"x\"\nentry = \"x_main\"\nobject = \"x.ltoir\"\n[warps]\ncount = 1\n"
                                << "[[param]]\nname = \"M\"\ntype = \"ptr\"\n"
                                << "[tiles]\norder = \"" << order << "\"\n" << (group ? "group = " + std::to_string(group) + "\n" : "")
                                << "tile = [64, 64]\nextent = [\"M\", \"N\"]\ndevice_extent = [\"M\"]\n";
  pipelink::LinkOptions o;
  o.inputs = {(dir / "x.toml").string()};
  o.check_only = true;
  pipelink::Diagnostics d;
  pipelink::LinkResult r = pipelink::link(o, d);
  std::ostringstream s;
  d.print(s);
  EXPECT_TRUE(r.ok) << s.str();
  const std::string& src = r.generated_source;
  const std::string head = "extern \"C\" __device__ bool pl_tile_at(";
  const size_t a = src.find(head), b = src.find("\n}\n", a);
  if (a == std::string::npos || b == std::string::npos) return {};
  return src.substr(a + head.size(), b + 3 - a - head.size());
}

}  // namespace

TEST(DeviceTiles, TheWalkBalancesRoundsLikeTheHostRule) {
  const struct { const char* order; int group; } orders[] = {{"row_major", 0}, {"col_major", 0}, {"grouped", 4}, {"grouped", 8}};
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pl_device_tiles_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ostringstream h;
  h << "#include <cstdio>\n#include <vector>\n"
       "namespace pl { struct Args { unsigned long long word[64]; }; struct Tile { unsigned m, n, linear; }; }\n"
       "struct Dim { unsigned x; };\nstatic Dim blockIdx, gridDim;\n"
       "typedef bool (*TileAt)(const pl::Args*, unsigned, pl::Tile*);\n";
  for (size_t k = 0; k < std::size(orders); ++k) {
    const std::string fn = tile_at_source(orders[k].order, orders[k].group, dir);
    ASSERT_FALSE(fn.empty()) << "no pl_tile_at in the generated unit of " << orders[k].order;
    ASSERT_NE(fn.find("blockIdx.x >= blocks"), std::string::npos) << "the device-extent walk does not balance:\n" << fn;
    h << "static bool tile_at_" << k << "(" << fn;
  }
  h << "static const TileAt fns[] = {";
  for (size_t k = 0; k < std::size(orders); ++k) h << "tile_at_" << k << ", ";
  h << "};\n";
  h << R"(
int main() {
  int bad = 0;
  for (unsigned f = 0; f < sizeof fns / sizeof fns[0]; ++f)
    for (unsigned tm = 0; tm <= 20; ++tm)
      for (unsigned tn = 1; tn <= 9; ++tn)
        for (unsigned grid = 1; grid <= 40; ++grid) {
          unsigned extent_m = tm * 64u - (tm ? 3u : 0u);  // M: not a multiple of the tile; read through the pointer
          pl::Args args{};
          args.word[0] = (unsigned long long)&extent_m;
          args.word[1] = tn * 64u;  // N
          gridDim.x = grid;
          const unsigned tiles = tm * tn;
          const unsigned rounds = tiles ? (tiles + grid - 1) / grid : 0, want = tiles ? (tiles + rounds - 1) / rounds : 0;
          std::vector<int> seen(tiles, 0);
          unsigned busy = 0, most = 0;
          for (unsigned b = 0; b < grid; ++b) {
            blockIdx.x = b;
            pl::Tile t;
            unsigned i = 0;
            for (; fns[f](&args, i, &t) && i < 10000; ++i)
              if (t.m < tm && t.n < tn) ++seen[t.m * tn + t.n];
              else if (++bad <= 20) std::printf("walk %u: a tile past the extent (%u, %u)\n", f, t.m, t.n);
            if (i) ++busy;
            if (i > most) most = i;
          }
          for (unsigned k = 0; k < tiles; ++k)
            if (seen[k] != 1 && ++bad <= 20) std::printf("walk %u, %u x %u tiles, grid %u: tile %u walked %d times\n", f, tm, tn, grid, k, seen[k]);
          if (busy != want && ++bad <= 20) std::printf("walk %u, %u tiles, grid %u: %u blocks take tiles, the rule says %u\n", f, tiles, grid, busy, want);
          if (most != rounds && ++bad <= 20) std::printf("walk %u, %u tiles, grid %u: %u rounds, all blocks would take %u\n", f, tiles, grid, most, rounds);
        }
  std::printf("failures: %d\n", bad);
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
  EXPECT_NE(log.str().find("failures: 0\n"), std::string::npos) << log.str();
  // The walk's count is the host rule's: B = persistent_grid_for(T, G, DataParallel) for T > 0.
  EXPECT_EQ(pipelink::persistent_grid_for(768, 132, pipelink::GridKind::DataParallel), 128u);
  EXPECT_EQ(pipelink::persistent_grid_for(1024, 132, pipelink::GridKind::DataParallel), 128u);
  if (!std::getenv("PL_KEEP")) std::filesystem::remove_all(dir);  // PL_KEEP=1 keeps the harness and its log
}
