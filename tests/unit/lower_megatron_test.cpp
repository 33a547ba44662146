// Megatron 1-D tensor parallelism ([narayanan2021megatron] §2.3, the f and g operators), sequence parallelism,
// pipeline messages (with the scatter/gather optimisation), ZeRO stages and data parallelism.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

nlohmann::json megatron(int64_t t, int64_t p = 1, int64_t d = 1) {
  auto j = paratwin::test::base_gpt();
  j["training"]["global_batch"] = 8 * d;
  j["parallelism"] = {{"data", {{"size", d}}},
                      {"tensor", {{"mode", "megatron"}, {"size", t}}},
                      {"pipeline", {{"stages", p}, {"schedule", "1f1b"}}}};
  return j;
}

int count(const pw::Role& r, pw::OpKind kind, pw::Phase ph, int layer, int mb = 0) {
  return count_where(r, [&](const pw::Op& op) {
    return op.kind == kind && op.phase == ph && op.layer == layer && op.micro_batch == mb;
  });
}

}  // namespace

TEST(LowerMegatron, TwoAllReducesPerLayerPerPass) {
  const auto p = pw::lower(paratwin::test::workload(megatron(4)));
  const auto& r = p.roles[0];
  for (auto ph : {pw::Phase::forward, pw::Phase::recompute, pw::Phase::backward})
    EXPECT_EQ(count(r, pw::OpKind::all_reduce, ph, 2), 2) << pw::to_string(ph);
  for (const auto& op :
       ops_where(r, [](const pw::Op& op) { return op.layer == 2 && op.kind == pw::OpKind::all_reduce; })) {
    EXPECT_EQ(op.group, p.grid.mask("tensor"));
    EXPECT_DOUBLE_EQ(op.bytes, 64.0 * 256 * 2);  // s·b·h half-precision values
  }
  // GEMMs split as Megatron splits them: QKV and fc1 by columns, proj and fc2 by rows.
  const auto qkv = ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "qkv"; }).front();
  EXPECT_EQ(qkv.gemm.n, 3 * 256 / 4);
  const auto fc2 = ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "fc2"; }).front();
  EXPECT_EQ(fc2.gemm.k, 4 * 256 / 4);
}

TEST(LowerMegatron, SequenceParallelSwapsAllReduceForGatherAndScatter) {
  auto j = megatron(4);
  j["parallelism"]["sequence_parallel"] = true;
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto& r = p.roles[0];
  for (auto ph : {pw::Phase::forward, pw::Phase::backward}) {
    EXPECT_EQ(count(r, pw::OpKind::all_reduce, ph, 2), 0);
    EXPECT_EQ(count(r, pw::OpKind::reduce_scatter, ph, 2), 2);
  }
  EXPECT_EQ(count(r, pw::OpKind::all_gather, pw::Phase::forward, 2), 2);
  // Backward gathers each block's output gradient, and again the layer norms' outputs that the QKV
  // and fc1 weight gradients need (only the shards were kept), the latter beside the input-gradient GEMMs.
  EXPECT_EQ(count(r, pw::OpKind::all_gather, pw::Phase::backward, 2), 4);
  const auto regathers = ops_where(r, [](const pw::Op& op) {
    const std::string name = op.name;
    return op.layer == 2 && op.micro_batch == 0 && (name == "ln1.bwd.all_gather" || name == "ln2.bwd.all_gather");
  });
  ASSERT_EQ(regathers.size(), 2u);
  for (const auto& op : regathers) {
    EXPECT_NE(op.stream, pw::Stream::compute);
    EXPECT_DOUBLE_EQ(op.bytes, 64.0 * 256 * 2);  // the whole s·b·h, gathered
  }
}

TEST(LowerMegatron, PipelineMessagesMatchAndScatterGatherDividesThem) {
  auto j = megatron(2, 4);
  j["training"]["global_batch"] = 8;
  const auto plain = pw::lower(paratwin::test::workload(j));
  j["optimizations"] = {{"scatter_gather", true}};
  const auto sg = pw::lower(paratwin::test::workload(j));
  auto sends = [](const pw::Role& r) {
    return ops_where(r, [](const pw::Op& op) { return op.kind == pw::OpKind::send; });
  };
  // Stage 1 sends every micro-batch's activation forward and its gradient backward.
  ASSERT_EQ(sends(plain.roles[1]).size(), 16u);
  EXPECT_EQ(sends(plain.roles[0]).size(), 8u);
  EXPECT_EQ(sends(plain.roles[3]).size(), 8u);
  EXPECT_DOUBLE_EQ(sends(plain.roles[1]).front().bytes, 64.0 * 256 * 2);
  EXPECT_DOUBLE_EQ(sends(sg.roles[1]).front().bytes, 64.0 * 256 * 2 / 2);
  // Each received message is all-gathered across the tensor group.
  EXPECT_EQ(count_where(sg.roles[1],
                        [](const pw::Op& op) {
                          return std::string(op.name).rfind("recv.", 0) == 0 && op.kind == pw::OpKind::all_gather;
                        }),
            16);
}

