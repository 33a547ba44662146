// Gradient reduction mechanisms of the software stacks: buckets filled in the order backward
// produces gradients, launched during the last micro-batch's backward with overlap_gradient_sync (torch
// DDP, Megatron-Core --overlap-grad-reduce), ZeRO-2 reduce-scattering every micro-batch (DeepSpeed),
// and the pipeline engine's synchronous p2p and per-instruction host work.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/unit/test_util.hpp"
#include "workloads/gradient_buckets.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
namespace pd = paratwin::workloads::detail;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

// The base GPT on d data-parallel ranks, 8 micro-batches per replica.
nlohmann::json data_parallel(int64_t d, int zero = 0) {
  auto j = paratwin::test::base_gpt();
  j["training"]["global_batch"] = 8 * d;
  j["parallelism"] = {{"data", {{"size", d}, {"zero", zero}}}, {"tensor", {{"mode", "none"}}}};
  return j;
}

// Gradient bytes of one replica of the base GPT in bf16: 4 layers of 12h² + 13h parameters, the word
// embedding V·h once (one stage: the tied output layer is that weight) and the position embedding S·h.
constexpr double kLayerParams = 12.0 * 256 * 256 + 13 * 256;
constexpr double kGradientBytes = 2 * (4 * kLayerParams + 512.0 * 256 + 64.0 * 256);

bool data_collective(const pw::Program& p, const pw::Op& op) {
  return pw::is_collective(op.kind) && op.group == p.grid.mask("data");
}

}  // namespace

TEST(GradientBuckets, CutTheGradientStreamInBackwardOrder) {
  const std::vector<pd::GradientBlock> blocks{
      {3, "a", 30, false}, {2, "b", 30, false}, {1, "x", 12, true}, {-1, "e", 10, false}};
  const auto per_block = pd::gradient_buckets(blocks, 0);
  ASSERT_EQ(per_block.size(), 4u);
  EXPECT_STREQ(per_block[2].name, "x");
  EXPECT_TRUE(per_block[2].expert);
  // 70 dense bytes in buckets of 25: cut at 25 (inside a), 50 (inside b), the remainder with e; the
  // expert block is a bucket of its own, ready with its layer.
  const auto b = pd::gradient_buckets(blocks, 25);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].ready_layer, 3);
  EXPECT_STREQ(b[0].name, "a");
  EXPECT_DOUBLE_EQ(b[0].bytes, 25);
  EXPECT_EQ(b[1].ready_layer, 2);
  EXPECT_STREQ(b[1].name, "grad.bucket");  // the end of a and the start of b
  EXPECT_DOUBLE_EQ(b[1].bytes, 25);
  EXPECT_EQ(b[2].ready_layer, 1);
  EXPECT_TRUE(b[2].expert);
  EXPECT_DOUBLE_EQ(b[2].bytes, 12);
  EXPECT_EQ(b[3].ready_layer, -1);
  EXPECT_DOUBLE_EQ(b[3].bytes, 20);
  // A bucket larger than everything: one per group, when its last gradient is ready.
  const auto one = pd::gradient_buckets(blocks, 1e9);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_DOUBLE_EQ(one[0].bytes, 12);
  EXPECT_DOUBLE_EQ(one[1].bytes, 70);
}

// With overlap each layer's all-reduce waits for that layer's backward in the last micro-batch, not
// for the end of the iteration's backward; without overlap every one waits for the end.
TEST(GradientSync, OverlapLaunchesEachBucketWhenItsLayerIsDone) {
  auto j = data_parallel(4);
  for (const bool overlap : {false, true}) {
    j["optimizations"] = {{"overlap_gradient_sync", overlap}};
    const auto p = pw::lower(paratwin::test::workload(j));
    const auto& r = p.roles[0];
    int synced = 0;
    for (const auto& op : r.ops) {
      if (!data_collective(p, op)) continue;
      ++synced;
      EXPECT_EQ(op.kind, pw::OpKind::all_reduce);
      EXPECT_EQ(op.phase, pw::Phase::grad_sync);
      ASSERT_GE(op.dep_count, 1u);
      const pw::Op& after = r.ops[r.deps_of(op)[0]];
      EXPECT_EQ(after.micro_batch, 7);
      EXPECT_EQ(after.phase, pw::Phase::backward);
      // Each layer's gradient is ready after its backward, the embedding's (the tied output layer's
      // too) at the end.
      EXPECT_EQ(after.layer, overlap ? op.layer : pw::kLayerEmbedding) << op.name << " " << op.layer;
    }
    EXPECT_EQ(synced, 5);  // 4 layers and the embedding, one bucket each (gradient_bucket_bytes 0)
  }
}

TEST(GradientSync, BucketsOfTheStacksSize) {
  auto j = data_parallel(4);
  j["optimizations"] = {{"overlap_gradient_sync", true}};
  j["framework"] = {{"profile", "generic"}, {"gradient_bucket_bytes", 1e6}};
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto ops = ops_where(p.roles[0], [&](const pw::Op& op) { return data_collective(p, op); });
  ASSERT_EQ(ops.size(), static_cast<size_t>(std::ceil(kGradientBytes / 1e6)));
  double bytes = 0;
  for (const auto& op : ops) bytes += op.bytes;
  EXPECT_DOUBLE_EQ(bytes, kGradientBytes);
  EXPECT_DOUBLE_EQ(ops.front().bytes, 1e6);
}

