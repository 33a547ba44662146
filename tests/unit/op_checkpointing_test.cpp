// TorchTitan's per-op selective checkpointing (training.checkpointing "selective_op"), the stack's
// element-wise traffic (framework.elementwise_traffic) and FSDP2's copies around its collectives
// (sharding.copy_out, sharding.copy_in), each against the code they are read from: torchtitan/parallelisms/
// parallelize_llama.py _apply_ac_to_transformer_block and torchtitan/models/ at commit 9dec370,
// torch/distributed/_composable/fsdp/_fsdp_collectives.py of PyTorch 2.4-2.6.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

constexpr int kLayers = 4, kMicroBatches = 2;
constexpr double kHidden = 256, kFfn = 768, kKvWidth = 64, kSeq = 64;  // kv width: 2 heads of 32

// A small Llama: gated MLP, RMSNorm, rotary embeddings, 2 key/value heads of 8, flash attention.
nlohmann::json llama(const std::string& checkpointing = "selective_op") {
  auto j = paratwin::test::base_gpt();
  j["model"] = {{"layers", kLayers}, {"hidden", 256},     {"heads", 8},         {"kv_heads", 2},
                {"ffn_hidden", 768}, {"seq_len", 64},     {"vocab", 512},       {"attention", "flash"},
                {"mlp", "swiglu"},   {"norm", "rmsnorm"}, {"position", "rope"}, {"bias", false}};
  j["training"]["global_batch"] = kMicroBatches;
  j["training"]["checkpointing"] = checkpointing;
  return j;
}

double gemm_flops(const pw::Op& op) {
  return 2.0 * static_cast<double>(op.gemm.m) * static_cast<double>(op.gemm.n) * static_cast<double>(op.gemm.k) *
         static_cast<double>(op.gemm.batch);
}

bool layer_gather(const pw::Op& op) {
  return op.kind == pw::OpKind::all_gather && op.stream == pw::Stream::shard && op.layer >= 0;
}

}  // namespace

// The 2nd, 4th and 6th matmul of each block (K, the output projection, W3) are recomputed, with every
// element-wise op, once per layer per micro-batch; the recomputed FLOPs are what iteration_flops()
// adds to the model's.
TEST(SelectiveOp, RecomputesEveryOtherMatmulOfABlock) {
  const auto w = paratwin::test::workload(llama());
  const auto p = pw::lower(w);
  const auto& r = p.roles[0];
  std::map<std::string, int> gemms;
  std::set<std::string> elementwise;
  double recomputed = 0;
  for (const auto& op : r.ops) {
    if (op.phase != pw::Phase::recompute) continue;
    if (op.kind == pw::OpKind::gemm) {
      ++gemms[op.name];
      recomputed += gemm_flops(op);
    }
    if (op.kind == pw::OpKind::elementwise) elementwise.insert(op.name);
  }
  const int passes = kLayers * kMicroBatches;
  EXPECT_EQ(gemms, (std::map<std::string, int>{{"k", passes}, {"proj", passes}, {"fc1.value", passes}}));
  EXPECT_EQ(elementwise,
            (std::set<std::string>{"ln1", "ln2", "rope", "swiglu", "dropout_residual1", "dropout_residual2"}));
  const double tokens = kSeq * kMicroBatches;
  EXPECT_DOUBLE_EQ(recomputed, kLayers * 2.0 * tokens * kHidden * (kKvWidth + kHidden + kFfn));
  const auto f = pw::iteration_flops(w);
  EXPECT_DOUBLE_EQ(f.hardware - f.model, recomputed);
  // Without a gate the 6th matmul is W2.
  auto gelu = llama();
  gelu["model"]["mlp"] = "gelu";
  const auto q = pw::lower(paratwin::test::workload(gelu));
  std::set<std::string> names;
  for (const auto& op : q.roles[0].ops)
    if (op.phase == pw::Phase::recompute && op.kind == pw::OpKind::gemm) names.insert(op.name);
  EXPECT_EQ(names, (std::set<std::string>{"k", "proj", "fc2"}));
}

