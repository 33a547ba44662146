// Every registered collective algorithm, for every kind it supports, timed by the analytical model and by
// SimGrid (fast fidelity) on 16 Frontier GCDs over two nodes: the analytical model knows each entry well
// enough to agree with the simulation of the same plan (a new algorithm whose AnalyticalLoads misdescribe
// its flows fails here). All agree within 1 % today.
#include <gtest/gtest.h>

#include <cmath>
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

TEST(AlgorithmRegistry, TheAnalyticalModelAgreesWithSimGridOnEveryEntry) {
  const double bytes = 64e6;
  const pt::Topology topology(pt::resolve_machine("frontier").slice(2));
  struct Case {
    ps::Algorithm algorithm;
    pw::OpKind kind;
    double analytical = 0, simulated = 0;
  };
  std::vector<Case> cases;
  for (size_t i = 0; i < ps::registered_algorithms().size(); ++i)
    for (auto kind : {pw::OpKind::all_reduce, pw::OpKind::reduce_scatter, pw::OpKind::all_gather, pw::OpKind::broadcast,
                      pw::OpKind::reduce, pw::OpKind::all_to_all})
      if (ps::supports(static_cast<ps::Algorithm>(i), kind)) cases.push_back({static_cast<ps::Algorithm>(i), kind});
  // Every simulation first (each in its own child), then the comparisons.
  for (auto& c : cases) {
    const auto program =
        paratwin::test::one_collective(pw::Grid({{"inner", 1}, {"pipe", 1}, {"data", 16}}), 8, c.kind, bytes);
    ps::CollectiveTimes times(topology, "rccl", true, {{c.kind, c.algorithm}});
    c.analytical = times.seconds(program, program.placement(), 0, c.kind, program.grid.mask("data"), bytes, 0);
    const auto simulated = paratwin::test::run_simulation([&] {
      ps::SimOptions options;
      options.library = "rccl";
      options.fidelity = ps::Fidelity::fast;
      options.algorithms = {{c.kind, c.algorithm}};
      return std::vector<double>{ps::simulate(program, topology, options).iteration_time};
    });
    ASSERT_EQ(simulated.size(), 1u);
    c.simulated = simulated[0];
  }
  for (const auto& c : cases) {
    std::printf("%-14s %-15s analytical %.6g s, SimGrid %.6g s (%+.1f %%)\n", ps::to_string(c.algorithm),
                pw::to_string(c.kind), c.analytical, c.simulated, 100 * (c.analytical / c.simulated - 1));
    EXPECT_NEAR(c.analytical / c.simulated, 1.0, 0.05) << ps::to_string(c.algorithm) << " " << pw::to_string(c.kind);
  }
}
