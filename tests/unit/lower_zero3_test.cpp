// ZeRO-3 / FSDP as the stacks run it (workloads/framework.hpp ShardingMechanism, facts read from the
// stacks' code): gathers and reduce-scatters per iteration equal the stack's mechanism, prefetch
// depth N issues gathers N units ahead, persistent small parameters are never gathered, and the
// defaults keep the generic lowering (one layer per gather, one ahead with OAG).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "reports/collective_listing.hpp"
#include "tests/unit/test_util.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace reports = paratwin::reports;
namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

constexpr int kLayers = 4, kMicroBatches = 8;

// 4 layers, h = 512 (every weight matrix above DeepSpeed's 1e5-element persistence threshold, every
// bias and layer norm below it), 4 data-parallel ranks with ZeRO-3, 8 micro-batches.
nlohmann::json zero3(const std::string& checkpointing, const nlohmann::json& sharding) {
  auto j = paratwin::test::base_gpt();
  j["model"]["hidden"] = 512;
  j["training"]["global_batch"] = kMicroBatches * 4;
  j["training"]["checkpointing"] = checkpointing;
  j["parallelism"] = {{"data", {{"size", 4}, {"zero", 3}}}};
  j["framework"] = {{"profile", "generic"}, {"sharding", sharding}};
  return j;
}

pw::Program lower(const nlohmann::json& j) {
  return pw::lower(paratwin::test::workload(j));
}

bool layer_gather(const pw::Op& op) {
  return op.kind == pw::OpKind::all_gather && op.stream == pw::Stream::shard && op.layer >= 0;
}
bool layer_scatter(const pw::Op& op) {
  return op.kind == pw::OpKind::reduce_scatter && op.stream == pw::Stream::shard && op.layer >= 0;
}

// Gathers of one layer in one micro-batch, by phase.
std::map<pw::Phase, int> gathers_of(const pw::Role& r, int layer, int mb) {
  std::map<pw::Phase, int> out;
  for (const auto& op : r.ops)
    if (layer_gather(op) && op.layer == layer && op.micro_batch == mb) ++out[op.phase];
  return out;
}

}  // namespace

// FSDP (torch/distributed/fsdp FULL_SHARD, one flat parameter per transformer block): one all-gather
// per unit before its forward and one before its backward, and one reduce-scatter per unit after its
// backward, in every micro-batch. Under full recomputation the recompute's gather serves the backward
// (the unit stays unsharded through it), unless the stack re-gathers (regather_after_recompute).
TEST(LowerZero3, FsdpLayerUnitGathersTwicePerLayerPerMicroBatch) {
  const nlohmann::json fsdp = {{"gather_unit", "layer"}, {"prefetch", 1}};
  for (const std::string ckpt : {"none", "full"}) {
    const auto p = lower(zero3(ckpt, fsdp));
    const auto& r = p.roles[0];
    EXPECT_EQ(count_where(r, layer_gather), kLayers * kMicroBatches * 2) << ckpt;
    EXPECT_EQ(count_where(r, layer_scatter), kLayers * kMicroBatches) << ckpt;
    const auto phases = gathers_of(r, 2, 3);
    EXPECT_EQ(phases.at(pw::Phase::forward), 1);
    EXPECT_EQ(phases.at(ckpt == "full" ? pw::Phase::recompute : pw::Phase::backward), 1);
    // One gather moves the whole layer: 12h² + 13h parameters in bf16.
    const double h = 512;
    for (const auto& op : ops_where(r, layer_gather)) EXPECT_DOUBLE_EQ(op.bytes, 2 * (12 * h * h + 13 * h));
  }
  auto regather = fsdp;
  regather["regather_after_recompute"] = true;
  const auto p = lower(zero3("full", regather));
  EXPECT_EQ(count_where(p.roles[0], layer_gather), kLayers * kMicroBatches * 3);
  const auto phases = gathers_of(p.roles[0], 2, 3);
  EXPECT_EQ(phases.at(pw::Phase::backward), 1);
  // SHARD_GRAD_OP-like: no reshard after forward, so only the forward gathers; every layer's
  // gathered weights stay allocated until its backward, and the embeddings' (word and position).
  const auto keep = lower(zero3("full", {{"gather_unit", "layer"}, {"reshard_after_forward", false}}));
  EXPECT_EQ(count_where(keep.roles[0], layer_gather), kLayers * kMicroBatches);
  EXPECT_DOUBLE_EQ(keep.roles[0].memory.gathered_weights,
                   kLayers * 2 * (12 * 512.0 * 512 + 13 * 512) + 2 * (512.0 + 64) * 512);
}

