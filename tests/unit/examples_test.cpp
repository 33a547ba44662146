// Every shipped example workload loads, lowers and passes Program validation.
#include <gtest/gtest.h>

#include <filesystem>

#include "reports/lower_report.hpp"
#include "workloads/lower.hpp"
#include "workloads/program_graph.hpp"

namespace pw = paratwin::workloads;
namespace reports = paratwin::reports;

namespace {

std::vector<std::string> example_files() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(PARATWIN_EXAMPLES_DIR))
    if (entry.path().extension() == ".json") out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class Examples : public testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Examples, LoadsAndLowers) {
  const auto w = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + GetParam());
  const auto p = pw::lower(w);
  EXPECT_EQ(p.grid.size(), w.total_ranks());
  EXPECT_EQ(static_cast<int64_t>(p.roles.size()), w.parallel.pipeline.stages);
  const auto s = reports::summarize(p);
  // Hardware FLOPs count every query against every key; a causal flash kernel skips half of them.
  double expected = s.hardware_flops;
  if (w.model.attention == pw::Attention::flash) {
    const double S = static_cast<double>(w.model.seq_len), tokens = static_cast<double>(w.training.global_batch) * S;
    const double passes = w.training.checkpointing == pw::Checkpointing::none ? 3 : 4;
    // The core's multiply-adds per token and key: hidden for multi-head attention, heads × (qk + rope + v)
    // / 2 for multi-latent attention (queries and keys of qk + rope, values of v).
    const auto& a = w.model.mla;
    const double width = a.enabled()
                             ? static_cast<double>(w.model.heads * (a.qk_head_dim + a.rope_head_dim + a.v_head_dim)) / 2
                             : static_cast<double>(w.model.hidden);
    expected -= passes * static_cast<double>(w.model.layers) * 2 * tokens * S * width;
  }
  EXPECT_GT(s.executed_gemm_flops, 0.99 * expected);
  EXPECT_LT(s.executed_gemm_flops, 1.2 * expected);
  for (const auto& r : p.roles) EXPECT_GT(r.memory.total(), 0);
}

INSTANTIATE_TEST_SUITE_P(All, Examples, testing::ValuesIn(example_files()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });
