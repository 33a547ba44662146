// Which ranks fold into one actor (sim/folding.hpp): no simulation, so it also runs under the sanitizers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/folding.hpp"
#include "tests/sim/four_d.hpp"
#include "topology/machine.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

TEST(Folding, ANodesRanksBecomeOneActor) {
  const auto program = paratwin::test::four_d(2, 2, 2, 4, false);
  const auto machine = pt::resolve_machine("frontier");
  const auto f = paratwin::sim::plan_folding(program, program.placement(), machine);
  ASSERT_TRUE(f.active) << f.reason;
  EXPECT_EQ(f.actors, 4);  // 32 GCDs on 4 nodes
  for (int64_t r = 0; r < 32; ++r) {
    const auto k = static_cast<size_t>(r);
    EXPECT_EQ(f.rep[k], r - r % 8) << r;
    EXPECT_EQ(f.weight[k], r % 8 == 0 ? 8 : 0) << r;
  }
}

TEST(Folding, FoldsGroupsSplitAcrossNodes) {
  // z = 16: each z group has 8 members on each of two nodes; their phases carry both nodes' transfers.
  const auto machine = pt::resolve_machine("frontier");
  const auto split = paratwin::test::four_d(1, 1, 16, 1, false);
  const auto f = paratwin::sim::plan_folding(split, split.placement(), machine);
  ASSERT_TRUE(f.active) << f.reason;
  EXPECT_EQ(f.actors, 2);
}

TEST(Folding, RefusesStagesSharingANode) {
  const auto machine = pt::resolve_machine("frontier");
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