// Stashed per layer (16-bit, in s·b·h units): the block's input, Q (h), V (kv width), the attention
// output (h), W1's output (ffn) and W2's (h); under sequence parallelism the input and the two
// reduce-scatters' outputs and the matmuls' outputs split over the tensor ranks, W2's partial sum not.
TEST(SelectiveOp, StashesTheOutputsThePolicySaves) {
  const auto w = paratwin::test::workload(llama());
  const auto a = pw::layer_activations(w, false);
  const double sbh = kSeq * 1 * kHidden;
  EXPECT_DOUBLE_EQ(a.stash, (2 + 2 + 2 * kKvWidth / kHidden + 2 + 2 * kFfn / kHidden + 2) * sbh);
  auto full = llama("none");
  EXPECT_DOUBLE_EQ(a.working, pw::layer_activations(paratwin::test::workload(full), false).stash);
  auto tp = llama();
  tp["parallelism"] = {{"tensor", {{"mode", "megatron"}, {"size", 2}}}, {"sequence_parallel", true}};
  const auto b = pw::layer_activations(paratwin::test::workload(tp), false);
  EXPECT_DOUBLE_EQ(b.stash, (6.0 / 2 + (2 + 2 * kKvWidth / kHidden + 2 + 2 * kFfn / kHidden) / 2 + 2) * sbh);
}

// Under FSDP the unit's backward pre-hook gathers it before the recomputation: one gather per block in
// forward and one in backward, none in the recompute phase, and the backward's comes first.
TEST(SelectiveOp, FsdpGathersEachBlockOncePerPass) {
  auto j = llama();
  j["training"]["global_batch"] = kMicroBatches * 4;
  j["parallelism"] = {{"data", {{"size", 4}, {"zero", 3}}}};
  j["framework"] = {{"profile", "fsdp2"}};
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto& r = p.roles[0];
  EXPECT_EQ(count_where(r, layer_gather), kLayers * kMicroBatches * 2);
  EXPECT_EQ(count_where(r, [](const pw::Op& op) { return layer_gather(op) && op.phase == pw::Phase::recompute; }), 0);
  // Layer 2 of micro-batch 1: its backward gather (issued ahead or not) precedes its recomputed K.
  size_t gather = SIZE_MAX, k = SIZE_MAX;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const auto& op = r.ops[i];
    if (op.layer != 2 || op.micro_batch != 1) continue;
    if (layer_gather(op) && op.phase == pw::Phase::backward && gather == SIZE_MAX) gather = i;
    if (op.kind == pw::OpKind::gemm && op.phase == pw::Phase::recompute && std::string(op.name) == "k") k = i;
  }
  ASSERT_NE(gather, SIZE_MAX);
  ASSERT_NE(k, SIZE_MAX);
  EXPECT_LT(gather, k);
}

TEST(SelectiveOp, RefusedWhereThePolicyIsNotModelledOrTheStackLacksIt) {
  auto moe = llama();
  moe["model"]["moe"] = {{"experts", 4}, {"top_k", 2}};
  EXPECT_THROW(paratwin::test::workload(moe), pw::WorkloadError);
  auto unfused = llama();
  unfused["model"]["attention"] = "unfused";
  try {
    paratwin::test::workload(unfused);
    FAIL() << "unfused attention accepted";
  } catch (const pw::WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("training.checkpointing"), std::string::npos) << e.what();
  }
  auto mcore = llama();
  mcore["framework"] = {{"profile", "megatron-core"}};
  try {
    paratwin::test::workload(mcore);
    FAIL() << "megatron-core accepted selective_op";
  } catch (const pw::WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("has no per-op selective checkpointing"), std::string::npos) << e.what();
  }
}

// Eager PyTorch's RMSNorm moves 36 bytes per element forward and 92 backward where the fused kernel
// moves 4 and 6 (the fsdp2 profile's factors); a workload can set them back to 1 (torch.compile), and
// a LayerNorm is not affected.
TEST(ElementwiseTraffic, EagerRmsNormMovesWhatItsOpsMove) {
  auto bytes_of = [](const nlohmann::json& j, const std::string& name) {
    const auto p = pw::lower(paratwin::test::workload(j));
    for (const auto& op : p.roles[0].ops)
      if (op.name == name && op.phase == pw::Phase::forward) return op.bytes;
    return -1.0;
  };
  auto generic = llama("full");
  auto eager = generic;
  eager["framework"] = {{"profile", "fsdp2"}};
  EXPECT_NEAR(bytes_of(eager, "ln1") / bytes_of(generic, "ln1"), 36.0 / 4, 1e-9);
  EXPECT_NEAR(bytes_of(eager, "rope") / bytes_of(generic, "rope"), 20.0 / 4, 1e-9);
  EXPECT_NEAR(bytes_of(eager, "swiglu") / bytes_of(generic, "swiglu"), 1.667, 1e-9);
  EXPECT_NEAR(bytes_of(eager, "cross_entropy") / bytes_of(generic, "cross_entropy"), 18.0 / 8, 1e-9);
  auto compiled = eager;
  compiled["framework"]["elementwise_traffic"] = {{"rmsnorm", 1}};
  EXPECT_DOUBLE_EQ(bytes_of(compiled, "ln1"), bytes_of(generic, "ln1"));
  auto layernorm = eager;
  layernorm["model"]["norm"] = "layernorm";
  auto layernorm_generic = generic;
  layernorm_generic["model"]["norm"] = "layernorm";
  EXPECT_DOUBLE_EQ(bytes_of(layernorm, "ln1"), bytes_of(layernorm_generic, "ln1"));
}

