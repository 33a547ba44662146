// Megatron-Core's overlaps in time, in the SimGrid engine and the analytical model:
// --overlap-param-gather moves the distributed optimizer's parameter all-gathers into the next forward,
// one bucket ahead (core_v0.9.0 distributed_data_parallel.py, param_and_grad_buffer.py), and
// --tp-comm-overlap pipelines sequence parallelism's collectives with their GEMMs (Transformer Engine
// v1.8 module/base.py initialize_ub). Each must hide most of what it overlaps and shorten the iteration.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "tests/sim/collective_timing.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

using paratwin::test::collective_timing;
using paratwin::test::CollectiveTiming;

// 8 layers on 2 Perlmutter nodes (8 GPUs), data parallelism 8 with the distributed optimizer, one
// micro-batch per replica: the parameter all-gathers cross the network.
pw::Workload sharded_optimizer(bool overlap) {
  nlohmann::json j = {{"name", "param-gather"},
                      {"model", {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"seq_len", 2048}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 32}, {"micro_batch", 4}, {"checkpointing", "none"}}},
                      {"parallelism", {{"data", {{"size", 8}, {"zero", 1}}}, {"tensor", {{"mode", "none"}}}}},
                      {"optimizations", {{"overlap_gradient_sync", true}, {"overlap_param_gather", overlap}}},
                      {"placement", {{"devices_per_node", 4}}},
                      {"framework", {{"profile", "megatron-core"}, {"gradient_bucket_bytes", 25e6}}}};
  return pw::parse_workload(j, "");
}

// 4 layers on the 4 GPUs of a Perlmutter node, tensor parallelism 4 with sequence parallelism.
pw::Workload sequence_parallel(bool overlap) {
  nlohmann::json j = {{"name", "tp-overlap"},
                      {"model", {{"layers", 4}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 2}, {"micro_batch", 2}, {"checkpointing", "none"}}},
                      {"parallelism", {{"tensor", {{"mode", "megatron"}, {"size", 4}}}, {"sequence_parallel", true}}},
                      {"optimizations", {{"overlap_all_reduce", true}, {"overlap_tensor_comm", overlap}}},
                      {"framework", {{"profile", "megatron-core"}}}};
  return pw::parse_workload(j, "");
}

size_t count(const pw::Role& role, pw::OpKind kind, pw::Phase phase) {
  size_t n = 0;
  for (const auto& op : role.ops) n += op.kind == kind && op.phase == phase;
  return n;
}

}  // namespace

// The all-gathers leave the end of the optimizer step: one per gradient bucket (the same buckets), the
// first from the start of the iteration, each later one issued when the forward waits for the one before.
TEST(ParamGatherOverlap, BucketedGathersRunDuringTheForward) {
  const auto off = pw::lower(sharded_optimizer(false));
  const auto on = pw::lower(sharded_optimizer(true));
  const auto& role = on.roles.front();
  const size_t gathers = count(role, pw::OpKind::all_gather, pw::Phase::optimizer);
  EXPECT_EQ(gathers, count(role, pw::OpKind::reduce_scatter, pw::Phase::grad_sync));
  EXPECT_GT(gathers, 2u);
  // The first has no dependency; every later one depends on the one before (and on nothing else).
  constexpr uint32_t kNone = ~0u;
  uint32_t previous = kNone;
  for (uint32_t i = 0; i < role.ops.size(); ++i) {
    const auto& op = role.ops[i];
    if (op.kind != pw::OpKind::all_gather) continue;
    const std::vector<uint32_t> deps(role.deps_of(op), role.deps_of(op) + op.dep_count);
    if (previous == kNone)
      EXPECT_TRUE(deps.empty());
    else
      EXPECT_EQ(deps, std::vector<uint32_t>{previous});
    previous = i;
  }
  // Without the overlap: one per parameter block after the optimizer step.
  EXPECT_GT(count(off.roles.front(), pw::OpKind::all_gather, pw::Phase::optimizer), 0u);
  for (const bool simgrid : {false, true}) {
    const auto time = [&](bool overlap) {
      return collective_timing(simgrid, sharded_optimizer(overlap), pw::OpKind::all_gather, "data", 2);
    };
    const CollectiveTiming a = time(false), b = time(true);
    std::printf(
        "%s: after the step %.4g s (all-gathers %.4g s, exposed %.4g s); overlapped %.4g s (%.4g s, exposed "
        "%.4g s)\n",
        simgrid ? "simgrid" : "analytical", a.iteration, a.total, a.exposed, b.iteration, b.total, b.exposed);
    ASSERT_GT(a.total, 0);
    EXPECT_GT(a.iteration - b.iteration, 0.5 * a.total);  // most of the gathering left the critical path
    EXPECT_LT(b.exposed, 0.5 * b.total);
  }
}

// Each all-gather + GEMM runs as tensor-size chunks of rows (ring exchange) and each GEMM +
// reduce-scatter as 4 chunks, each reduce-scattered as it is done: the tensor group's collectives are
// mostly hidden and the iteration is shorter.
TEST(TensorCommOverlap, SequenceParallelCollectivesPipelineWithTheirGemms) {
  const auto off = pw::lower(sequence_parallel(false));
  const auto on = pw::lower(sequence_parallel(true));
  const auto& a = off.roles.front();
  const auto& b = on.roles.front();
  const size_t layers = 4, t = 4;
  // Forward: qkv and fc1 in t chunks, proj and fc2 in 4; backward: proj and fc2 dgrad in t chunks.
  EXPECT_EQ(count(b, pw::OpKind::gemm, pw::Phase::forward) - count(a, pw::OpKind::gemm, pw::Phase::forward),
            layers * (2 * (t - 1) + 2 * 3));
  EXPECT_EQ(count(b, pw::OpKind::gemm, pw::Phase::backward) - count(a, pw::OpKind::gemm, pw::Phase::backward),
            layers * 2 * (t - 1));
  EXPECT_EQ(count(b, pw::OpKind::reduce_scatter, pw::Phase::forward) -
                count(a, pw::OpKind::reduce_scatter, pw::Phase::forward),
            layers * 2 * 3);
  for (const bool simgrid : {false, true}) {
    const auto time = [&](bool overlap) {
      const auto w = sequence_parallel(overlap);
      const CollectiveTiming g = collective_timing(simgrid, w, pw::OpKind::all_gather, "tensor", 1);
      const CollectiveTiming s = collective_timing(simgrid, w, pw::OpKind::reduce_scatter, "tensor", 1);
      return CollectiveTiming{g.iteration, g.total + s.total, g.exposed + s.exposed};
    };
    const CollectiveTiming x = time(false), y = time(true);
    std::printf(
        "%s: blocking %.4g s (tensor collectives %.4g s, exposed %.4g s); overlapped %.4g s (%.4g s, exposed "
        "%.4g s)\n",
        simgrid ? "simgrid" : "analytical", x.iteration, x.total, x.exposed, y.iteration, y.total, y.exposed);
    ASSERT_GT(x.exposed, 0);
    EXPECT_LT(y.exposed, 0.5 * x.exposed);
    EXPECT_LT(y.iteration, x.iteration - 0.3 * x.exposed);
  }
}
