#include "workloads/grid.hpp"

#include <gtest/gtest.h>

#include "workloads/error.hpp"

namespace pw = paratwin::workloads;

namespace {
pw::Grid four_d() {
  return pw::Grid({{"x", 2}, {"y", 2}, {"z", 2}, {"data", 2}});
}
}  // namespace

TEST(Grid, CoordinatesInnermostFirst) {
  const auto g = four_d();
  EXPECT_EQ(g.size(), 16);
  EXPECT_EQ(g.coords(5), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(g.rank_of({1, 0, 1, 0}), 5);
  EXPECT_EQ(g.with_coord(5, 3, 1), 13);
}

TEST(Grid, GroupsMatchSeed002Example) {
  // [singh2025dissertation] §5.1.2: with G_x = G_y = G_z = G_data = 2, the X groups are (0,1), (2,3), ... and the Y
  // groups (0,2), (1,3), (4,6), (5,7).
  const auto g = four_d();
  EXPECT_EQ(g.group(0, g.mask("x")), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(g.group(4, g.mask("y")), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(g.group(5, g.mask("y")), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(g.group(3, g.mask("data")), (std::vector<int64_t>{3, 11}));
  const auto both = g.mask("z") | g.mask("data");
  EXPECT_EQ(g.group(1, both), (std::vector<int64_t>{1, 5, 9, 13}));
  EXPECT_EQ(g.index_in_group(9, both), 2);
  EXPECT_EQ(g.group_member(1, both, 2), 9);
  EXPECT_EQ(g.mask_name(both), "z+data");
  EXPECT_EQ(g.group_size(both), 4);
}

TEST(Grid, DefaultPlacementIsRankOrder) {
  const auto g = four_d();
  pw::PlacementMap p(g, {}, 4);
  EXPECT_EQ(p.device_of(13), 13);
  EXPECT_EQ(p.slot_of(13).node, 3);
  EXPECT_EQ(p.slot_of(13).local, 1);
}

TEST(Grid, PlacementOrderPutsChosenAxesInsideANode) {
  const auto g = four_d();
  // data innermost: ranks 0 and 8 (a data pair) become devices 0 and 1.
  pw::PlacementMap p(g, {"data", "x", "y", "z"}, 4);
  EXPECT_EQ(p.device_of(0), 0);
  EXPECT_EQ(p.device_of(8), 1);
  EXPECT_EQ(p.device_of(1), 2);
  EXPECT_EQ(p.slot_of(8).node, 0);
}

TEST(Grid, PlacementOrderErrorsNameTheAxis) {
  const auto g = four_d();
  try {
    pw::PlacementMap p(g, {"data", "x", "w", "z"}, 4);
    FAIL();
  } catch (const pw::WorkloadError& e) {
    EXPECT_EQ(e.path(), "placement.order[2]");
    EXPECT_NE(std::string(e.what()).find("\"w\" is not an axis"), std::string::npos);
  }
  EXPECT_THROW(pw::PlacementMap(g, {"x", "x", "y", "z", "data"}, 4), pw::WorkloadError);
  EXPECT_THROW(pw::PlacementMap(g, {"x", "y", "z"}, 4), pw::WorkloadError);
}

TEST(Grid, PlacementOrderMayLeaveOutAxesOfSizeOne) {
  const pw::Grid g({{"tensor", 2}, {"pipe", 1}, {"data", 4}});
  pw::PlacementMap p(g, {"data", "tensor"}, 8);
  EXPECT_EQ(p.device_of(1), 4);  // tensor coordinate 1
  EXPECT_EQ(p.device_of(2), 1);  // data coordinate 1
}

TEST(Grid, TileNumbersDevicesBlockByBlock) {
  // [xu2021optimus] Fig. 8b: a 4 x 4 SUMMA mesh on 4 nodes, each node holding a 2 x 2 sub-mesh.
  const pw::Grid g({{"col", 4}, {"row", 4}});
  pw::PlacementMap p(g, {"col", "row"}, 4, {{"col", 2}, {"row", 2}});
  // Rank = col + 4 row. Node 0 holds (col, row) in {0,1} x {0,1}: ranks 0, 1, 4, 5.
  EXPECT_EQ(p.device_of(0), 0);
  EXPECT_EQ(p.device_of(1), 1);
  EXPECT_EQ(p.device_of(4), 2);
  EXPECT_EQ(p.device_of(5), 3);
  EXPECT_EQ(p.slot_of(2).node, 1);   // col 2, row 0: second block along col
  EXPECT_EQ(p.slot_of(8).node, 2);   // col 0, row 2
  EXPECT_EQ(p.slot_of(15).node, 3);  // col 3, row 3
  EXPECT_EQ(p.slot_of(15).local, 3);
  // A mesh row (ranks 0..3) now spans two nodes with two devices each, not one node.
  EXPECT_EQ(p.slot_of(3).node, 1);
  // Every device is used once.
  std::vector<int> used(16, 0);
  for (int64_t r = 0; r < 16; ++r) ++used[static_cast<size_t>(p.device_of(r))];
  EXPECT_EQ(used, std::vector<int>(16, 1));
}

TEST(Grid, TileOfOnesIsTheOrderAlone) {
  const auto g = four_d();
  pw::PlacementMap plain(g, {"data", "x", "y", "z"}, 4);
  pw::PlacementMap tiled(g, {"data", "x", "y", "z"}, 4, {{"x", 1}});
  for (int64_t r = 0; r < g.size(); ++r) EXPECT_EQ(plain.device_of(r), tiled.device_of(r));
}

TEST(Grid, TileErrorsNameTheAxis) {
  const pw::Grid g({{"col", 6}, {"row", 6}});
  try {
    pw::PlacementMap p(g, {}, 4, {{"col", 4}, {"row", 2}});
    FAIL();
  } catch (const pw::WorkloadError& e) {
    EXPECT_EQ(e.path(), "placement.tile.col");
    EXPECT_NE(std::string(e.what()).find("= 4 does not divide the axis size 6"), std::string::npos);
  }
  try {
    pw::PlacementMap p(g, {}, 4, {{"rows", 2}});
    FAIL();
  } catch (const pw::WorkloadError& e) {
    EXPECT_EQ(e.path(), "placement.tile.rows");
    EXPECT_NE(std::string(e.what()).find("is not an axis of this grid (col, row)"), std::string::npos);
  }
}
