// One collective, the analytical model against SimGrid (fast fidelity, every rank an actor): a
// data-parallel tree all-reduce of 64 groups at once over 64 Frontier nodes each. The two share the
// algorithm's plan and the routes; they must agree on its time within 1 %.
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/analytical_collectives.hpp"
#include "sim/engine.hpp"
#include "tests/sim/one_collective.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace ps = paratwin::sim;
namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;

TEST(AnalyticalVersusSimGrid, DataParallelTreeAllReduceAgrees) {
  const double bytes = 64e6;
  const auto machine = pt::resolve_machine("frontier").slice(512);
  const auto program = paratwin::test::one_collective(pw::Grid({{"inner", 64}, {"pipe", 1}, {"data", 64}}), 8,
                                                      pw::OpKind::all_reduce, bytes);
  const pt::Topology topology(machine);
  ps::CollectiveTimes times(topology, "rccl", true);
  const double analytical =
      times.seconds(program, program.placement(), 0, pw::OpKind::all_reduce, program.grid.mask("data"), bytes, 0);
  const auto simulated = paratwin::test::run_simulation([&] {
    ps::SimOptions options;
    options.library = "rccl";
    options.fidelity = ps::Fidelity::fast;
    const auto r = ps::simulate(program, topology, options);
    std::vector<double> out{r.iteration_time};
    for (const auto& c : r.collectives)
      for (ps::Algorithm a : c.algorithms) out.push_back(static_cast<double>(a));
    return out;
  });
  ASSERT_EQ(simulated.size(), 2u);
  EXPECT_EQ(simulated[1], static_cast<double>(ps::Algorithm::tree));
  EXPECT_NEAR(analytical / simulated[0], 1.0, 0.01);
  std::printf("64 MB tree all-reduce, 64 groups of 64 nodes: analytical %.6g s, SimGrid %.6g s (%+.2f %%)\n",
              analytical, simulated[0], 100 * (analytical / simulated[0] - 1));
}

// Groups of 4 on Summit's 6-GPU nodes: {0-3} and {8-11} sit on one node each, {4-7} spans two and runs
// its rings through the NICs. Every group's collective runs at once and the slowest holds the
// iteration up, so the analytical model must time the group that crosses nodes, as SimGrid does.
TEST(AnalyticalVersusSimGrid, GroupsAcrossNodeBoundariesTakeTheSlowestGroupsTime) {
  const double bytes = 64e6;
  const auto machine = pt::resolve_machine("summit").slice(2);
  const auto program = paratwin::test::one_collective(pw::Grid({{"data", 4}, {"pipe", 1}, {"inner", 3}}), 6,
                                                      pw::OpKind::all_reduce, bytes);
  const pt::Topology topology(machine);
  ps::CollectiveTimes times(topology, "nccl", true);
  const auto data = program.grid.mask("data");
  // Asked from any group, the answer is the slowest group's.
  const double from_first = times.seconds(program, program.placement(), 0, pw::OpKind::all_reduce, data, bytes, 0);
  ps::CollectiveTimes fresh(topology, "nccl", true);
  const double from_straddling = fresh.seconds(program, program.placement(), 4, pw::OpKind::all_reduce, data, bytes, 0);
  EXPECT_DOUBLE_EQ(from_first, from_straddling);
  const auto simulated = paratwin::test::run_simulation([&] {
    ps::SimOptions options;
    options.library = "nccl";
    options.fidelity = ps::Fidelity::fast;
    return std::vector<double>{ps::simulate(program, topology, options).iteration_time};
  });
  ASSERT_EQ(simulated.size(), 1u);
  EXPECT_NEAR(from_first / simulated[0], 1.0, 0.03);
  std::printf("64 MB all-reduce, groups of 4 on 6-GPU nodes: analytical %.6g s, SimGrid %.6g s (%+.2f %%)\n",
              from_first, simulated[0], 100 * (from_first / simulated[0] - 1));
}
