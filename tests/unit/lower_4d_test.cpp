// The 4-D algorithm ([singh2025dissertation] Algorithm 3): per FC layer, the collective volumes on every axis equal
// eq. 5.1-5.5, with G_x and G_y swapped on transposed layers (projection and fc2).
#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::ops_where;

namespace {

constexpr int64_t kGx = 2, kGy = 4, kGz = 2, kGd = 2;
constexpr int64_t kH = 512, kF = 2048, kS = 128, kB = 4;  // micro-batch of 4 sequences

pw::Program four_d(bool overlap) {
  auto j = paratwin::test::base_gpt();
  j["model"] = {{"layers", 4}, {"hidden", kH}, {"heads", 8}, {"seq_len", kS}, {"vocab", 1024}};
  j["training"] = {{"global_batch", 16}, {"micro_batch", kB}, {"dtype", "bf16"}, {"checkpointing", "full"}};
  j["parallelism"] = {{"data", {{"size", kGd}}}, {"tensor", {{"mode", "axonn"}, {"x", kGx}, {"y", kGy}, {"z", kGz}}}};
  if (overlap)
    j["optimizations"] = {{"overlap_all_reduce", true}, {"overlap_reduce_scatter", true}, {"overlap_all_gather", true}};
  return pw::lower(paratwin::test::workload(j));
}

struct Fc {
  std::string name;
  int64_t k, n;
  bool transposed;
};
const Fc kFcs[] = {{"qkv", kH, 3 * kH, false}, {"proj", kH, kH, true}, {"fc1", kH, kF, false}, {"fc2", kF, kH, true}};

pw::Op only(const std::vector<pw::Op>& ops, const std::string& what) {
  if (ops.size() != 1) throw std::runtime_error(what + ": expected one op, found " + std::to_string(ops.size()));
  return ops.front();
}

}  // namespace

TEST(Lower4D, CollectiveVolumesEqualEq51To55) {
  for (bool overlap : {false, true}) {
    const auto p = four_d(overlap);
    const auto& role = p.roles[0];
    const double e = 2, m = kS * kB;
    const int layer = 1;
    for (const auto& fc : kFcs) {
      // On transposed layers the roles of G_x and G_y swap.
      const double gx = fc.transposed ? kGy : kGx, gy = fc.transposed ? kGx : kGy;
      const auto x_axis = p.grid.mask(fc.transposed ? "y" : "x"), y_axis = p.grid.mask(fc.transposed ? "x" : "y");
      auto in_layer = [&](pw::Phase ph, const std::string& name) {
        return [=](const pw::Op& op) {
          return op.layer == layer && op.micro_batch == 0 && op.phase == ph && name == op.name;
        };
      };
      const auto ag = only(ops_where(role, in_layer(pw::Phase::forward, fc.name + ".all_gather_z")), fc.name + " AG");
      const auto ar_y =
          only(ops_where(role, in_layer(pw::Phase::forward, fc.name + ".all_reduce_y")), fc.name + " AR_y");
      const auto ar_x =
          only(ops_where(role, in_layer(pw::Phase::backward, fc.name + ".dgrad.all_reduce_x")), fc.name + " AR_x");
      const auto rs =
          only(ops_where(role, in_layer(pw::Phase::backward, fc.name + ".wgrad.reduce_scatter_z")), fc.name + " RS");
      const double k = static_cast<double>(fc.k), n = static_cast<double>(fc.n);
      // eq. 5.1: a ring all-gather moves (G_z - 1)·k·n/(G_x·G_y·G_z) elements into each rank.
      EXPECT_EQ(ag.kind, pw::OpKind::all_gather);
      EXPECT_EQ(ag.group, p.grid.mask("z"));
      EXPECT_DOUBLE_EQ((kGz - 1.0) / kGz * ag.bytes, (kGz - 1) * k * n / (gx * gy * kGz) * e) << fc.name;
      // eq. 5.2: the reduce-scatter's input is k·n/(G_x·G_y).
      EXPECT_EQ(rs.group, p.grid.mask("z"));
      EXPECT_DOUBLE_EQ((kGz - 1.0) / kGz * rs.bytes, (kGz - 1.0) / kGz * k * n / (gx * gy) * e) << fc.name;
      // eq. 5.3: all-reduce over y of m·n/(G_z·G_x).
      EXPECT_EQ(ar_y.group, y_axis) << fc.name;
      EXPECT_DOUBLE_EQ(ar_y.bytes, m * n / (kGz * gx) * e) << fc.name;
      // eq. 5.4: all-reduce over x of m·k/(G_z·G_y).
      EXPECT_EQ(ar_x.group, x_axis) << fc.name;
      EXPECT_DOUBLE_EQ(ar_x.bytes, m * k / (kGz * gy) * e) << fc.name;
      // eq. 5.5: the data-parallel all-reduce of k·n/(G_x·G_y·G_z) once per iteration.
      const auto ar_d =
          only(ops_where(role,
                         [&](const pw::Op& op) {
                           return op.phase == pw::Phase::grad_sync && op.layer == layer && fc.name == op.name;
                         }),
               fc.name + " AR_data");
      EXPECT_EQ(ar_d.kind, pw::OpKind::all_reduce);
      EXPECT_EQ(ar_d.group, p.grid.mask("data"));
      EXPECT_DOUBLE_EQ(ar_d.bytes, k * n / (kGx * kGy * kGz) * e) << fc.name;
    }
  }
}

