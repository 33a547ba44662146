// A GPU's collectives are kernels on the compute units and HBM its GEMMs use: while one of a rank's
// collectives is in flight on another stream, its compute runs slower
// (topology::ProfileSpec::compute_slowdown_communicating, a machine file's
// profile.compute_while_communicating). The analytical model and the SimGrid engine pace the running
// compute op the same way; both must slow a ZeRO-3 iteration that overlaps its gathers, by no more than
// the slowdown itself, and agree with each other as they do without it.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "sim/analytical_model.hpp"
#include "sim/engine.hpp"
#include "tests/sim/collective_timing.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

namespace {

// GPT with 4 layers of h = 2048 on the 8 GPUs of one DGX H100 node, ZeRO-3 over all of them with the
// next layer's gather issued ahead: gathers and reduce-scatters run beside the layers' compute.
pw::Workload zero3() {
  nlohmann::json j = {{"name", "gpu-interference"},
                      {"model", {{"layers", 4}, {"hidden", 2048}, {"heads", 16}, {"seq_len", 1024}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 16}, {"micro_batch", 2}, {"checkpointing", "full"}}},
                      {"parallelism", {{"data", {{"size", 8}, {"zero", 3}}}}},
                      {"framework", {{"profile", "fsdp2"}}}};
  return pw::parse_workload(j, "");
}

pt::Machine machine(double slowdown) {
  auto m = pt::resolve_machine("dgx-h100").slice(1);
  m.profile.compute_slowdown_communicating = slowdown;
  return m;
}

}  // namespace

TEST(GpuInterference, EveryBuiltInGpuMachineCarriesTheMeasuredSlowdown) {
  for (const auto& name : pt::builtin_machine_names()) {
    const auto m = pt::resolve_machine(name);
    if (m.profile.library == "mpi") {
      EXPECT_EQ(m.profile.compute_slowdown_communicating, 0) << name;  // set by a calibrated profile
      continue;
    }
    EXPECT_NEAR(m.profile.compute_slowdown_communicating, 1 - 1 / 1.189, 1e-3) << name;
  }
}

TEST(GpuInterference, OverlappedCollectivesSlowTheComputeInBothModels) {
  const double s = 0.159;
  const auto w = zero3();
  const pt::Topology alone(machine(0)), shared(machine(s));
  ps::AnalyticalModel a0(alone), a1(shared);
  const auto fast = a0.estimate(w), slow = a1.estimate(w);
  // The compute stream's ops take longer, but never more than 1 / (1 - s) of their own time.
  EXPECT_GT(slow.compute, fast.compute * 1.01);
  EXPECT_LE(slow.compute, fast.compute / (1 - s) * (1 + 1e-9));
  EXPECT_GT(slow.iteration, fast.iteration);
  EXPECT_LE(slow.iteration, fast.iteration / (1 - s) * (1 + 1e-9));
  // The breakdown still adds up to the iteration.
  EXPECT_NEAR(slow.compute + slow.exposed_comm + slow.other_idle + slow.bubble, slow.iteration, 1e-6 * slow.iteration);

  const auto program = pw::lower(w);
  // One SimGrid engine per process: a child each.
  std::vector<double> simulated;
  for (const pt::Topology* t : {&alone, &shared}) {
    const auto r = paratwin::test::run_simulation(
        [&] { return std::vector<double>{ps::simulate(program, *t, {}).iteration_time}; });
    ASSERT_EQ(r.size(), 1u);
    simulated.push_back(r[0]);
  }
  EXPECT_GT(simulated[1], simulated[0]);
  // The same pacing in both: the slowdown moves them alike.
  EXPECT_NEAR((simulated[1] / simulated[0]) / (slow.iteration / fast.iteration), 1.0, 0.01);
  std::printf("ZeRO-3 on 8 H100, compute %.0f %% slower beside a collective: analytical %+.2f %%, SimGrid %+.2f %%\n",
              100 * s, 100 * (slow.iteration / fast.iteration - 1), 100 * (simulated[1] / simulated[0] - 1));
}

// Four micro-batches per replica with the gradient synchronisation overlapping the last backward: the
// analytical model lowers one micro-batch and scales it to four, but the synchronisation slows only
// the last one's compute, as the engine, which runs all four, finds.
TEST(GpuInterference, TheGradientSynchronisationSlowsOnlyTheLastMicroBatch) {
  const auto w = paratwin::test::data_parallel(true);
  const auto analytical = paratwin::test::collective_timing(false, w, pw::OpKind::all_reduce, "data", 1);
  const auto simulated = paratwin::test::collective_timing(true, w, pw::OpKind::all_reduce, "data", 1);
  ASSERT_GT(simulated.iteration, 0);
  EXPECT_NEAR(analytical.iteration / simulated.iteration, 1.0, 0.005);
}
