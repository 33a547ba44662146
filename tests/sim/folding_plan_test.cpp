// Which ranks fold into one actor (sim/folding.hpp): no simulation, so it also runs under the sanitizers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/folding.hpp"
#include "tests/sim/four_d.hpp"
#include "topology/machine.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

TEST(Folding, RanksSharingANicBecomeOneActor) {
  const auto program = paratwin::test::four_d(2, 2, 2, 4, false);
  const auto machine = pt::resolve_machine("frontier");
  const auto f = paratwin::sim::plan_folding(program, program.placement(), machine);
  ASSERT_TRUE(f.active) << f.reason;
  EXPECT_EQ(f.actors, 16);  // 32 GCDs, two per NIC
  for (int64_t r = 0; r < 32; ++r) {
    // GCDs 2k and 2k+1 of a node share NIC k: the even one stands for both.
    EXPECT_EQ(f.rep[static_cast<size_t>(r)], r - r % 2) << r;
    EXPECT_EQ(f.weight[static_cast<size_t>(r)], r % 2 == 0 ? 2 : 0) << r;
  }
}

TEST(Folding, ANodesLanesBecomeOneActor) {
  const auto program = paratwin::test::four_d(2, 2, 2, 4, false);
  const auto machine = pt::resolve_machine("frontier");
  const auto f = paratwin::sim::plan_folding(program, program.placement(), machine, true);
  ASSERT_TRUE(f.active) << f.reason;
  EXPECT_TRUE(f.whole_nodes);
  EXPECT_EQ(f.actors, 4);  // 32 GCDs on 4 nodes
  for (int64_t r = 0; r < 32; ++r) {
    const auto k = static_cast<size_t>(r);
    EXPECT_EQ(f.rep[k], r - r % 8) << r;
    EXPECT_EQ(f.weight[k], r % 8 == 0 ? 8 : 0) << r;
    // Lanes: the GCDs leading each NIC (2k), two ranks each.
    EXPECT_EQ(f.lane_weight[k], r % 2 == 0 ? 2 : 0) << r;
    if (r % 8 == 0) {
      EXPECT_EQ(f.lanes[k], (std::vector<int64_t>{r, r + 2, r + 4, r + 6})) << r;
    } else {
      EXPECT_TRUE(f.lanes[k].empty()) << r;
    }
  }
}

TEST(Folding, RefusesGroupsSplitAcrossNodesAndStagesSharingANode) {
  const auto machine = pt::resolve_machine("frontier");
  // z = 16: each z group has 8 members on each of two nodes.
  const auto split = paratwin::test::four_d(1, 1, 16, 1, false);
  const auto f = paratwin::sim::plan_folding(split, split.placement(), machine);
  EXPECT_FALSE(f.active);
  EXPECT_NE(f.reason.find("several members on one node"), std::string::npos) << f.reason;
  // Two pipeline stages on one node.
  nlohmann::json j = {
      {"name", "pp"},
      {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"seq_len", 512}, {"vocab", 8192}}},
      {"training", {{"global_batch", 16}, {"micro_batch", 2}}},
      {"parallelism", {{"data", {{"size", 4}}}, {"tensor", {{"mode", "none"}}}, {"pipeline", {{"stages", 2}}}}},
      {"placement", {{"devices_per_node", 8}}}};
  const auto pp = pw::lower(pw::parse_workload(j, "pp"));
  const auto g = paratwin::sim::plan_folding(pp, pp.placement(), machine);
  EXPECT_FALSE(g.active);
  EXPECT_NE(g.reason.find("different pipeline stages"), std::string::npos) << g.reason;
}
