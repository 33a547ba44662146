// Folding (fast fidelity at scale): the ranks of a node run as one actor, its NIC lanes' transfers to
// other nodes made lane by lane, collectives inside a node timed analytically. It must divide the actors, refuse
// programs it cannot fold, and predict within a few percent of simulating every rank.

#include <gtest/gtest.h>

#include "sim/engine.hpp"
#include "tests/sim/four_d.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

namespace {

// {iteration time, actors, mean exposed communication} in fast fidelity.
std::vector<double> simulate(const pw::Program& program, bool fold) {
  return paratwin::test::run_simulation([&] {
    const pt::Topology topology(pt::resolve_machine("frontier").slice((program.grid.size() + 7) / 8));
    paratwin::sim::SimOptions options;
    options.fidelity = paratwin::sim::Fidelity::fast;
    options.fold = fold;
    const auto r = paratwin::sim::simulate(program, topology, options);
    double exposed = 0;
    for (const auto& t : r.ranks) exposed += t.exposed_comm;
    return std::vector<double>{r.iteration_time, static_cast<double>(r.actors),
                               exposed / static_cast<double>(r.ranks.size())};
  });
}

}  // namespace

TEST(Folding, PredictsWithinFivePercentOfEveryRank) {
  for (const auto& [x, y, z] : {std::array<int64_t, 3>{2, 2, 2}, std::array<int64_t, 3>{4, 1, 2}}) {
    const auto program = paratwin::test::four_d(x, y, z, 4, true);
    const auto folded = simulate(program, true);
    const auto every = simulate(program, false);
    ASSERT_EQ(folded.size(), 3u);
    ASSERT_EQ(every.size(), 3u);
    EXPECT_EQ(folded[1], 4);  // 32 GCDs on 4 nodes
    EXPECT_EQ(every[1], 32);
    EXPECT_NEAR(folded[0] / every[0], 1.0, 0.05) << "x=" << x << " y=" << y << " z=" << z;
    std::printf("x=%lld y=%lld z=%lld data=4: folded %.6g s (%g actors), every rank %.6g s; exposed %.4g vs %.4g s\n",
                static_cast<long long>(x), static_cast<long long>(y), static_cast<long long>(z), folded[0], folded[1],
                every[0], folded[2], every[2]);
  }
}