// DeepSpeed ZeRO-3 (stage3.py pre-forward/pre-backward hooks on every module, fetching the module's
// own parameters; stage3_param_persistence_threshold 1e5 keeps biases and layer norms whole): four
// gathers per layer per pass, QKV, attention projection, FC1, FC2, each of its weight alone.
TEST(LowerZero3, DeepSpeedSubmodulesGatherFourWeightsPerLayerPerPass) {
  const nlohmann::json ds = {{"gather_unit", "submodule"}, {"prefetch", 1}, {"persistence_threshold", 1e5}};
  const double h = 512;
  const auto p = lower(zero3("full", ds));
  const auto& r = p.roles[0];
  EXPECT_EQ(count_where(r, layer_gather), kLayers * kMicroBatches * 2 * 4);
  std::map<std::string, double> sizes;
  for (const auto& op : ops_where(r, layer_gather)) sizes[op.name] = op.bytes;
  EXPECT_EQ(sizes, (std::map<std::string, double>{{"zero3.qkv.all_gather", 2 * 3 * h * h},
                                                  {"zero3.proj.all_gather", 2 * h * h},
                                                  {"zero3.fc1.all_gather", 2 * 4 * h * h},
                                                  {"zero3.fc2.all_gather", 2 * 4 * h * h}}));
  // Forward order in the forward pass (layer 1's first gather is issued ahead, during layer 0).
  std::vector<std::string> order;
  for (const auto& op : r.ops)
    if (layer_gather(op) && op.layer == 0 && op.micro_batch == 0 && op.phase == pw::Phase::forward)
      order.push_back(op.name);
  EXPECT_EQ(order, (std::vector<std::string>{"zero3.qkv.all_gather", "zero3.proj.all_gather", "zero3.fc1.all_gather",
                                             "zero3.fc2.all_gather"}));
  // Without a bucket, the gradients of each module (biases included) are reduce-scattered when its
  // backward ends: 6 modules per layer (layer norms too) per micro-batch.
  EXPECT_EQ(count_where(r, layer_scatter), kLayers * kMicroBatches * 6);
  // Without the threshold, biases and layer norms are gathered too: 6 modules.
  auto all = ds;
  all["persistence_threshold"] = 0;
  EXPECT_EQ(count_where(lower(zero3("full", all)).roles[0], layer_gather), kLayers * kMicroBatches * 2 * 6);
  // No recomputation: the forward and the backward hooks gather.
  EXPECT_EQ(count_where(lower(zero3("none", ds)).roles[0], layer_gather), kLayers * kMicroBatches * 2 * 4);
}

