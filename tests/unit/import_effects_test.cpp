// What --approximate leaves out: multi-token prediction counted against DeepSeek-V3's published module
// size and against the FLOPs of one more layer written out by hand, and every other dropped argument
// said to change the model or only how it runs.
#include <gtest/gtest.h>

#include "importers/effects.hpp"
#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"

namespace pw = paratwin::workloads;
namespace pi = paratwin::importers;

// "DeepSeek-V3 ... 685B ... includes 671B of the Main Model weights and 14B of the Multi-Token
// Prediction (MTP) Module weights" (deepseek-ai/DeepSeek-V3 README, Hugging Face model card). The
// released module holds its own copy of the embedding and the output head, which Megatron-Core shares.
// The card rounds to whole billions (685 = 671 + 14); the count, with those copies, is 13.46 B.
TEST(ApproximationEffect, MultiTokenPredictionIsDeepSeekV3sFourteenBillion) {
  const auto m = paratwin::test::example("deepseek-v3-dgx-h100-1024.json").model;
  const auto added = pi::multi_token_prediction_cost(m, 1);
  const double own_copies = 2.0 * static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
  EXPECT_NEAR((added.parameters + own_copies) / 1e9, 14.0, 0.6);
  const std::string effect = pi::approximation_effect("num_nextn_predict_layers 1 (why)", m);
  EXPECT_NE(effect.find("leaves out 11.6 B parameters (+1.7 %)"), std::string::npos) << effect;
}

// A dense GPT layer forward is 24h² + 4Sh FLOPs per token (QKV 6h², projection 2h², MLP 16h²; Q·Kᵀ and
// scores·V over S keys), the module's projection 4h² and its logits 2hV; training is three times that.
TEST(ApproximationEffect, MultiTokenPredictionFlopsAreOneLayerAProjectionAndTheLogits) {
  auto j = paratwin::test::base_gpt();
  const auto m = paratwin::test::workload(j).model;
  const double h = 256, S = 64, V = 512;
  const auto added = pi::multi_token_prediction_cost(m, 2);
  EXPECT_DOUBLE_EQ(added.flops_per_token, 2 * 3 * (24 * h * h + 4 * S * h + 4 * h * h + 2 * h * V));
  const double layer = pw::count_parameters(m).attention + pw::count_parameters(m).mlp;
  EXPECT_DOUBLE_EQ(added.parameters, 2 * (layer + 2 * h * h + 3 * h));
}

TEST(ApproximationEffect, SaysWhetherTheModelOrOnlyItsRunChanges) {
  const auto m = paratwin::test::workload(paratwin::test::base_gpt()).model;
  EXPECT_NE(pi::approximation_effect("--window-size 128 (why)", m).find("changes the model itself"), std::string::npos);
  EXPECT_NE(pi::approximation_effect("--moe-flex-dispatcher-backend deepep (why)", m).find("are unchanged"),
            std::string::npos);
  EXPECT_NE(pi::approximation_effect("biases on q, k and v (leaving them out removes 129024 parameters)", m)
                .find("by the count given"),
            std::string::npos);
}