// FSDP2 copies every gathered unit out (read and write its bytes) and every unit's gradients into the
// reduce-scatter's input (16-bit read, the reduction dtype written); the reduce-scatter moves the
// reduction dtype.
TEST(CopyInOut, OneCopyPerGatherAndPerReduceScatter) {
  auto j = llama();
  j["training"]["global_batch"] = kMicroBatches * 4;
  j["training"]["gradient_reduce_dtype"] = "fp32";
  j["parallelism"] = {{"data", {{"size", 4}, {"zero", 3}}}};
  j["framework"] = {{"profile", "fsdp2"}};
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto& r = p.roles[0];
  const auto named = [](const char* n) { return [n](const pw::Op& op) { return std::string(op.name) == n; }; };
  const auto gathers = ops_where(r, layer_gather);
  const auto outs = ops_where(r, named("zero3.copy_out"));
  ASSERT_EQ(outs.size(), gathers.size());
  for (const auto& op : outs) EXPECT_DOUBLE_EQ(op.bytes, 2 * gathers[0].bytes);
  const auto scatters = ops_where(r, named("zero3.reduce_scatter"));
  const auto ins = ops_where(r, named("zero3.copy_in"));
  ASSERT_EQ(ins.size(), scatters.size());
  ASSERT_FALSE(ins.empty());
  // The layer's parameters: gathered in bf16, copied in as 2 + 4 bytes each, reduced in fp32.
  EXPECT_DOUBLE_EQ(ins[0].bytes, gathers[0].bytes / 2 * 6);
  EXPECT_DOUBLE_EQ(scatters[0].bytes, gathers[0].bytes * 2);
  auto generic = j;
  generic["framework"] = {{"profile", "generic"}};
  EXPECT_EQ(count_where(pw::lower(paratwin::test::workload(generic)).roles[0], named("zero3.copy_out")), 0);
  // DeepSpeed copies a fetch's parameters out of its flat buffer (torch.cat per parameter) only when it
  // gathered several; a single parameter is gathered into its own buffer (partition_parameters.py
  // all_gather_coalesced, len(params) == 1). It reduces gradients in place. Every parameter sharded
  // (no persistence threshold): Llama's modules hold one weight each, so nothing is copied; with biases
  // and LayerNorms every module's fetch holds two parameters, and each is copied out.
  auto deepspeed = j;
  deepspeed["training"]["checkpointing"] = "full";
  deepspeed["framework"] = {{"profile", "deepspeed"}, {"sharding", {{"persistence_threshold", 0}}}};
  const auto d = pw::lower(paratwin::test::workload(deepspeed));
  ASSERT_GT(count_where(d.roles[0], layer_gather), 0);
  EXPECT_EQ(count_where(d.roles[0], named("zero3.copy_out")), 0);
  auto biased = deepspeed;
  biased["model"]["bias"] = true;
  biased["model"]["norm"] = "layernorm";
  const auto b = pw::lower(paratwin::test::workload(biased));
  EXPECT_EQ(count_where(b.roles[0], named("zero3.copy_out")), count_where(b.roles[0], layer_gather));
  // Before each reduce-scatter its bucket is divided by the group's size in place (read and written).
  const auto buckets = ops_where(d.roles[0], [](const pw::Op& op) {
    return op.kind == pw::OpKind::reduce_scatter && op.stream == pw::Stream::shard && op.layer >= 0;
  });
  const auto divides = ops_where(d.roles[0], named("zero3.bucket.predivide"));
  ASSERT_FALSE(buckets.empty());
  ASSERT_EQ(divides.size(), buckets.size());
  for (size_t i = 0; i < divides.size(); ++i) EXPECT_DOUBLE_EQ(divides[i].bytes, 2 * buckets[i].bytes);
  EXPECT_EQ(count_where(d.roles[0], named("zero3.copy_in")), 0);
}