TEST(Lower4D, RecomputeRepeatsGathersUnlessCached) {
  auto j = paratwin::test::base_gpt();
  j["parallelism"] = {{"tensor", {{"mode", "axonn"}, {"x", 2}, {"y", 2}, {"z", 2}}}};
  auto gathers = [](const pw::Program& p, pw::Phase ph) {
    return count_where(p.roles[0],
                       [&](const pw::Op& op) { return op.kind == pw::OpKind::all_gather && op.phase == ph; });
  };
  const auto plain = pw::lower(paratwin::test::workload(j));
  // 4 layers × 4 FC layers × 8 micro-batches, forward and again in the recompute pass.
  EXPECT_EQ(gathers(plain, pw::Phase::forward), 4 * 4 * 8 + 8);  // + the logits layer
  EXPECT_EQ(gathers(plain, pw::Phase::recompute), 4 * 4 * 8);
  j["optimizations"] = {{"cache_all_gather", true}};
  const auto cached = pw::lower(paratwin::test::workload(j));
  EXPECT_EQ(gathers(cached, pw::Phase::recompute), 0);
  EXPECT_GT(cached.roles[0].memory.gathered_weights, plain.roles[0].memory.gathered_weights);
}

TEST(Lower4D, OverlapRemovesBlockingDependencies) {
  // Without overlap the weight-gradient GEMM waits for the input-gradient all-reduce (x); with OAR
  // it does not, and the all-reduce is waited for right after it.
  auto deps_of = [](const pw::Role& r, size_t i) {
    std::vector<uint32_t> d(r.deps_of(r.ops[i]), r.deps_of(r.ops[i]) + r.ops[i].dep_count);
    return d;
  };
  for (bool overlap : {false, true}) {
    const auto p = four_d(overlap);
    const auto& r = p.roles[0];
    for (size_t i = 0; i < r.ops.size(); ++i) {
      if (std::string(r.ops[i].name) != "fc1.wgrad" || r.ops[i].micro_batch != 0 || r.ops[i].layer != 1) continue;
      const auto d = deps_of(r, i);
      bool waits_for_ar = false;
      for (uint32_t k : d) waits_for_ar |= r.ops[k].kind == pw::OpKind::all_reduce;
      EXPECT_EQ(waits_for_ar, !overlap);
    }
  }
}

TEST(Lower4D, ExecutedFlopsCountAttentionRepeatedOverY) {
  const auto p = four_d(false);
  const double eq_all = p.hardware_flops;
  // The y ranks repeat the attention core (heads split over x, tokens over z only).
  const double tokens = 16.0 * kS, layers = 4;
  const double attention = 4.0 * 4.0 * tokens * kS * kH * layers;  // fwd + recompute + 2·bwd
  EXPECT_NEAR(paratwin::test::gemm_flops_all_ranks(p), eq_all + (kGy - 1) * attention, 1e-6 * eq_all);
}
