// The analytical model's NCCL/RCCL double binary tree: in each of its two steps (reduce up, broadcast
// down) every tree edge carries data in one direction only, so a NIC's two GCDs load each direction
// of it with their two tree edges of that step, not four.
#include <gtest/gtest.h>

#include "sim/analytical_collectives.hpp"
#include "tests/sim/one_collective.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace ps = paratwin::sim;
namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;

TEST(AnalyticalTree, EachStepLoadsItsEdgesInTheirOwnDirection) {
  // 64 MB all-reduced by 64 data-parallel groups of 128 at once, laid out as GPT-80B's on 8,192 GCDs
  // (1,024 nodes, each GCD of a node in another group): RCCL's tuner runs trees.
  const auto machine = pt::resolve_machine("frontier");
  const pt::Topology topology(machine.slice(1024));
  const double bytes = 64e6, nic = machine.node.nics.front().bandwidth;
  const auto program = paratwin::test::one_collective(pw::Grid({{"inner", 64}, {"pipe", 1}, {"data", 128}}), 8,
                                                      pw::OpKind::all_reduce, bytes);
  ps::CollectiveTimes times(topology, "rccl", true);
  const double seconds =
      times.seconds(program, program.placement(), 0, pw::OpKind::all_reduce, program.grid.mask("data"), bytes, 0);
  // Per step, a member sends its two halves (one per tree) through a NIC it shares with one other
  // GCD: four flows of bytes/2 at nic/4 each, 2·bytes/nic; two steps; plus step costs and latency.
  const double bandwidth_bound = 4 * bytes / nic;
  EXPECT_GT(seconds, bandwidth_bound);
  EXPECT_LT(seconds, 1.08 * bandwidth_bound);
}
