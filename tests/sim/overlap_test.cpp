// Overlap ([singh2025dissertation] §5.1.4): with OAR, ORS and OAG the exposed communication drops and the iteration
// time never rises.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

// {iteration time, mean exposed communication, the same summed over the collective table} of a 4-D
// workload on two Perlmutter nodes.
std::vector<double> run(bool oar, bool ors, bool oag) {
  nlohmann::json j = {
      {"name", "overlap"},
      {"model", {{"layers", 4}, {"hidden", 2048}, {"heads", 16}, {"seq_len", 512}, {"vocab", 8192}}},
      {"training", {{"global_batch", 8}, {"micro_batch", 2}, {"checkpointing", "full"}}},
      {"parallelism", {{"data", {{"size", 2}}}, {"tensor", {{"mode", "axonn"}, {"x", 2}, {"y", 1}, {"z", 2}}}}},
      {"optimizations", {{"overlap_all_reduce", oar}, {"overlap_reduce_scatter", ors}, {"overlap_all_gather", oag}}}};
  const auto program = pw::lower(pw::parse_workload(j, ""));
  return paratwin::test::run_simulation([&] {
    const paratwin::topology::Topology topology(paratwin::topology::resolve_machine("perlmutter").slice(2));
    const auto r = paratwin::sim::simulate(program, topology, {});
    double exposed = 0, by_collective = 0;
    for (const auto& t : r.ranks) exposed += t.exposed_comm;
    for (const auto& c : r.collectives) by_collective += c.exposed;
    return std::vector<double>{r.iteration_time, exposed / static_cast<double>(r.ranks.size()), by_collective};
  });
}

}  // namespace

TEST(Overlap, EachOptimisationLowersExposedCommunicationAndNeverSlowsDown) {
  const auto none = run(false, false, false);
  const auto oar = run(true, false, false);
  const auto ors = run(true, true, false);
  const auto all = run(true, true, true);
  for (const auto* step : {&none, &oar, &ors, &all}) {
    ASSERT_EQ(step->size(), 3u);
    // Every second of exposed communication is charged to the collective the compute stream waited for.
    EXPECT_NEAR((*step)[2], (*step)[1], 1e-9 * (*step)[1]);
  }
  // Successive optimisations, as in [singh2025dissertation] Fig. 5.4.
  EXPECT_LE(oar[0], none[0] * (1 + 1e-9));
  EXPECT_LE(ors[0], oar[0] * (1 + 1e-9));
  EXPECT_LE(all[0], ors[0] * (1 + 1e-9));
  EXPECT_LT(oar[1], none[1]);
  EXPECT_LT(ors[1], oar[1]);
  EXPECT_LT(all[1], ors[1]);
  EXPECT_LT(all[0], none[0]);
}
