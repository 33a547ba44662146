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
  // Seed 002 §5.1.2: with G_x = G_y = G_z = G_data = 2, the X groups are (0,1), (2,3), ... and the Y
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