// DeepSpeed's gradient bucket (reduce_bucket_size): a reduce-scatter when the next gradient would
// overflow it, the rest at the end of the backward pass; the bytes reduced stay those of the layers.
TEST(LowerZero3, DeepSpeedReduceScattersPerBucket) {
  auto j = zero3("full", {{"gather_unit", "submodule"}, {"persistence_threshold", 1e5}});
  const double h = 512, layer = 12 * h * h + 13 * h;
  j["framework"]["gradient_bucket_bytes"] = 2 * 2 * layer;  // two layers' gradients
  const auto p = lower(j);
  const auto scatters = ops_where(p.roles[0], layer_scatter);
  double bytes = 0;
  for (const auto& op : scatters) bytes += op.bytes;
  EXPECT_DOUBLE_EQ(bytes, kMicroBatches * kLayers * 2 * layer);
  // The bucket holds two layers exactly: the first is reduced when layer 1's first gradient arrives,
  // the second at the end of the pass.
  EXPECT_EQ(scatters.size(), 2u * kMicroBatches);
  for (const auto& op : scatters) EXPECT_DOUBLE_EQ(op.bytes, 2 * 2 * layer);
  // A bucket of one and a half layers: flushed inside layer 2 and inside layer 1, then the rest.
  j["framework"]["gradient_bucket_bytes"] = 1.5 * 2 * layer;
  const auto uneven = ops_where(lower(j).roles[0], layer_scatter);
  EXPECT_EQ(uneven.size(), 3u * kMicroBatches);
  for (const auto& op : uneven) EXPECT_LE(op.bytes, 1.5 * 2 * layer);
}

// The embeddings are sharded as the layers are: gathered before the embedding and the logits in forward
// and backward, in every micro-batch, their gradients reduce-scattered; while gathered they are the
// largest weights a rank holds when the vocabulary is large.
TEST(LowerZero3, EmbeddingsAreGatheredAndReduceScattered) {
  auto j = zero3("full", {{"gather_unit", "layer"}, {"prefetch", 1}});
  j["model"]["vocab"] = 32768;
  const auto p = lower(j);
  const auto& r = p.roles[0];
  const auto named = [](const char* n) { return [n](const pw::Op& op) { return std::string(op.name) == n; }; };
  EXPECT_EQ(count_where(r, named("zero3.embedding.all_gather")), 2 * kMicroBatches);
  EXPECT_EQ(count_where(r, named("zero3.output.all_gather")), 2 * kMicroBatches);
  EXPECT_EQ(count_where(r, [](const pw::Op& op) { return op.kind == pw::OpKind::all_reduce; }), 0);
  EXPECT_GE(count_where(r, [](const pw::Op& op) { return op.kind == pw::OpKind::reduce_scatter && op.layer < 0; }), 1);
  EXPECT_DOUBLE_EQ(r.memory.gathered_weights, 2.0 * (32768 + 64) * 512);  // word and position embeddings
}

// DeepSpeed's host synchronizes on the oldest reduction when more than max_param_reduce_events = 2 are
// recorded (stage3.py __reduce_and_partition_ipg_grads): with at most N in flight, the computation
// after the (N+1)-th reduce-scatter waits for the first; without a limit nothing waits for it before
// the optimizer step.
TEST(LowerZero3, BoundedReductionsInFlightHoldTheComputationBack) {
  auto waits_for_first = [](int limit) {
    auto j = zero3("full", {{"gather_unit", "submodule"}, {"persistence_threshold", 1e5}, {"reduce_in_flight", limit}});
    j["optimizations"] = {{"overlap_reduce_scatter", true}};
    const auto p = lower(j);
    const auto& r = p.roles[0];
    std::vector<size_t> scatters;
    for (size_t i = 0; i < r.ops.size(); ++i)
      if (layer_scatter(r.ops[i])) scatters.push_back(i);
    EXPECT_GT(scatters.size(), static_cast<size_t>(limit + 1));
    // Does any computation before the next-but-`limit` reduce-scatter wait for the first one?
    for (size_t i = scatters[0] + 1; i < scatters[static_cast<size_t>(limit) + 1]; ++i) {
      const auto& op = r.ops[i];
      if (op.stream != pw::Stream::compute) continue;
      for (uint32_t d = 0; d < op.dep_count; ++d)
        if (r.deps_of(op)[d] == scatters[0]) return true;
    }
    return false;
  };
  EXPECT_TRUE(waits_for_first(3));
  EXPECT_TRUE(waits_for_first(1));
  EXPECT_FALSE(waits_for_first(0));
}

