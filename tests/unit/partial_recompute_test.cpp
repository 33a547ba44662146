// Full checkpointing of some layers only (training.recompute_num_layers): Megatron-LM's
// --recompute-method block --recompute-num-layers N recomputes the first N layers of each model chunk
// (megatron/core/transformer/transformer_block.py _checkpointed_forward); the other layers keep their
// activations. The recomputed FLOPs, the executed GEMMs, the stash and the ZeRO-3 gathers follow.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"
#include "workloads/pipeline_layers.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::count_where;
using paratwin::test::workload;

namespace {

// 8 layers on 2 pipeline stages (4 per chunk), 8 micro-batches, full checkpointing of the first
// `n` layers of each chunk (0: every layer).
nlohmann::json pipelined(int n) {
  auto j = paratwin::test::base_gpt();
  j["model"]["layers"] = 8;
  j["training"]["global_batch"] = 8;
  if (n > 0) j["training"]["recompute_num_layers"] = n;
  j["parallelism"] = {{"pipeline", {{"stages", 2}, {"schedule", "1f1b"}}}};
  return j;
}

int recomputed_ops(const pw::Role& r) {
  return count_where(r, [](const pw::Op& op) { return op.phase == pw::Phase::recompute; });
}

}  // namespace

TEST(PartialRecompute, TheFirstLayersOfEachChunkRecomputeTheirForward) {
  const auto w = workload(pipelined(1));
  const auto recomputing = pw::recomputed_layers(w);
  ASSERT_EQ(recomputing.size(), 8u);
  for (int64_t l = 0; l < 8; ++l) EXPECT_EQ(recomputing[static_cast<size_t>(l)], l == 0 || l == 4) << l;
  EXPECT_EQ(std::count(recomputing.begin(), recomputing.end(), true), 2);
  // Hardware FLOPs: the model's plus two of the eight layers' forward passes.
  auto none = pipelined(0);
  none["training"]["checkpointing"] = "none";
  const auto all = pw::iteration_flops(workload(pipelined(0)));
  const auto two = pw::iteration_flops(w);
  const auto zero = pw::iteration_flops(workload(none));
  EXPECT_DOUBLE_EQ(two.model, all.model);
  EXPECT_NEAR(two.hardware - zero.hardware, (all.hardware - zero.hardware) * 2 / 8, 1e-9 * all.hardware);
  // The lowered program recomputes a quarter of what full recomputation does, and its GEMMs add up to
  // the hardware FLOPs.
  const auto p = pw::lower(w);
  const auto full = pw::lower(workload(pipelined(0)));
  for (size_t s = 0; s < 2; ++s) EXPECT_EQ(4 * recomputed_ops(p.roles[s]), recomputed_ops(full.roles[s])) << s;
  EXPECT_NEAR(paratwin::test::gemm_flops_all_ranks(p) / two.hardware, 1.0, 1e-12);
  // Each micro-batch's stash on a stage: one checkpointed input and three layers' whole activations.
  const double kept = pw::layer_activations(w, false, false).stash;
  const double input = pw::layer_activations(w, false, true).stash;
  EXPECT_GT(kept, input);
  int allocs = 0;
  for (const auto& op : p.roles[0].ops) {
    if (op.kind != pw::OpKind::alloc) continue;
    ++allocs;
    EXPECT_DOUBLE_EQ(op.bytes, input + 3 * kept);
  }
  EXPECT_EQ(allocs, 8);
}

// A ZeRO-3 unit is gathered once for its forward and once more for its backward whether or not its
// layer recomputes (the recompute's gather serves the backward): no gather is lost or issued twice
// where recomputed and kept layers meet.
TEST(PartialRecompute, Zero3GathersEachUnitOnceMoreForItsBackward) {
  auto j = paratwin::test::base_gpt();
  j["training"]["global_batch"] = 32;
  j["training"]["recompute_num_layers"] = 2;
  j["parallelism"] = {{"data", {{"size", 4}, {"zero", 3}}}};
  j["framework"] = {{"profile", "generic"}, {"sharding", {{"gather_unit", "layer"}, {"prefetch", 1}}}};
  const auto p = pw::lower(workload(j));
  const auto gather = [](const pw::Op& op) {
    return op.kind == pw::OpKind::all_gather && op.stream == pw::Stream::shard && op.layer >= 0;
  };
  EXPECT_EQ(count_where(p.roles[0], gather), 4 * 8 * 2);
  for (int l = 0; l < 4; ++l) {
    const auto phase = l < 2 ? pw::Phase::recompute : pw::Phase::backward;
    EXPECT_EQ(count_where(p.roles[0],
                          [&](const pw::Op& op) {
                            return gather(op) && op.layer == l && op.micro_batch == 5 && op.phase == phase;
                          }),
              1)
        << l;
  }
}

TEST(PartialRecompute, NeedsFullCheckpointing) {
  const auto refused = [](const nlohmann::json& j, const std::string& what) {
    try {
      (void)workload(j);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const pw::WorkloadError& e) {
      EXPECT_NE(std::string(e.what()).find("training.recompute_num_layers"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto selective = pipelined(1);
  selective["training"]["checkpointing"] = "selective";
  refused(selective, "needs training.checkpointing = \"full\"");
  refused(pipelined(9), "exceeds model.layers = 8");
}
