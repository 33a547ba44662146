// Folding (fast fidelity at scale): the ranks of a node that share a NIC run as one actor, collectives
// inside a node are timed analytically. It must divide the actors, refuse programs it cannot fold, and
// predict within a few percent of simulating every rank.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

namespace {

// A 4-D GPT on Frontier: x·y·z on one node (8 GCDs), data-parallel replicas on other nodes.
pw::Program four_d(int64_t x, int64_t y, int64_t z, int64_t data) {
  nlohmann::json j = {
      {"name", "fold"},
      {"model", {{"layers", 4}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 51200}}},
      {"training", {{"global_batch", 4 * data}, {"micro_batch", 4}, {"dtype", "bf16"}, {"checkpointing", "full"}}},
      {"parallelism", {{"data", {{"size", data}}}, {"tensor", {{"mode", "axonn"}, {"x", x}, {"y", y}, {"z", z}}}}},
      {"optimizations", {{"overlap_all_reduce", true}, {"overlap_reduce_scatter", true}, {"overlap_all_gather", true}}},
      {"placement", {{"order", {"x", "y", "z", "pipe", "data"}}, {"devices_per_node", 8}}}};
  return pw::lower(pw::parse_workload(j, "fold"));
}

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
    const auto program = four_d(x, y, z, 4);
    const auto folded = simulate(program, true);
    const auto every = simulate(program, false);
    ASSERT_EQ(folded.size(), 3u);
    ASSERT_EQ(every.size(), 3u);
    EXPECT_EQ(folded[1], 16);
    EXPECT_EQ(every[1], 32);
    EXPECT_NEAR(folded[0] / every[0], 1.0, 0.05) << "x=" << x << " y=" << y << " z=" << z;
    std::printf("x=%lld y=%lld z=%lld data=4: folded %.6g s (%g actors), every rank %.6g s; exposed %.4g vs %.4g s\n",
                static_cast<long long>(x), static_cast<long long>(y), static_cast<long long>(z), folded[0], folded[1],
                every[0], folded[2], every[2]);
  }
}