TEST(LowerMegatron, LayersSplitEvenlyOverStagesAndChunks) {
  auto j = megatron(1, 2);
  j["model"]["layers"] = 8;
  j["parallelism"]["pipeline"] = {{"stages", 2}, {"schedule", "interleaved"}, {"chunks", 2}};
  const auto p = pw::lower(paratwin::test::workload(j));
  auto layers_of = [](const pw::Role& r) {
    std::set<int> s;
    for (const auto& op : r.ops)
      if (op.kind == pw::OpKind::gemm && op.layer >= 0) s.insert(op.layer);
    return s;
  };
  EXPECT_EQ(layers_of(p.roles[0]), (std::set<int>{0, 1, 4, 5}));
  EXPECT_EQ(layers_of(p.roles[1]), (std::set<int>{2, 3, 6, 7}));
}

TEST(LowerMegatron, ZeroStagesChangeGradientSynchronisation) {
  auto grad_ops = [](int zero) {
    auto j = megatron(1, 1, 4);
    j["parallelism"]["data"]["zero"] = zero;
    const auto p = pw::lower(paratwin::test::workload(j));
    std::map<pw::OpKind, int> kinds;
    for (const auto& op : p.roles[0].ops)
      if (pw::is_collective(op.kind) && op.group == p.grid.mask("data")) ++kinds[op.kind];
    return kinds;
  };
  // 4 layers + the embedding (on one stage the tied output layer is the embedding's weight).
  EXPECT_EQ(grad_ops(0), (std::map<pw::OpKind, int>{{pw::OpKind::all_reduce, 5}}));
  EXPECT_EQ(grad_ops(1), (std::map<pw::OpKind, int>{{pw::OpKind::reduce_scatter, 5}, {pw::OpKind::all_gather, 5}}));
  // ZeRO-3: every micro-batch gathers each layer in forward and again in the recompute pass (the
  // backward uses the recompute's copy); gradients are reduce-scattered per layer per micro-batch. The
  // embeddings are sharded too: gathered before the embedding and the logits, forward and backward, in
  // every micro-batch, and their (tied) gradient reduce-scattered once, with the unit's reduction.
  const auto z3 = grad_ops(3);
  EXPECT_EQ(z3.at(pw::OpKind::reduce_scatter), 4 * 8 + 1);  // 4 layers × 8 micro-batches, the embeddings
  EXPECT_EQ(z3.at(pw::OpKind::all_gather), 4 * 8 * 2 + 4 * 8);
  EXPECT_EQ(z3.count(pw::OpKind::all_reduce), 0u);
}

TEST(LowerMegatron, ZeroShardsMemory) {
  auto memory = [](int zero) {
    auto j = megatron(1, 1, 4);
    j["parallelism"]["data"]["zero"] = zero;
    return pw::lower(paratwin::test::workload(j)).roles[0].memory;
  };
  const auto m0 = memory(0), m1 = memory(1), m2 = memory(2), m3 = memory(3);
  EXPECT_DOUBLE_EQ(m1.optimizer, m0.optimizer / 4);
  EXPECT_DOUBLE_EQ(m1.gradients, m0.gradients);
  // ZeRO-2 also holds the bucket of full gradients it reduces: without a bucket size, the largest
  // parameter block's (a layer: 12h² + 13h parameters in bf16).
  EXPECT_DOUBLE_EQ(m2.gradients, m0.gradients / 4 + 2 * (12.0 * 256 * 256 + 13 * 256));
  EXPECT_DOUBLE_EQ(m3.weights, m0.weights / 4);
  EXPECT_GT(m3.gathered_weights, 0);
}

