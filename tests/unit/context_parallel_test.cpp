// Context parallelism as Megatron-Core runs it through Transformer Engine: the sequence split over the
// context ranks, keys and values exchanged around a ring (p2p) block by block beside the attention
// kernel, or heads exchanged for the sequence (all_to_all), the weights' gradients reduced over data ×
// context ranks.
#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

// A Llama-shaped model: 8 query heads of 32, 4 key/value heads, flash attention; tensor 2 × context cp ×
// data 2.
nlohmann::json cp_llama(int64_t cp, const char* comm = "p2p") {
  auto j = paratwin::test::base_gpt();
  j["model"] = {{"layers", 2},       {"hidden", 256},      {"heads", 8},          {"kv_heads", 4},
                {"ffn_hidden", 704}, {"seq_len", 64},      {"vocab", 512},        {"mlp", "swiglu"},
                {"norm", "rmsnorm"}, {"position", "rope"}, {"attention", "flash"}};
  j["training"] = {{"global_batch", 4}, {"micro_batch", 1}, {"dtype", "bf16"}, {"checkpointing", "none"}};
  j["parallelism"] = {{"data", {{"size", 2}}},
                      {"tensor", {{"mode", "megatron"}, {"size", 2}}},
                      {"context", {{"size", cp}, {"comm", comm}}}};
  return j;
}

double total(const pw::Role& r, const std::string& name) {
  double sum = 0;
  for (const auto& op : r.ops)
    if (name == op.name) sum += op.bytes;
  return sum;
}

}  // namespace

TEST(ContextParallel, RingExchangesKeysAndValuesBesideTheAttentionBlocks) {
  const auto w = paratwin::test::workload(cp_llama(4));
  const auto p = pw::lower(w);
  ASSERT_EQ(p.grid.axis_size("context"), 4);
  EXPECT_EQ(w.total_ranks(), 2 * 4 * 2);
  const auto& r = p.roles[0];
  const auto context = p.grid.mask("context");
  // Each rank computes its 64/4 = 16 tokens: the QKV GEMM's rows, (256 + 2·4·32)/2 columns.
  const auto qkv = ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "qkv"; }).front();
  EXPECT_EQ(qkv.gemm.m, 16);
  EXPECT_EQ(qkv.gemm.n, (256 + 2 * 4 * 32) / 2);
  // Per layer and micro-batch: 4 attention blocks of 64/4 keys forward (5 products each backward), 3
  // ring steps forward and 3 backward, on the context stream over the context group.
  const int fwd_blocks = count_where(r, [](const pw::Op& op) { return std::string(op.name) == "attn.flash"; });
  EXPECT_EQ(fwd_blocks, 4 * 2 * 2);
  const auto ring = ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "cp.kv.ring"; });
  ASSERT_EQ(ring.size(), 3u * 2 * 2);
  // One step moves this rank's block, K and V of 16 tokens for 4/2 key/value heads of 32 in bf16,
  // written as an all-gather over 4 ranks that moves that much per rank: 4/3 of it in all.
  const double block = 2.0 * 16 * 2 * 32 * 2;
  for (const auto& op : ring) {
    EXPECT_EQ(op.group, context);
    EXPECT_EQ(op.stream, pw::Stream::context);
    EXPECT_DOUBLE_EQ(op.bytes, block * 4 / 3);
  }
  // Backward steps carry the keys and values and the gradients of the block just done.
  EXPECT_DOUBLE_EQ(total(r, "cp.kv_dkv.ring"), 2 * total(r, "cp.kv.ring"));
  // The weights are replicated over the context ranks: their gradients are reduced over data x context.
  const auto sync = ops_where(r, [](const pw::Op& op) { return op.phase == pw::Phase::grad_sync; });
  ASSERT_FALSE(sync.empty());
  for (const auto& op : sync) EXPECT_EQ(op.group, p.grid.mask("data") | context);
}

TEST(ContextParallel, SplittingTheSequenceKeepsTheIterationsWork) {
  // The GEMMs and attention products of all ranks add up to the same FLOPs with and without context
  // parallelism (causal blocks of 64/cp keys, half visited, against the whole causal sequence).
  for (const char* comm : {"p2p", "all_gather", "all_to_all"}) {
    const double one = paratwin::test::gemm_flops_all_ranks(pw::lower(paratwin::test::workload(cp_llama(1))));
    const double two = paratwin::test::gemm_flops_all_ranks(pw::lower(paratwin::test::workload(cp_llama(2, comm))));
    EXPECT_NEAR(two / one, 1.0, 1e-12) << comm;
  }
}

TEST(ContextParallel, UlyssesExchangesHeadsForTheSequence) {
  const auto p = pw::lower(paratwin::test::workload(cp_llama(2, "all_to_all")));
  const auto& r = p.roles[0];
  // Forward: Q, K, V of this rank's 32 tokens to the heads' owners, and the output back; backward the
  // reverse. Attention then runs on the whole 64-token sequence for 4/2 heads.
  EXPECT_DOUBLE_EQ(total(r, "cp.qkv.all_to_all"), 2 * 2 * 32.0 * (256 + 2 * 4 * 32) / 2 * 2);
  EXPECT_DOUBLE_EQ(total(r, "cp.out.all_to_all"), 2 * 2 * 32.0 * 256 / 2 * 2);
  const auto flash = ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "attn.flash"; }).front();
  EXPECT_EQ(flash.gemm.m, 64);
  EXPECT_EQ(flash.gemm.batch, 2 * 2);  // two products for each of 2 heads
}

TEST(ContextParallel, ActivationsShrinkWithTheSequenceShare) {
  const auto one = paratwin::test::workload(cp_llama(1)), four = paratwin::test::workload(cp_llama(4));
  EXPECT_DOUBLE_EQ(pw::layer_activations(four, false).stash * 4, pw::layer_activations(one, false).stash);
}

TEST(ContextParallel, RulesNameWhatIsWrong) {
  auto rejects = [](nlohmann::json j, const std::string& path, const std::string& needle) {
    try {
      paratwin::test::workload(j);
    } catch (const pw::WorkloadError& e) {
      EXPECT_EQ(e.path(), path);
      EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
      return;
    }
    ADD_FAILURE() << "accepted " << j.dump();
  };
  auto j = cp_llama(2);
  j["model"]["attention"] = "unfused";
  rejects(j, "parallelism.context.size", "needs model.attention \"flash\"");
  j = cp_llama(4);
  j["model"]["seq_len"] = 36;  // not in 2·4 chunks
  rejects(j, "2 × parallelism.context.size", "does not divide model.seq_len = 36");
  j = cp_llama(4, "all_to_all");  // 8/2 query heads per tensor rank, but 4/2 key/value heads
  rejects(j, "parallelism.context.size", "does not divide model.kv_heads / tensor size = 2");
  j = cp_llama(2);
  j["parallelism"]["tensor"] = {{"mode", "none"}};
  j["framework"] = {{"profile", "deepspeed"}};
  rejects(j, "parallelism.context.size", "has no context parallelism");
}
