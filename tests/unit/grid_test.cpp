// The persistent grid rule (pipelink/grid.h) that pipelink::Module::persistent_grid applies, and
// the host's tile count, which must agree with the generated scheduler's 32-bit count.
#include "pipelink/grid.h"

#include <gtest/gtest.h>

using pipelink::GridKind;
using pipelink::persistent_grid_for;
using pipelink::tile_count_for;

// 247 tiles on 132 SMs: 124 blocks (123 take two tiles, one takes one), the same two rounds as 132.
TEST(PersistentGrid, DataParallelKeepsTheRoundsWithFewerBlocks) {
  EXPECT_EQ(persistent_grid_for(247, 132, GridKind::DataParallel), 124u);
  EXPECT_EQ(persistent_grid_for(400, 132, GridKind::DataParallel), 100u);
  EXPECT_EQ(persistent_grid_for(1976, 132, GridKind::DataParallel), 132u);  // 15 rounds either way
  EXPECT_EQ(persistent_grid_for(132, 132, GridKind::DataParallel), 132u);
  EXPECT_EQ(persistent_grid_for(133, 132, GridKind::DataParallel), 67u);
  EXPECT_EQ(persistent_grid_for(5, 132, GridKind::DataParallel), 5u);
  EXPECT_EQ(persistent_grid_for(0, 132, GridKind::DataParallel), 1u);
}

// The rule's promise, over every T and R up to 300: the grid never exceeds R, takes exactly as many
// rounds as R blocks would, and no block takes more than one tile more than another.
TEST(PersistentGrid, SameRoundsBalancedEverywhere) {
  for (uint64_t R = 1; R <= 300; ++R)
    for (uint64_t T = 1; T <= 300; ++T) {
      const uint64_t g = persistent_grid_for(T, R, GridKind::DataParallel);
      ASSERT_GE(g, 1u);
      ASSERT_LE(g, R) << "T " << T << " R " << R;
      ASSERT_EQ((T + g - 1) / g, (T + R - 1) / R) << "T " << T << " R " << R;
      const uint64_t most = (T + g - 1) / g, least = T / g;
      ASSERT_LE(most - least, 1u);
      ASSERT_EQ(persistent_grid_for(T, R, GridKind::SeveralPerSm), T < R ? T : R);
      ASSERT_EQ(persistent_grid_for(T, R, GridKind::Split), R);
    }
}

TEST(PersistentGrid, NothingResidentIsZero) {
  EXPECT_EQ(persistent_grid_for(247, 0, GridKind::DataParallel), 0u);
  EXPECT_EQ(persistent_grid_for(247, 0, GridKind::Split), 0u);
}

TEST(TileCount, AsTheSchedulerCounts) {
  uint64_t t = 0;
  ASSERT_TRUE(tile_count_for(16, 25600, 64, 104, t));
  EXPECT_EQ(t, 247u);
  ASSERT_TRUE(tile_count_for(1000, 25600, 128, 128, t));
  EXPECT_EQ(t, 1600u);
  ASSERT_TRUE(tile_count_for(0, 25600, 128, 128, t));
  EXPECT_EQ(t, 0u);
  // An extent whose round-up to a whole tile, or a count, leaves 32 bits: the device would wrap.
  EXPECT_FALSE(tile_count_for(0xffffffffull, 1, 128, 1, t));
  EXPECT_FALSE(tile_count_for(0x10000, 0x10000, 1, 1, t));
  EXPECT_TRUE(tile_count_for(0xffff, 0x10001, 1, 1, t));
  EXPECT_FALSE(tile_count_for(1, 1, 0, 1, t));
}
