// The Program size estimate that validate() refuses oversized workloads by (once,
// workloads below the former 5 × 10^7-ops-per-role estimate needed more than 10 GB to lower) is never
// below what lower() builds, for every shipped example and variants of its options, and within 2.5 times
// it for the examples; the two reported workloads are refused before anything is allocated.
#include "workloads/program_size.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/input_rejects.hpp"
#include "tests/unit/test_util.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {
namespace {

using nlohmann::json;

double ops_of(const Workload& w) {
  LowerOptions options;
  options.validate_program = false;
  double ops = 0;
  for (const auto& role : lower(w, options).roles) ops += static_cast<double>(role.ops.size());
  return ops;
}

std::vector<std::string> examples() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(PARATWIN_EXAMPLES_DIR))
    if (entry.path().extension() == ".json") out.push_back(entry.path().string());
  return out;
}

TEST(ProgramSize, EstimateBoundsEveryExample) {
  for (const auto& file : examples()) {
    const Workload w = load_workload_file(file);
    const double ops = ops_of(w), estimate = estimate_program_size(w).ops;
    EXPECT_GE(estimate, ops) << file;
    EXPECT_LE(estimate, 2.5 * ops) << file;
    EXPECT_DOUBLE_EQ(estimate_program_size(w).bytes, 300 * estimate) << file;
  }
}

// Every checkpointing mode, ZeRO stage and overlap option an example accepts, and MoE in every layer,
// with its layers and micro-batches doubled (the estimate's per-layer and per-micro-batch terms apart).
TEST(ProgramSize, EstimateBoundsOptionVariants) {
  const std::vector<std::function<void(json&)>> variants = {
      [](json& d) { d["training"]["checkpointing"] = "none"; },
      [](json& d) { d["training"]["checkpointing"] = "selective"; },
      [](json& d) { d["parallelism"]["data"]["zero"] = 1; },
      [](json& d) { d["parallelism"]["data"]["zero"] = 3; },
      [](json& d) {
        d["training"]["checkpointing"] = "full";
        for (const char* k : {"overlap_all_reduce", "overlap_reduce_scatter", "overlap_all_gather",
                              "overlap_gradient_sync", "cache_all_gather"})
          d["optimizations"][k] = true;
      },
      [](json& d) { d["parallelism"]["sequence_parallel"] = true; },
      [](json& d) {
        if (d["model"].contains("moe")) d["model"]["moe"]["every"] = 1;
        d["parallelism"]["data"]["zero"] = 3;
      },
  };
  int checked = 0;
  for (const auto& file : examples()) {
    const json example = to_json(load_workload_file(file));
    for (const auto& variant : variants)
      for (const int64_t doubled : {1, 2}) {
        json d = example;
        variant(d);
        d["model"]["layers"] = d["model"]["layers"].get<int64_t>() * doubled;
        d["training"]["global_batch"] = d["training"]["global_batch"].get<int64_t>() * (3 - doubled);
        Workload w;
        try {
          w = parse_workload(d, file);
        } catch (const WorkloadError&) {
          continue;  // the option does not apply to this example
        }
        if (estimate_program_size(w).ops > 3e5) continue;  // keeps the test quick
        EXPECT_GE(estimate_program_size(w).ops, ops_of(w)) << d.dump();
        ++checked;
      }
  }
  EXPECT_GT(checked, 200) << checked;
}

