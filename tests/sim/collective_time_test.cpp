// A collective's time per call is its own: from its group's last member reaching the call to its last
// member's end, the same at every fidelity. The wait of the members that came first (the arrival skew, which depends
// on what each rank did before and on how the fidelity shares links) is reported apart.
//
// On GPT-80B over 64 Frontier GCDs the x all-reduce (4 GCDs of a node, 50 MB) took 2,681.7 /
// 1,151.5 / 992.0 us per call (exact / fast / folded) counted from each rank's own start; from the last
// member's arrival it is 992.0 us at all three, the ring's time over the node's Infinity Fabric.

#include <gtest/gtest.h>

#include <cstdio>

#include "sim/engine.hpp"
#include "tests/sim/four_d.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;
namespace ps = paratwin::sim;

namespace {

// Of the all-reduce over `axis`: {calls, seconds, waiting, call_seconds} per rank.
std::vector<double> all_reduce_of(const pw::Program& program, const std::string& axis, ps::Fidelity fidelity,
                                  bool fold) {
  return paratwin::test::run_simulation([&] {
    const pt::Topology topology(pt::resolve_machine("frontier").slice((program.grid.size() + 7) / 8));
    ps::SimOptions options;
    options.fidelity = fidelity;
    options.fold = fold;
    const auto r = ps::simulate(program, topology, options);
    for (const auto& c : r.collectives)
      if (c.kind == pw::OpKind::all_reduce && c.group == program.grid.mask(axis))
        return std::vector<double>{static_cast<double>(c.count), c.seconds, c.waiting, c.call_seconds};
    return std::vector<double>{};
  });
}

}  // namespace

TEST(CollectiveTime, PerCallTimeOfAnInNodeAllReduceAgreesAcrossFidelities) {
  // x = 4 GCDs of one node (the x group), y = 2 beside it, z = 2 across two nodes, every
  // collective overlapped: the z collectives on another stream make the members arrive apart.
  const auto program = paratwin::test::four_d(4, 2, 2, 1, true);
  const auto exact = all_reduce_of(program, "x", ps::Fidelity::exact, false);
  const auto fast = all_reduce_of(program, "x", ps::Fidelity::fast, false);
  const auto folded = all_reduce_of(program, "x", ps::Fidelity::fast, true);
  ASSERT_EQ(exact.size(), 4u);
  ASSERT_EQ(fast.size(), 4u);
  ASSERT_EQ(folded.size(), 4u);
  auto own = [](const std::vector<double>& v) { return v[3] / v[0]; };
  for (const auto* v : {&exact, &fast, &folded}) {
    EXPECT_GE((*v)[2], 0);
    EXPECT_LE((*v)[2], (*v)[1]);
  }
  EXPECT_EQ(folded[2], 0);  // folded, a collective inside a node is timed alone: nobody to wait for
  // The collective's own time: within 1 % whatever the fidelity.
  EXPECT_NEAR(own(exact) / own(folded), 1.0, 0.01);
  EXPECT_NEAR(own(fast) / own(folded), 1.0, 0.01);
  std::printf(
      "x all-reduce per call: own %.1f / %.1f / %.1f us (exact / fast / folded); from each rank's start %.1f / "
      "%.1f / %.1f us\n",
      1e6 * own(exact), 1e6 * own(fast), 1e6 * own(folded), 1e6 * exact[1] / exact[0], 1e6 * fast[1] / fast[0],
      1e6 * folded[1] / folded[0]);
}
