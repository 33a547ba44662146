// Communication driven by the compute cores (a calibrated CPU machine): the compute ops run
// slower while a collective of their rank is in flight, a collective step costs more while the rank
// computes, and pipeline messages pay the library's cost.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

namespace {

// AxoNN with the weights sharded over z = 2 and OAG/ORS on: all-gathers and reduce-scatters in flight
// while the ranks compute, on the 2 ranks of localhost.
pw::Program sharded() {
  nlohmann::json j = {
      {"name", "cpu-progress"},
      {"model", {{"layers", 2}, {"hidden", 256}, {"heads", 8}, {"seq_len", 128}, {"vocab", 1024}}},
      {"training", {{"global_batch", 4}, {"micro_batch", 2}, {"dtype", "fp32"}, {"checkpointing", "full"}}},
      {"parallelism", {{"data", {{"size", 1}}}, {"tensor", {{"mode", "axonn"}, {"x", 1}, {"y", 1}, {"z", 2}}}}},
      {"optimizations", {{"overlap_all_gather", true}, {"overlap_reduce_scatter", true}}}};
  return pw::lower(pw::parse_workload(j, ""));
}

// {iteration time, mean compute seconds per rank}.
std::vector<double> run(double slowdown, double step_extra) {
  const auto program = sharded();
  return paratwin::test::run_simulation([&] {
    auto machine = pt::resolve_machine("localhost");
    machine.profile.compute_slowdown_communicating = slowdown;
    machine.profile.overlapped_step_extra = step_extra;
    const pt::Topology topology(machine);
    const auto r = paratwin::sim::simulate(program, topology, {});
    double compute = 0;
    for (const auto& t : r.ranks) compute += t.compute;
    return std::vector<double>{r.iteration_time, compute / static_cast<double>(r.ranks.size())};
  });
}

// The iteration time of a 2-stage 1F1B pipeline on localhost with a library cost per message.
double pipeline(double per_message) {
  nlohmann::json j = {
      {"name", "messages"},
      {"model", {{"layers", 2}, {"hidden", 256}, {"heads", 8}, {"seq_len", 128}, {"vocab", 1024}}},
      {"training", {{"global_batch", 4}, {"micro_batch", 1}, {"dtype", "fp32"}, {"checkpointing", "full"}}},
      {"parallelism", {{"data", {{"size", 1}}}, {"pipeline", {{"stages", 2}, {"schedule", "1f1b"}}}}}};
  const auto program = pw::lower(pw::parse_workload(j, ""));
  const auto out = paratwin::test::run_simulation([&] {
    auto machine = pt::resolve_machine("localhost");
    machine.profile.message_cost.step = per_message;
    const pt::Topology topology(machine);
    return std::vector<double>{paratwin::sim::simulate(program, topology, {}).iteration_time};
  });
  return out.empty() ? -1 : out[0];
}

}  // namespace

TEST(CpuProgress, MessagesPayTheLibrarysCostOnTheCriticalPath) {
  const double base = pipeline(0), slower = pipeline(1e-3);
  ASSERT_GT(base, 0);
  // Stage 0's first forward reaches stage 1, and stage 1's last backward comes back: two messages at
  // least on the critical path; at most every message of the iteration (4 micro-batches, 2 directions)
  // at both of its ends.
  EXPECT_GE(slower - base, 2e-3 * (1 - 1e-9));
  EXPECT_LE(slower - base, 16e-3 * (1 + 1e-9));
}

TEST(CpuProgress, ComputeRunsSlowerWhileCollectivesAreInFlight) {
  const auto base = run(0, 0);
  const auto slowed = run(0.5, 0);
  ASSERT_EQ(base.size(), 2u);
  ASSERT_EQ(slowed.size(), 2u);
  EXPECT_GT(slowed[1], base[1]);  // the compute ops took longer
  // At half speed throughout they would take twice as long; collectives are in flight part of the time.
  EXPECT_LT(slowed[1], 2 * base[1]);
  EXPECT_GT(slowed[0], base[0]);
}

TEST(CpuProgress, StepsCostMoreOnlyWhileTheRankComputes) {
  const auto base = run(0, 0);
  const auto slower = run(0, 200e-6);
  ASSERT_EQ(slower.size(), 2u);
  EXPECT_GE(slower[0], base[0]);
  EXPECT_NEAR(slower[1], base[1], 1e-12);  // the compute itself is untouched
}