// Found by fuzzing: an MoE layer everywhere, ZeRO-3 and an odd layer count took 61.4 ops per layer and
// micro-batch, 0.2% above the estimate of the time.
TEST(ProgramSize, EstimateBoundsMoeEveryLayer) {
  const Workload w = parse_workload(json::parse(R"({"name": "moe-1.3b-16e-summit-32",
    "model": {"heads": 16, "hidden": 2048, "layers": 23, "seq_len": 2048, "vocab": 51200,
              "moe": {"capacity_factor": 1.0, "every": 1, "experts": 16, "top_k": 1}},
    "optimizations": {"comm_aware_checkpointing": false, "overlap_gradient_sync": true},
    "parallelism": {"data": {"size": 2, "zero": 3}, "expert": {"size": 16}, "tensor": {"mode": "none"}},
    "placement": {"devices_per_node": 6, "order": ["expert", "pipe", "data"]},
    "training": {"checkpointing": "full", "dtype": "fp16", "global_batch": 512, "micro_batch": 1}})"),
                                    "");
  EXPECT_GE(estimate_program_size(w).ops, ops_of(w));
}

::testing::AssertionResult rejects(const json& doc, const std::string& path, const std::string& needle) {
  return test::rejects_with<WorkloadError>([&] { parse_workload(doc, ""); }, "WorkloadError", "workload", path, needle);
}

json tiny_dp() {
  return to_json(load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-dp.json"));
}

// 10^6 layers were under the former limit (40 ops per layer and micro-batch, one
// micro-batch) and took more than 10 GB to lower.
TEST(ProgramSize, MillionLayersRefused) {
  json d = tiny_dp();
  d["model"]["layers"] = 1000000;
  d["training"]["global_batch"] = 4;  // one micro-batch of 2 on each of the 2 replicas
  EXPECT_TRUE(rejects(d, "model.layers",
                      "= 1000000 layers with 1 micro-batch per iteration make a Program of about 88000022 ops "
                      "(26.4 GB to build), more than the limit of 25000000 ops (7.5 GB); use fewer layers"));
}

// GPipe with 600,000 micro-batches of a one-layer model.
TEST(ProgramSize, GpipeWithManyMicroBatchesRefused) {
  json d = tiny_dp();
  d["model"]["layers"] = 1;
  d["parallelism"]["pipeline"] = {{"stages", 1}, {"schedule", "gpipe"}};
  d["training"]["global_batch"] = 2400000;  // 600,000 micro-batches of 2 on each of the 2 replicas
  EXPECT_TRUE(rejects(d, "training.global_batch",
                      "= 2400000 makes 600000 micro-batches per iteration (global_batch / (data replicas × "
                      "micro_batch)) and a Program of about 51600024 ops"));
  d["training"]["global_batch"] = 240000;  // a tenth of it is within the limit
  EXPECT_NO_THROW(parse_workload(d, ""));
}

// DeepSeek-class layers (multi-latent attention, shared experts) under every checkpointing mode, ZeRO
// stage 0, 1 and 3 (Megatron-FSDP) and tensor sizes 1 and 2 with sequence parallelism.
TEST(ProgramSize, EstimateBoundsLatentAttentionAndSharedExperts) {
  for (int tp : {1, 2})
    for (const char* checkpointing : {"none", "selective", "full"})
      for (int zero : {0, 1, 3}) {
        json j = {{"name", "deepseek-like"},
                  {"model", paratwin::test::small_deepseek_model()},
                  {"training", {{"global_batch", 16}, {"micro_batch", 1}, {"checkpointing", checkpointing}}},
                  {"parallelism", {{"data", {{"size", 2}, {"zero", zero}}}, {"expert", {{"size", 2}}}}}};
        if (tp > 1) {
          j["parallelism"]["tensor"] = {{"mode", "megatron"}, {"size", 2}};
          j["parallelism"]["sequence_parallel"] = true;
        }
        if (zero == 3) j["framework"] = {{"profile", "megatron-fsdp"}};
        const Workload w = parse_workload(j, "");
        const std::string label = "t" + std::to_string(tp) + " " + checkpointing + " zero " + std::to_string(zero);
        const double ops = ops_of(w), estimate = estimate_program_size(w).ops;
        EXPECT_GE(estimate, ops) << label;
        EXPECT_LE(estimate, 2.5 * ops) << label;
      }
}

}  // namespace
}  // namespace paratwin::workloads