// DeepSpeed ZeRO-2 reduce-scatters every micro-batch's gradients bucket by bucket; ZeRO-1 once, after
// the last micro-batch.
TEST(GradientSync, ZeroTwoReduceScattersEveryMicroBatch) {
  const auto buckets = static_cast<int>(std::ceil(kGradientBytes / 1e6));
  for (const int zero : {1, 2}) {
    auto j = data_parallel(4, zero);
    j["framework"] = {{"profile", "generic"}, {"gradient_bucket_bytes", 1e6}};
    const auto p = pw::lower(paratwin::test::workload(j));
    const auto& r = p.roles[0];
    const auto scatters =
        ops_where(r, [&](const pw::Op& op) { return data_collective(p, op) && op.kind == pw::OpKind::reduce_scatter; });
    EXPECT_EQ(static_cast<int>(scatters.size()), zero == 2 ? 8 * buckets : buckets) << "zero " << zero;
    for (int mb = 0; zero == 2 && mb < 8; ++mb) {
      double bytes = 0;
      for (const auto& op : scatters)
        if (op.micro_batch == mb) bytes += op.bytes;
      EXPECT_DOUBLE_EQ(bytes, kGradientBytes) << "micro-batch " << mb;
    }
    // The updated parameters are all-gathered after the optimizer, per parameter block, as ZeRO-1.
    EXPECT_EQ(
        count_where(r, [&](const pw::Op& op) { return data_collective(p, op) && op.kind == pw::OpKind::all_gather; }),
        5);
  }
}

// ZeRO-2's memory: the gradient shards plus the bucket of full gradients being reduced.
TEST(GradientSync, ZeroTwoHoldsOneBucketOfFullGradients) {
  auto memory = [](int zero, double bucket) {
    auto j = data_parallel(4, zero);
    if (bucket > 0) j["framework"] = {{"profile", "generic"}, {"gradient_bucket_bytes", bucket}};
    return pw::lower(paratwin::test::workload(j)).roles[0].memory;
  };
  const auto m0 = memory(0, 0);
  EXPECT_DOUBLE_EQ(memory(2, 0).gradients, m0.gradients / 4 + 2 * kLayerParams);  // the largest block: a layer
  EXPECT_DOUBLE_EQ(memory(2, 1e6).gradients, m0.gradients / 4 + 1e6);
}

// Megatron-Core buckets only the first pipeline stage: the others reduce their gradients as one bucket.
TEST(GradientSync, OneBucketAfterTheFirstStage) {
  auto j = data_parallel(2);
  j["training"]["global_batch"] = 16;
  j["parallelism"]["pipeline"] = {{"stages", 2}, {"schedule", "1f1b"}};
  j["framework"] = {
      {"profile", "generic"}, {"gradient_bucket_bytes", 1e6}, {"gradient_buckets_first_stage_only", true}};
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto reductions = [&](const pw::Role& r) {
    return count_where(r, [&](const pw::Op& op) { return data_collective(p, op); });
  };
  // Stage 0: 2 layers and the input embedding, 2 × 1579520 + 147456 bytes, in 1 MB buckets.
  EXPECT_EQ(reductions(p.roles[0]),
            static_cast<int>(std::ceil(2 * (2 * kLayerParams + 64.0 * 256 + 512.0 * 256) / 1e6)));
  EXPECT_EQ(reductions(p.roles[1]), 1);
}

// DeepSpeed's pipeline engine: a send holds the instruction stream until delivered, and each
// instruction (forward, backward, send, recv) costs host time on the compute stream.
TEST(PipelineEngine, SynchronousSendsAndInstructionHostWork) {
  auto j = data_parallel(1);
  j["parallelism"]["pipeline"] = {{"stages", 2}, {"schedule", "1f1b"}};
  j["framework"] = {{"profile", "generic"},
                    {"pipeline", {{"synchronous_p2p", true}, {"micro_batch_overhead_s", 0.001}}}};
  const auto p = pw::lower(paratwin::test::workload(j));
  for (const auto& r : p.roles) {
    const auto host = ops_where(r, [](const pw::Op& op) { return op.host_seconds > 0; });
    EXPECT_EQ(host.size(), 4u * 8);  // forward, backward, one send and one recv per micro-batch
    for (const auto& op : host) {
      EXPECT_EQ(op.stream, pw::Stream::compute);
      EXPECT_DOUBLE_EQ(op.host_seconds, 0.001);
      EXPECT_EQ(std::string(op.name).rfind("engine.", 0), 0u) << op.name;
    }
    // The op after each send on the compute stream waits for it.
    for (uint32_t i = 0; i < r.ops.size(); ++i) {
      if (r.ops[i].kind != pw::OpKind::send) continue;
      bool waited = false;
      for (uint32_t k = i + 1; k < r.ops.size() && !waited; ++k) {
        const auto& op = r.ops[k];
        if (op.stream != pw::Stream::compute || pw::is_collective(op.kind)) continue;
        for (uint32_t d = 0; d < op.dep_count; ++d) waited = waited || r.deps_of(op)[d] == i;
        if (!waited) break;
      }
      EXPECT_TRUE(waited) << r.name << " send op " << i;
    }
  }
  // The default engine sends asynchronously and spends no host time.
  j["framework"] = {{"profile", "generic"}};
  for (const auto& r : pw::lower(paratwin::test::workload(j)).roles)
    EXPECT_EQ(count_where(r, [](const pw::Op& op) { return op.host_seconds > 0; }), 0);
}
