// TED ([singh2025dissertation] ch. 7): per MoE layer per micro-batch, two all-reduces and two all-to-alls in each of
// forward, recompute and backward (6 + 6); CAC drops the recompute pass's (4 + 4); DTD divides the
// all-to-all bytes by G_tensor and adds an all-gather (§7.3).
#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

constexpr int64_t kT = 2;  // G_tensor

pw::Program ted(bool dtd, bool cac) {
  auto j = paratwin::test::base_gpt();
  j["model"]["moe"] = {{"experts", 4}, {"top_k", 1}, {"capacity_factor", 1.0}, {"every", 2}};
  j["training"]["global_batch"] = 16;
  j["parallelism"] = {
      {"data", {{"size", 1}}}, {"tensor", {{"mode", "megatron"}, {"size", kT}}}, {"expert", {{"size", 4}}}};
  j["optimizations"] = {{"duplicate_token_dropping", dtd}, {"comm_aware_checkpointing", cac}};
  return pw::lower(paratwin::test::workload(j));
}

int count(const pw::Program& p, int layer, pw::OpKind kind, const std::string& axis) {
  return count_where(p.roles[0], [&](const pw::Op& op) {
    return op.layer == layer && op.micro_batch == 0 && op.kind == kind && op.group == p.grid.mask(axis);
  });
}

}  // namespace

TEST(LowerMoe, SixAllToAllsAndSixAllReducesPerMoeLayer) {
  const auto p = ted(false, false);
  EXPECT_EQ(count(p, 1, pw::OpKind::all_to_all, "expert"), 6);  // layer 1 is an MoE layer
  EXPECT_EQ(count(p, 1, pw::OpKind::all_reduce, "tensor"), 6);
  EXPECT_EQ(count(p, 0, pw::OpKind::all_to_all, "expert"), 0);  // layer 0 is dense
  EXPECT_EQ(count(p, 0, pw::OpKind::all_reduce, "tensor"), 6);
}

TEST(LowerMoe, CommunicationAwareCheckpointingLeavesFourAndFour) {
  const auto p = ted(false, true);
  EXPECT_EQ(count(p, 1, pw::OpKind::all_to_all, "expert"), 4);
  EXPECT_EQ(count(p, 1, pw::OpKind::all_reduce, "tensor"), 4);
  EXPECT_EQ(
      count_where(p.roles[0],
                  [](const pw::Op& op) { return op.phase == pw::Phase::recompute && pw::is_collective(op.kind); }),
      0);
  EXPECT_GT(p.roles[0].memory.comm_stash, 0);
}

TEST(LowerMoe, DuplicateTokenDroppingDividesAllToAllsAndAddsAllGathers) {
  const auto base = ted(false, false), dtd = ted(true, false);
  auto a2a = [](const pw::Program& p) {
    return ops_where(p.roles[0], [](const pw::Op& op) { return op.kind == pw::OpKind::all_to_all; });
  };
  ASSERT_EQ(a2a(base).size(), a2a(dtd).size());
  for (size_t i = 0; i < a2a(base).size(); ++i) EXPECT_DOUBLE_EQ(a2a(dtd)[i].bytes, a2a(base)[i].bytes / kT);
  // One all-gather over the tensor group after every all-to-all, of the full token buffer.
  EXPECT_EQ(count(dtd, 1, pw::OpKind::all_gather, "tensor"), 6);
  EXPECT_EQ(count(base, 1, pw::OpKind::all_gather, "tensor"), 0);
  for (const auto& op : ops_where(dtd.roles[0], [](const pw::Op& op) { return op.kind == pw::OpKind::all_gather; }))
    EXPECT_DOUBLE_EQ(op.bytes, a2a(base).front().bytes);
}

TEST(LowerMoe, ExpertAndSharedGradientsReduceOverTheirOwnGroups) {
  auto j = paratwin::test::base_gpt();
  j["model"]["moe"] = {{"experts", 4}};
  j["training"]["global_batch"] = 16;
  j["parallelism"] = {
      {"data", {{"size", 2}}}, {"tensor", {{"mode", "megatron"}, {"size", 2}}}, {"expert", {{"size", 2}}}};
  const auto p = pw::lower(paratwin::test::workload(j));
  const auto syncs = ops_where(p.roles[0], [](const pw::Op& op) { return op.phase == pw::Phase::grad_sync; });
  ASSERT_FALSE(syncs.empty());
  for (const auto& op : syncs) {
    if (op.expert_params)
      EXPECT_EQ(op.group, p.grid.mask("data"));
    else
      EXPECT_EQ(op.group, p.grid.mask("expert") | p.grid.mask("data"));
  }
  // Each rank holds E / G_expert = 2 experts: their expert GEMMs are batched by 2.
  const auto fc1 = ops_where(p.roles[0], [](const pw::Op& op) { return std::string(op.name) == "expert.fc1"; });
  ASSERT_FALSE(fc1.empty());
  EXPECT_EQ(fc1.front().gemm.batch, 2);
}
