// pipelink/grid.h — the persistent grid rule of pipelink::Module::persistent_grid, as a pure
// function (no CUDA), so it can be tested without a GPU.
//
// Every generated tile walk is persistent (block b takes tiles b, b + grid, ...; a cluster link's
// cluster c takes tile groups c, c + clusters, ...), so a grid past the blocks resident at once
// only queues. What the rule picks:
//   - a data-parallel link, one block per SM: the fewest blocks that finish its T tiles in as many
//     rounds as all R resident blocks would, ceil(T / ceil(T / R)): the same rounds, every block
//     given the same number of tiles or one fewer (measured where the weight stream is the cost:
//     247 tiles on 124 blocks 2.2-2.6% faster than on 132; bench/NOTES.md, session 11);
//   - a link of several blocks per SM: min(T, R) (the driver places blocks one per SM first, so
//     fewer blocks than resident would load SMs unevenly: measured 13% slower);
//   - a split schedule (stream-k, split-k): R, which splits the last round's tiles itself;
//   - T == 0: 1 (a block that finds no tile and returns).
#pragma once

#include <cstdint>

namespace pipelink {

enum class GridKind { DataParallel, SeveralPerSm, Split };

// 0 when resident == 0 (nothing fits: the caller reports it).
inline uint64_t persistent_grid_for(uint64_t tiles, uint64_t resident, GridKind kind) {
  if (resident == 0) return 0;
  if (kind == GridKind::Split) return resident;
  if (tiles == 0) return 1;
  if (kind == GridKind::SeveralPerSm) return tiles < resident ? tiles : resident;
  const uint64_t rounds = (tiles + resident - 1) / resident;
  return (tiles + rounds - 1) / rounds;
}

// ceil(extent_m / tile_m) * ceil(extent_n / tile_n) as the generated scheduler counts them, in 32
// bits: false if that count (or an extent rounded up to a whole tile) does not fit, which the
// device code would wrap.
inline bool tile_count_for(uint64_t extent_m, uint64_t extent_n, uint64_t tile_m, uint64_t tile_n, uint64_t& tiles) {
  if (!tile_m || !tile_n || extent_m + tile_m - 1 > 0xffffffffull || extent_n + tile_n - 1 > 0xffffffffull) return false;
  tiles = ((extent_m + tile_m - 1) / tile_m) * ((extent_n + tile_n - 1) / tile_n);
  return tiles <= 0xffffffffull;
}

}  // namespace pipelink
