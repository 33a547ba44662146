// The engine's breakdown is the op walker's ledger: replaying a simulated rank's trace through the
// ledger (what a comparison with a measured run can do) gives the breakdown the engine reported, and
// the four parts add up to the rank's time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "tests/sim/megatron_pipeline.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"
#include "workloads/op_walker.hpp"

namespace pw = paratwin::workloads;

namespace {

// Per rank: the engine's {compute, exposed, bubble, other, end}, then the replayed ledger's four.
std::vector<double> ledgers(const pw::Program& program, paratwin::sim::Fidelity fidelity) {
  return paratwin::test::run_simulation([&] {
    const paratwin::topology::Topology topology(paratwin::topology::resolve_machine("perlmutter").slice(2));
    paratwin::sim::SimOptions options;
    options.fidelity = fidelity;
    options.fold = fidelity == paratwin::sim::Fidelity::fast;
    for (int64_t r = 0; r < program.grid.size(); ++r) options.trace_ranks.push_back(r);
    const auto result = paratwin::sim::simulate(program, topology, options);
    std::vector<double> out;
    for (int64_t r = 0; r < program.grid.size(); ++r) {
      const auto& t = result.ranks[static_cast<size_t>(r)];
      std::vector<pw::OpEvent> events;
      for (const auto& e : result.events)
        if (e.rank == r) events.push_back(e);
      const auto l = pw::replay_ledger(program.roles[static_cast<size_t>(program.role_of(r))], events, 0, t.end);
      out.insert(out.end(), {t.compute, t.exposed_comm, t.bubble, t.other_idle, t.end, l.compute, l.exposed_comm,
                             l.bubble, l.other_idle});
    }
    return out;
  });
}

void expect_replayed(const std::vector<double>& v, size_t ranks) {
  ASSERT_EQ(v.size(), 9 * ranks);
  double exposed = 0, bubble = 0;
  for (size_t r = 0; r < ranks; ++r) {
    const double* x = &v[9 * r];
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(x[5 + k], x[k], 1e-9 * x[4]) << "rank " << r << ", part " << k;
    EXPECT_NEAR(x[0] + x[1] + x[2] + x[3], x[4], 1e-9 * x[4]) << "rank " << r;
    exposed += x[1];
    bubble += x[2];
  }
  EXPECT_GT(exposed, 0);
  EXPECT_GT(bubble, 0);
}

}  // namespace

TEST(Ledger, ReplayingTheEnginesTraceGivesItsBreakdown) {
  const auto program = paratwin::test::megatron_pipeline("ledger");
  expect_replayed(ledgers(program, paratwin::sim::Fidelity::exact), static_cast<size_t>(program.grid.size()));
}

TEST(Ledger, FoldedRanksReportTheirRepresentativesLedger) {
  const auto program = paratwin::test::megatron_pipeline("ledger");
  expect_replayed(ledgers(program, paratwin::sim::Fidelity::fast), static_cast<size_t>(program.grid.size()));
}
