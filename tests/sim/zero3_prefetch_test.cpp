// ZeRO-3 / FSDP prefetch depth (workloads/framework.hpp ShardingMechanism::prefetch) in the analytical
// model: gathers issued ahead overlap the computation of the units before them, so the iteration is
// shorter than with every gather blocking (prefetch 0), and the gathers' exposed time drops. A stack
// that synchronises the host before every gather (DeepSpeed <= v0.5) is slower still.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/analytical_model.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"
#include "workloads/workload.hpp"

namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

namespace {

// GPT with 8 layers of h = 2048 on 8 ranks of two Perlmutter nodes, ZeRO-3 over all of them.
pw::Workload zero3(const nlohmann::json& sharding) {
  nlohmann::json j = {{"name", "zero3-prefetch"},
                      {"model", {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"seq_len", 1024}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 16}, {"micro_batch", 1}, {"checkpointing", "full"}}},
                      {"parallelism", {{"data", {{"size", 8}, {"zero", 3}}}}},
                      {"framework", {{"profile", "generic"}, {"sharding", sharding}}}};
  return pw::parse_workload(j, "");
}

struct Result {
  double iteration, gather_exposed;
};

Result estimate(const nlohmann::json& sharding) {
  auto machine = pt::resolve_machine("perlmutter").slice(2);
  // The order of the gathers alone: without the compute's slowdown beside a collective, which charges
  // a gather issued further ahead for the compute it then runs beside (gpu_interference_test.cpp).
  machine.profile.compute_slowdown_communicating = 0;
  const pt::Topology topology(machine);
  ps::AnalyticalModel model(topology);
  const auto est = model.estimate(zero3(sharding));
  double exposed = 0;
  for (const auto& c : est.collectives)
    if (c.kind == pw::OpKind::all_gather) exposed += c.exposed;
  return {est.iteration, exposed};
}

}  // namespace

TEST(Zero3Prefetch, GatheringAheadShortensTheIteration) {
  for (const char* unit : {"layer", "submodule"}) {
    const auto none = estimate({{"gather_unit", unit}, {"prefetch", 0}});
    const auto one = estimate({{"gather_unit", unit}, {"prefetch", 1}});
    const auto two = estimate({{"gather_unit", unit}, {"prefetch", 2}});
    EXPECT_LT(one.iteration, none.iteration) << unit;
    EXPECT_LE(two.iteration, one.iteration * (1 + 1e-9)) << unit;
    EXPECT_LT(one.gather_exposed, none.gather_exposed) << unit;
  }
  // DeepSpeed <= v0.5: a gather per parameter, each after the host waited for the device.
  const auto v05 = estimate(
      {{"gather_unit", "submodule"}, {"prefetch", 0}, {"synchronize_per_gather", true}, {"call_overhead_s", 2e-4}});
  const auto v016 = estimate({{"gather_unit", "submodule"}, {"prefetch", 1}, {"persistence_threshold", 1e5}});
  EXPECT_GT(v05.iteration, v016.iteration);
}
