// Megatron-Core's MoE layouts beyond TED: experts whole on their ranks with the expert-parallel group
// folded over the tensor ranks (--expert-tensor-parallel-size 1), and the all-gather token dispatcher
// (--moe-token-dispatcher-type allgather, megatron/core/transformer/moe/token_dispatcher.py).
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/test_util.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using nlohmann::json;
using paratwin::test::ops_where;

namespace {

constexpr int64_t kTensor = 2, kExpert = 2, kTopK = 2, kExperts = 8;

// 4 layers, every other one MoE: 8 dropless experts, top 2, no biases, on tensor 2 × expert 2 ranks with
// sequence parallelism.
json moe_workload(const json& expert) {
  auto j = paratwin::test::base_gpt();
  j["model"]["moe"] = {{"experts", kExperts}, {"top_k", kTopK}, {"capacity_factor", 0}, {"every", 2}};
  j["model"]["bias"] = false;  // TED keeps fc2's bias on every tensor rank; whole experts once
  j["training"]["global_batch"] = 16;
  j["training"]["checkpointing"] = "none";
  j["parallelism"] = {{"data", {{"size", 1}}},
                      {"tensor", {{"mode", "megatron"}, {"size", kTensor}}},
                      {"sequence_parallel", true},
                      {"expert", expert}};
  return j;
}

pw::Program lowered(const json& expert) {
  return pw::lower(paratwin::test::workload(moe_workload(expert)));
}

// The ops of MoE layer 1, micro-batch 0, forward pass.
std::vector<pw::Op> forward_ops(const pw::Program& p, const std::function<bool(const pw::Op&)>& pred) {
  return ops_where(p.roles[0], [&](const pw::Op& op) {
    return op.layer == 1 && op.micro_batch == 0 && op.phase == pw::Phase::forward && pred(op);
  });
}

double expert_gemm_flops(const pw::Program& p) {
  double total = 0;
  for (const auto& op : ops_where(p.roles[0], [](const pw::Op& op) {
         return op.kind == pw::OpKind::gemm && op.name != nullptr && std::string(op.name).rfind("expert.", 0) == 0;
       }))
    total += op.flops;
  return total;
}

std::string error_of(const json& j) {
  try {
    pw::lower(paratwin::test::workload(j));
  } catch (const pw::WorkloadError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ExpertFolding, WholeExpertsSpreadOverTensorAndExpertRanks) {
  const auto ted = lowered({{"size", kExpert}});
  const auto folded = lowered({{"size", kExpert}, {"tensor", 1}});
  const auto a2a = [](const pw::Op& op) { return op.kind == pw::OpKind::all_to_all; };
  const auto t = forward_ops(ted, a2a), f = forward_ops(folded, a2a);
  ASSERT_EQ(t.size(), 2u);  // dispatch and combine
  ASSERT_EQ(f.size(), 2u);
  // TED exchanges within the expert axis, each tensor rank sending all k·T tokens; folded, the group is
  // tensor × expert ranks and each rank sends the k·T/t tokens of its sequence shard.
  EXPECT_EQ(t[0].group, ted.grid.mask("expert"));
  EXPECT_EQ(f[0].group, folded.grid.mask("expert") | folded.grid.mask("tensor"));
  EXPECT_DOUBLE_EQ(f[0].bytes, t[0].bytes / kTensor);
  // No partial products to reduce over the tensor group.
  const auto reduce = [](const pw::Op& op) {
    return op.name != nullptr && std::string(op.name) == "expert.all_reduce";
  };
  EXPECT_EQ(forward_ops(ted, reduce).size(), 1u);
  EXPECT_TRUE(forward_ops(folded, reduce).empty());
  // The same expert FLOPs and parameters per rank: E/(ep·t) whole experts against E/ep split ones.
  EXPECT_NEAR(expert_gemm_flops(folded) / expert_gemm_flops(ted), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(folded.roles[0].expert_params, ted.roles[0].expert_params);
  EXPECT_DOUBLE_EQ(folded.roles[0].params, ted.roles[0].params);
}

TEST(ExpertFolding, RefusesLayoutsMegatronCannotRun) {
  auto no_sp = moe_workload({{"size", kExpert}, {"tensor", 1}});
  no_sp["parallelism"]["sequence_parallel"] = false;
  EXPECT_NE(error_of(no_sp).find("parallelism.sequence_parallel"), std::string::npos) << error_of(no_sp);
  auto indivisible = moe_workload({{"size", kExpert}, {"tensor", 1}});
  indivisible["model"]["moe"]["experts"] = 6;
  // 6 experts divide over 2 expert ranks (TED) but not over 2 × 2 folded ones.
  EXPECT_NE(error_of(indivisible).find("model.moe.experts = 6 is not divisible by the expert-parallel group"),
            std::string::npos)
      << error_of(indivisible);
  const auto partial = moe_workload({{"size", kExpert}, {"tensor", 3}});
  EXPECT_NE(error_of(partial).find("parallelism.expert.tensor = 3"), std::string::npos) << error_of(partial);
  auto dense = paratwin::test::base_gpt();
  dense["parallelism"] = {{"expert", {{"dispatcher", "all_gather"}}}};
  EXPECT_NE(error_of(dense).find("parallelism.expert.dispatcher: needs an MoE model"), std::string::npos)
      << error_of(dense);
}

// Megatron-Core's MoEAllGatherTokenDispatcher: gather_from_sequence_parallel_region of the hidden states
// (and the probabilities and routing map) over the tensor × expert group, then
// reduce_scatter_to_sequence_parallel_region of the experts' output; the backward the other way.
TEST(ExpertDispatcher, AllGatherGathersTheSequenceShardsAndReduceScattersBack) {
  for (const json& expert : {json{{"size", kExpert}, {"dispatcher", "all_gather"}},
                             json{{"size", kExpert}, {"dispatcher", "all_gather"}, {"tensor", 1}}}) {
    SCOPED_TRACE(expert.dump());
    const auto p = lowered(expert);
    const pw::AxisMask group = p.grid.mask("expert") | p.grid.mask("tensor");
    const double tokens = 64.0 * 1;  // seq_len × micro_batch on each tensor group
    const double gathered = tokens / kTensor * (kTensor * kExpert) * 256 * 2;  // bf16 hidden of every shard
    const auto gathers = forward_ops(p, [](const pw::Op& op) { return op.kind == pw::OpKind::all_gather; });
    const auto scatters = forward_ops(p, [](const pw::Op& op) { return op.kind == pw::OpKind::reduce_scatter; });
    const auto on_group = [&](const std::vector<pw::Op>& ops) {
      std::vector<pw::Op> out;
      for (const auto& op : ops)
        if (op.group == group) out.push_back(op);
      return out;
    };
    ASSERT_EQ(on_group(gathers).size(), 2u);  // the tokens, then their probabilities and map
    EXPECT_DOUBLE_EQ(on_group(gathers)[0].bytes, gathered);
    EXPECT_DOUBLE_EQ(on_group(gathers)[1].bytes, tokens / kTensor * (kTensor * kExpert) * kExperts * 5);
    ASSERT_EQ(on_group(scatters).size(), 1u);
    EXPECT_DOUBLE_EQ(on_group(scatters)[0].bytes, gathered);
    EXPECT_TRUE(forward_ops(p, [](const pw::Op& op) { return op.kind == pw::OpKind::all_to_all; }).empty());
    EXPECT_TRUE(forward_ops(p, [](const pw::Op& op) {
                  return op.name != nullptr && std::string(op.name) == "expert.all_reduce";
                }).empty());
  }
}
