// Gradient reduction and the pipeline engine in time, in the SimGrid engine and the
// analytical model: with overlap_gradient_sync the data-parallel all-reduce of a many-layer model is
// mostly hidden behind the last micro-batch's backward and the iteration is shorter; a synchronous
// pipeline engine is slower, and its per-instruction host work adds about its count times its cost.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "tests/sim/collective_timing.hpp"

namespace pw = paratwin::workloads;

namespace {

using paratwin::test::CollectiveTiming;
using paratwin::test::data_parallel;

// The iteration and the data-parallel all-reduce, on one Perlmutter node.
CollectiveTiming timing(bool simgrid, const pw::Workload& w) {
  return paratwin::test::collective_timing(simgrid, w, pw::OpKind::all_reduce, "data", 1);
}

// Two pipeline stages on two GPUs, 8 micro-batches, with the given engine.
pw::Workload pipeline(const nlohmann::json& engine) {
  nlohmann::json j = {{"name", "pipe-engine"},
                      {"model", {{"layers", 8}, {"hidden", 1024}, {"heads", 16}, {"seq_len", 1024}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 8}, {"micro_batch", 1}, {"checkpointing", "none"}}},
                      {"parallelism", {{"pipeline", {{"stages", 2}, {"schedule", "1f1b"}}}}},
                      {"framework", {{"profile", "generic"}, {"pipeline", engine}}}};
  return pw::parse_workload(j, "");
}

}  // namespace

TEST(GradientSyncTime, OverlapHidesMostOfTheBucketedAllReduce) {
  for (const bool simgrid : {false, true}) {
    const auto time = [&](bool overlap) { return timing(simgrid, data_parallel(overlap)); };
    const CollectiveTiming off = time(false), on = time(true);
    std::printf(
        "%s: without overlap %.4g s (all-reduce %.4g s, exposed %.4g s); with %.4g s (%.4g s, exposed %.4g s)\n",
        simgrid ? "simgrid" : "analytical", off.iteration, off.total, off.exposed, on.iteration, on.total, on.exposed);
    ASSERT_GT(off.total, 0);
    // Without overlap every bucket waits for the end of backward: the optimizer waits for all of it.
    EXPECT_GT(off.exposed, 0.95 * off.total);
    // With it only the buckets of the last layers' backward (and the input embedding's) stay exposed.
    EXPECT_LT(on.exposed, 0.35 * on.total);
    EXPECT_LT(on.iteration, off.iteration - 0.5 * off.exposed);
  }
}

TEST(PipelineEngineTime, SynchronousSendsAndHostWorkSlowThePipeline) {
  const double o = 2e-3;  // host seconds per engine instruction
  for (const bool simgrid : {false, true}) {
    const auto time = [&](const nlohmann::json& engine) { return timing(simgrid, pipeline(engine)).iteration; };
    const double base = time(nlohmann::json::object());
    const double sync = time({{"synchronous_p2p", true}});
    const double host = time({{"micro_batch_overhead_s", o}});
    std::printf("%s: engine async %.6g s, synchronous %.6g s, with host work %.6g s\n",
                simgrid ? "simgrid" : "analytical", base, sync, host);
    EXPECT_GT(sync, base * (1 + 1e-6));
    // Each stage interprets 4 instructions per micro-batch (forward, backward, a send, a recv), 32 in
    // all, serially on its compute stream: they add at least that much, and the fill and drain of the
    // pipeline at most one micro-batch's more per stage.
    EXPECT_GE(host - base, 32 * o * (1 - 1e-6));
    EXPECT_LE(host - base, (32 + 8) * o);
  }
}