// DeepSpeed <= v0.5: one all-gather per parameter after a torch.cuda.synchronize(); modelled as the
// call's host work on the compute stream before a blocking gather.
TEST(LowerZero3, SynchronisingStackGathersEachParameterAfterHostWork) {
  const auto p = lower(zero3(
      "full",
      {{"gather_unit", "submodule"}, {"prefetch", 0}, {"synchronize_per_gather", true}, {"call_overhead_s", 1e-4}}));
  const auto& r = p.roles[0];
  // Every parameter (threshold 0 here): 12 per layer per pass.
  EXPECT_EQ(count_where(r, layer_gather), kLayers * kMicroBatches * 2 * 12);
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const auto& op = r.ops[i];
    if (!layer_gather(op)) continue;
    ASSERT_EQ(op.dep_count, 1u);
    const auto& host = r.ops[r.deps[op.dep_begin]];
    EXPECT_EQ(host.stream, pw::Stream::compute);
    EXPECT_DOUBLE_EQ(host.host_seconds, 1e-4);
  }
}

// Prefetch depth N: before a unit computes, the gathers of the next N units of the pass are issued,
// each after the computation preceding the unit (so it overlaps the unit's computation).
TEST(LowerZero3, PrefetchIssuesGathersUnitsAhead) {
  for (int depth : {0, 1, 2, 3}) {
    const auto p = lower(zero3("none", {{"gather_unit", "layer"}, {"prefetch", depth}}));
    const auto& r = p.roles[0];
    // Op index of the first forward GEMM of layer 0 in micro-batch 0, and of each layer's gather.
    size_t first_gemm = 0;
    std::map<int, size_t> gather_at;
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const auto& op = r.ops[i];
      if (op.micro_batch != 0 || op.phase != pw::Phase::forward) continue;
      if (layer_gather(op) && !gather_at.count(op.layer)) gather_at[op.layer] = i;
      if (op.kind == pw::OpKind::gemm && op.layer == 0 && first_gemm == 0) first_gemm = i;
    }
    for (int l = 0; l < kLayers; ++l) {
      ASSERT_TRUE(gather_at.count(l));
      EXPECT_EQ(gather_at[l] < first_gemm, l <= depth) << "depth " << depth << " layer " << l;
    }
    // The prefetched gathers wait only for the computation before layer 0, not for layer 0 itself.
    if (depth > 0) {
      const auto& g = r.ops[gather_at[1]];
      ASSERT_EQ(g.dep_count, 1u);
      EXPECT_LT(r.deps[g.dep_begin], first_gemm);
    }
    // Memory: the unit computing and the `depth` gathered ahead.
    const double layer_bytes = 2 * (12 * 512.0 * 512 + 13 * 512);
    EXPECT_DOUBLE_EQ(r.memory.gathered_weights, (1 + depth) * layer_bytes);
  }
}

// The defaults (generic profile) lower ZeRO-3 as before: a layer per gather, one ahead with OAG.
TEST(LowerZero3, DefaultsFollowOverlapAllGather) {
  auto j = zero3("full", nlohmann::json::object());
  j["framework"].erase("sharding");
  const auto plain = lower(j);
  j["optimizations"] = {{"overlap_all_gather", true}};
  const auto oag = lower(j);
  auto explicit_one = zero3("full", {{"prefetch", 1}});
  const auto one = lower(explicit_one);
  ASSERT_EQ(oag.roles[0].ops.size(), one.roles[0].ops.size());
  for (size_t i = 0; i < oag.roles[0].ops.size(); ++i) {
    EXPECT_EQ(std::string(oag.roles[0].ops[i].name), one.roles[0].ops[i].name);
    EXPECT_EQ(oag.roles[0].ops[i].dep_count, one.roles[0].ops[i].dep_count);
  }
  EXPECT_EQ(count_where(plain.roles[0], layer_gather), kLayers * kMicroBatches * 2);
  EXPECT_DOUBLE_EQ(oag.roles[0].memory.gathered_weights, 2 * plain.roles[0].memory.gathered_weights);
}

