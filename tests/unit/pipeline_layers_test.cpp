// Layers per virtual pipeline stage: even splits, and Megatron-Core's uneven ones
// (megatron/core/transformer/transformer_block.py get_num_layers_to_build, main 2026-11).
#include "workloads/pipeline_layers.hpp"

#include <gtest/gtest.h>

#include <set>

#include "tests/unit/test_util.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

// Layers per virtual stage, in virtual-stage order.
std::vector<int64_t> counts(const pw::Workload& w) {
  const auto starts = pw::virtual_stage_starts(w);
  std::vector<int64_t> out;
  for (size_t v = 0; v + 1 < starts.size(); ++v) out.push_back(starts[v + 1] - starts[v]);
  return out;
}

pw::Workload pipeline(int64_t layers, int64_t stages, int64_t chunks) {
  pw::Workload w = paratwin::test::workload(paratwin::test::base_gpt());
  w.model.layers = layers;
  w.parallel.pipeline.stages = stages;
  w.parallel.pipeline.chunks = chunks;
  return w;
}

std::string error_of(const pw::Workload& w) {
  try {
    pw::virtual_stage_starts(w);
  } catch (const pw::WorkloadError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// transformer_block.py's own example: 8 layers on 2 stages and 2 model chunks, stage 0 holding [0, 1]
// and [4, 5], stage 1 [2, 3] and [6, 7].
TEST(PipelineLayers, EvenSplitsInVirtualStageOrder) {
  EXPECT_EQ(pw::virtual_stage_starts(pipeline(8, 2, 2)), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(counts(pipeline(8, 2, 4)), (std::vector<int64_t>(8, 1)));
}

// Llama 3.1 405B as Megatron-Bridge trains it (126 layers, 8 stages of 8 chunks, the embedding and the
// loss counted): 128 slots, 2 per chunk; the first chunk holds the embedding and 1 layer, the last 1
// layer and the loss.
TEST(PipelineLayers, EmbeddingAndLossCountedAsLayers) {
  auto w = pipeline(126, 8, 8);
  w.parallel.pipeline.embedding_in_split = true;
  w.parallel.pipeline.loss_in_split = true;
  const auto c = counts(w);
  ASSERT_EQ(c.size(), 64u);
  EXPECT_EQ(c.front(), 1);
  EXPECT_EQ(c.back(), 1);
  for (size_t v = 1; v + 1 < c.size(); ++v) EXPECT_EQ(c[v], 2) << v;
  w.parallel.pipeline.loss_in_split = false;  // 127 slots on 8 stages
  EXPECT_NE(error_of(w).find("126 layers + the embedding = 127 are not divisible by parallelism.pipeline.stages 8"),
            std::string::npos)
      << error_of(w);
}

// First and last stages of their own sizes (--decoder-first/last-pipeline-num-layers): a DeepSeek-V3-
// like 61 layers on 16 stages, 3 in the first, 2 in the last, 4 in each of the 14 others.
TEST(PipelineLayers, FirstAndLastStagesOfTheirOwn) {
  auto w = pipeline(61, 16, 1);
  w.parallel.pipeline.first_stage_layers = 3;
  w.parallel.pipeline.last_stage_layers = 2;
  auto c = counts(w);
  EXPECT_EQ(c.front(), 3);
  EXPECT_EQ(c.back(), 2);
  EXPECT_EQ(std::set<int64_t>(c.begin() + 1, c.end() - 1), (std::set<int64_t>{4}));
  w.parallel.pipeline.last_stage_layers = 3;  // 55 over 14 stages
  EXPECT_NE(error_of(w).find("leave 55 of the 61 layers (model.layers) for the 14 other stages"), std::string::npos)
      << error_of(w);
  w = pipeline(16, 4, 2);
  w.parallel.pipeline.first_stage_layers = 2;  // 14 over 3 stages
  EXPECT_NE(error_of(w).find("first_stage_layers"), std::string::npos);
  w.parallel.pipeline.first_stage_layers = 4;  // 12 over 3: 4 each, 2 per chunk
  EXPECT_EQ(counts(w), (std::vector<int64_t>(8, 2)));
  w.parallel.pipeline.first_stage_layers = 1;
  w.model.layers = 13;  // 12 over 3 stages, but the first stage's 1 layer over 2 chunks
  EXPECT_NE(error_of(w).find("parallelism.pipeline.chunks = 2 does not divide the 1 layers of stage 0"),
            std::string::npos)
      << error_of(w);
}

// The lowering builds each stage's layers: 10 layers on 4 stages, 1 in the first, 3 in each other.
TEST(PipelineLayers, LoweredStagesHoldTheirLayers) {
  auto j = paratwin::test::base_gpt();
  j["model"]["layers"] = 10;
  j["parallelism"] = {{"pipeline", {{"stages", 4}, {"first_stage_layers", 1}}}};
  j["training"]["global_batch"] = 8;
  const auto w = paratwin::test::workload(j);
  const auto p = pw::lower(w);
  std::vector<std::set<int32_t>> layers(4);
  for (const auto& role : p.roles)
    for (const auto& op : role.ops)
      if (op.kind == pw::OpKind::gemm && op.layer >= 0) layers[static_cast<size_t>(role.stage)].insert(op.layer);
  EXPECT_EQ(layers[0], (std::set<int32_t>{0}));
  EXPECT_EQ(layers[1], (std::set<int32_t>{1, 2, 3}));
  EXPECT_EQ(layers[3], (std::set<int32_t>{7, 8, 9}));
  // The first stage holds one layer's activations where the others hold three.
  EXPECT_LT(p.roles[0].memory.activations, p.roles[1].memory.activations);
  // Written back and read again as it was.
  EXPECT_EQ(paratwin::test::workload(pw::to_json(w)).parallel.pipeline.first_stage_layers, 1);
}