// Megatron-LM's attention dropout: a kernel after the fused softmax in every forward (recompute too)
// and in the backward, moving every score twice and a one-byte mask; none without dropout.
TEST(LowerMegatron, AttentionDropoutIsAKernelOfItsOwn) {
  const auto dropout_ops = [](const pw::Program& p) {
    return ops_where(p.roles[0], [](const pw::Op& op) { return std::string(op.name).rfind("attn.dropout", 0) == 0; });
  };
  auto j = megatron(4);
  EXPECT_TRUE(dropout_ops(pw::lower(paratwin::test::workload(j))).empty());
  j["model"]["attention_dropout"] = 0.1;
  const auto w = paratwin::test::workload(j);
  EXPECT_DOUBLE_EQ(w.model.attention_dropout, 0.1);
  const auto ops = dropout_ops(pw::lower(w));
  // 4 layers x (forward, recompute, backward) x 8 micro-batches.
  ASSERT_EQ(ops.size(), 4u * 3 * 8);
  const double scores = 8.0 / 4 * 64 * 64;  // heads per rank x tokens x sequence
  for (const auto& op : ops) {
    EXPECT_EQ(op.kind, pw::OpKind::elementwise);
    EXPECT_DOUBLE_EQ(op.bytes, scores * (2 * 2 + 1));
  }
  j["model"]["attention_dropout"] = 1.5;
  EXPECT_THROW(paratwin::test::workload(j), std::exception);
}

// A flash kernel instead of score GEMM, softmax (and dropout) and context GEMM: causal, so half the
// key tiles (FlashAttention-2 §3.1); its backward has five products where the forward has two.
TEST(LowerMegatron, FlashAttentionIsOneKernelOverHalfTheTiles) {
  auto j = megatron(2);
  j["model"]["attention_dropout"] = 0.1;
  const auto unfused = pw::lower(paratwin::test::workload(j));
  j["model"]["attention"] = "flash";
  const auto flash = pw::lower(paratwin::test::workload(j));
  const auto named = [](const pw::Role& r, const std::string& name, pw::Phase ph) {
    return ops_where(
        r, [&](const pw::Op& op) { return op.name == name && op.phase == ph && op.layer == 1 && op.micro_batch == 0; });
  };
  const auto& r = flash.roles[0];
  EXPECT_TRUE(named(r, "attn.softmax", pw::Phase::forward).empty());
  EXPECT_TRUE(named(r, "attn.dropout", pw::Phase::forward).empty());
  EXPECT_TRUE(named(r, "attn.score", pw::Phase::forward).empty());
  const auto fwd = named(r, "attn.flash", pw::Phase::forward);
  const auto bwd = named(r, "attn.flash.bwd", pw::Phase::backward);
  ASSERT_EQ(fwd.size(), 1u);
  ASSERT_EQ(bwd.size(), 1u);
  const auto score = named(unfused.roles[0], "attn.score", pw::Phase::forward);
  const auto context = named(unfused.roles[0], "attn.context", pw::Phase::forward);
  ASSERT_EQ(score.size(), 1u);
  ASSERT_EQ(context.size(), 1u);
  EXPECT_DOUBLE_EQ(fwd[0].flops, (score[0].flops + context[0].flops) / 2);
  EXPECT_DOUBLE_EQ(bwd[0].flops, 2.5 * fwd[0].flops);
  EXPECT_EQ(fwd[0].gemm.k, 64 / 2);  // the keys a query visits on average (seq_len 64)
}

// Megatron-LM with --bf16 all-reduces fp32 gradients (accumulate_allreduce_grads_in_fp32): twice the
// bytes of the bf16 default.
TEST(LowerMegatron, GradientsReduceInTheirOwnDtype) {
  auto j = megatron(2, 1, 2);
  const auto bf16 = pw::lower(paratwin::test::workload(j));
  j["training"]["gradient_reduce_dtype"] = "fp32";
  const auto fp32 = pw::lower(paratwin::test::workload(j));
  const auto synced = [](const pw::Program& p) {
    double bytes = 0;
    for (const auto& op : p.roles[0].ops)
      if (op.phase == pw::Phase::grad_sync && op.kind == pw::OpKind::all_reduce) bytes += op.bytes;
    return bytes;
  };
  EXPECT_GT(synced(bf16), 0);
  EXPECT_DOUBLE_EQ(synced(fp32), 2 * synced(bf16));
}

// PyTorch's composite attention (no fused kernel): the causal mask is added to the scores in a pass of
// its own before the softmax, reading and writing every score.
TEST(LowerMegatron, MathAttentionAddsTheMaskInAPassOfItsOwn) {
  auto j = megatron(2);
  j["model"]["attention"] = "math";
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto masks = ops_where(p.roles[0], [](const pw::Op& op) {
    return std::string(op.name) == "attn.mask" && op.layer == 1 && op.micro_batch == 0;
  });
  ASSERT_EQ(masks.size(), 2u);              // forward and its recomputation
  const double scores = 8.0 / 2 * 64 * 64;  // heads per rank x queries x keys (seq_len 64, 8 heads)
  EXPECT_DOUBLE_EQ(masks[0].bytes, 2 * scores * 2);
}