// What `paratwin lower` lists: one row per (kind, name, phase, size, group), layers as ranges, counts
// per iteration.
TEST(LowerZero3, ListingGroupsTheStacksGathersAndScatters) {
  const auto p = lower(zero3("full", {{"gather_unit", "submodule"}, {"persistence_threshold", 1e5}}));
  const auto rows = reports::list_collectives(p, p.roles[0], false);
  int64_t gathers = 0, embedding_gathers = 0;
  bool qkv = false;
  for (const auto& c : rows) {
    const bool embedding = c.name == "zero3.embedding.all_gather" || c.name == "zero3.output.all_gather";
    if (c.kind == pw::OpKind::all_gather && embedding) embedding_gathers += c.count;
    if (c.kind == pw::OpKind::all_gather && c.layers != "-" && !embedding) gathers += c.count;
    if (c.name == "zero3.qkv.all_gather" && c.phase == pw::Phase::forward) {
      qkv = true;
      EXPECT_EQ(c.layers, "0-3");
      EXPECT_EQ(c.count, kLayers * kMicroBatches);
      EXPECT_DOUBLE_EQ(c.bytes, 2 * 3 * 512.0 * 512);
      EXPECT_EQ(c.group_size, 4);
    }
  }
  EXPECT_TRUE(qkv);
  EXPECT_EQ(gathers, kLayers * kMicroBatches * 2 * 4);
  // The input and the output embedding, each before its forward and its backward, per micro-batch.
  EXPECT_EQ(embedding_gathers, 2 * 2 * kMicroBatches);
  const auto text = reports::format_collective_listing(p, -1, false);
  EXPECT_NE(text.find("all-gathers and reduce-scatters of sharded weights and gradients in stage 0"),
            std::string::npos);
}

// Under full recomputation the backward prefetch reaches across the recomputation (FSDP's pre-backward
// hook on a unit runs before the checkpointed block inside it is recomputed, and issues the next unit's
// gather; DeepSpeed's trace walks into the next layer's recomputed modules): the gather for layer 1's
// recompute is issued during layer 2's recompute, before layer 2's backward, and without prefetch only
// when layer 1's recompute needs it. The number of gathers does not change.
TEST(LowerZero3, FullRecomputeGathersArePrefetchedAcrossLayers) {
  const auto index = [](const pw::Role& r, auto&& pred) {
    for (size_t i = 0; i < r.ops.size(); ++i)
      if (pred(r.ops[i])) return static_cast<long>(i);
    return -1L;
  };
  for (const nlohmann::json& unit : {nlohmann::json{{"gather_unit", "layer"}},
                                     nlohmann::json{{"gather_unit", "submodule"}, {"persistence_threshold", 1e5}}}) {
    for (const int ahead : {0, 1}) {
      auto sharding = unit;
      sharding["prefetch"] = ahead;
      const auto p = lower(zero3("full", sharding));
      const auto& r = p.roles[0];
      const long gather = index(r, [](const pw::Op& op) {
        return layer_gather(op) && op.layer == 1 && op.micro_batch == 3 && op.phase == pw::Phase::recompute;
      });
      const long backward2 = index(r, [](const pw::Op& op) {
        return op.stream == pw::Stream::compute && op.layer == 2 && op.micro_batch == 3 &&
               op.phase == pw::Phase::backward;
      });
      const long recompute1 = index(r, [](const pw::Op& op) {
        return op.stream == pw::Stream::compute && op.layer == 1 && op.micro_batch == 3 &&
               op.phase == pw::Phase::recompute && op.kind == pw::OpKind::gemm;
      });
      ASSERT_GE(gather, 0);
      ASSERT_GE(backward2, 0);
      if (ahead > 0)
        EXPECT_LT(gather, backward2) << unit.dump();
      else
        EXPECT_GT(gather, backward2) << unit.dump();
      EXPECT_LT(gather, recompute1) << unit.dump();
      const int per_layer = unit["gather_unit"] == "layer" ? 1 : 4;
      EXPECT_EQ(count_where(r, layer_gather), kLayers * kMicroBatches * 2 * per_layer) << unit.dump();
    }
  }
}

// Hybrid sharding (FSDP HYBRID_SHARD, framework.sharding.shard_group): ZeRO-3 inside shard groups of
// consecutive data-parallel ranks ("data"), replicated across them ("replica"): the gathers and
// reduce-scatters stay inside the shard group, each reduce-scatter's shard is then all-reduced across
// the replicas (torch/distributed/fsdp/_runtime_utils.py _reduce_grad, v2.1), and the weights, gradients
// and optimizer state are sharded over the shard group only.
TEST(LowerZero3, HybridShardingGathersInsideTheShardGroupAndAllReducesAcrossReplicas) {
  const nlohmann::json fsdp = {{"gather_unit", "layer"}, {"prefetch", 1}};
  auto hybrid = fsdp;
  hybrid["shard_group"] = 2;
  const auto full = lower(zero3("none", fsdp));
  auto j = zero3("none", hybrid);
  j["placement"] = {{"order", {"data", "replica"}}};
  const auto p = lower(j);
  const auto& r = p.roles[0];
  ASSERT_EQ(p.grid.axis_size("data"), 2);
  ASSERT_EQ(p.grid.axis_size("replica"), 2);
  const auto in_shard_group = [&](const pw::Op& op) { return op.group == p.grid.mask("data"); };
  for (const auto& op : ops_where(r, layer_gather)) EXPECT_TRUE(in_shard_group(op)) << op.name;
  const auto scatters = ops_where(r, layer_scatter);
  for (const auto& op : scatters) EXPECT_TRUE(in_shard_group(op)) << op.name;
  const auto replica = ops_where(
      r, [&](const pw::Op& op) { return op.kind == pw::OpKind::all_reduce && op.group == p.grid.mask("replica"); });
  // One all-reduce per reduce-scatter (the layers' and the embeddings'), of its shard.
  const auto all_scatters = ops_where(
      r, [](const pw::Op& op) { return op.kind == pw::OpKind::reduce_scatter && op.stream != pw::Stream::tensor; });
  ASSERT_EQ(replica.size(), all_scatters.size());
  EXPECT_EQ(scatters.size(), static_cast<size_t>(kLayers * kMicroBatches));
  for (size_t i = 0; i < scatters.size(); ++i) EXPECT_DOUBLE_EQ(replica[i].bytes, scatters[i].bytes / 2) << i;
  // The same number of gathers as FULL_SHARD, each of the same size.
  EXPECT_EQ(count_where(r, layer_gather), count_where(full.roles[0], layer_gather));
  // Model state sharded over 2 ranks instead of 4.
  EXPECT_DOUBLE_EQ(r.memory.weights, 2 * full.roles[0].memory.weights);
  EXPECT_DOUBLE_EQ(r.memory.optimizer, 2 * full.roles[0].memory.optimizer);
}

TEST(LowerZero3, HybridShardingRefusesWhatItDoesNotModel) {
  const auto refused = [](nlohmann::json j, const std::string& what) {
    try {
      (void)paratwin::test::workload(j);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const pw::WorkloadError& e) {
      EXPECT_NE(std::string(e.what()).find("framework.sharding.shard_group"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(zero3("none", {{"shard_group", 3}}), "does not divide parallelism.data.size = 4");
  auto zero1 = zero3("none", {{"shard_group", 2}});
  zero1["parallelism"]["data"]["zero"] = 1;
  refused(zero1, "needs parallelism.data.zero = 3");
}
