// Every class of invalid workload the reader and validate() reject: each test starts from a valid
// base document, breaks one thing, and checks the WorkloadError's JSON path and that its message names
// the broken rule. The last section covers inputs at the edges of number representation and of the
// validator's integer arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/input_rejects.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"
#include "workloads/program_graph.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {
namespace {

using nlohmann::json;

// Megatron PTD-P on 8 ranks: tensor 2 × pipeline 2 (1F1B) × data 2, 4 micro-batches of 1.
json base() {
  return json::parse(R"({
    "name": "base",
    "description": "valid starting point of the error tests",
    "model": {"layers": 4, "hidden": 256, "heads": 8, "seq_len": 128, "vocab": 1024},
    "training": {"global_batch": 8, "micro_batch": 1, "dtype": "bf16", "checkpointing": "full"},
    "parallelism": {
      "data": {"size": 2},
      "tensor": {"mode": "megatron", "size": 2},
      "pipeline": {"stages": 2, "schedule": "1f1b"}
    },
    "optimizations": {},
    "placement": {}
  })");
}

// The base with an MoE model: 4 experts every other layer, expert 2 × data 2 replicas, m = 2.
json moe_base() {
  json d = base();
  d["model"]["moe"] = {{"experts", 4}, {"top_k", 1}, {"capacity_factor", 1.0}, {"every", 2}};
  d["parallelism"]["expert"] = {{"size", 2}};
  return d;
}

// The base with AxoNN 3D tensor parallelism instead of Megatron, hidden 4096.
json axonn_base() {
  json d = base();
  d["model"] = {{"layers", 4}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 128}, {"vocab", 8192}};
  d["parallelism"]["tensor"] = {{"mode", "axonn"}, {"x", 2}, {"y", 1}, {"z", 1}};
  return d;
}

json optimus_base() {
  json d = base();
  d["parallelism"]["tensor"] = {{"mode", "optimus"}, {"q", 2}};
  return d;
}

// Tensor parallelism off (the megatron-only "size" key removed with it).
json no_tensor(json d) {
  d["parallelism"]["tensor"] = {{"mode", "none"}};
  return d;
}

// Parses `doc` (or JSON text) and checks that it fails with a WorkloadError at `path` whose message
// contains `needle`, and that what() joins the two.
::testing::AssertionResult rejects(const json& doc, const std::string& path, const std::string& needle) {
  return test::rejects_with<WorkloadError>([&] { parse_workload(doc, ""); }, "WorkloadError", "workload", path, needle);
}

::testing::AssertionResult rejects_text(const std::string& text, const std::string& source, const std::string& path,
                                        const std::string& needle) {
  return test::rejects_with<WorkloadError>([&] { parse_workload_text(text, source); }, "WorkloadError", "workload",
                                           path, needle);
}

constexpr const char* kUnknown = "unknown key";
constexpr const char* kNoShard = "has no effect unless weights are sharded";

// ---------------------------------------------------------------------------------------------
// The bases themselves are valid and lower to a valid program, so every failure below is caused by
// the one thing each test breaks.

TEST(WorkloadErrors, BasesAreValidAndLower) {
  for (const json& d : {base(), moe_base(), axonn_base(), optimus_base(), no_tensor(base())}) {
    Workload w;
    ASSERT_NO_THROW(w = parse_workload(d, "")) << d.dump();
    EXPECT_NO_THROW(validate_program(lower(w))) << d.dump();
  }
  EXPECT_EQ(parse_workload(base(), "").total_ranks(), 8);
  EXPECT_EQ(parse_workload(base(), "").micro_batches(), 4);
}

// ---------------------------------------------------------------------------------------------
// Syntax and document shape

TEST(WorkloadErrors, NotJson) {
  EXPECT_TRUE(rejects_text("{\"name\": \"x\", \"model\": ", "w.json", "w.json", "is not valid JSON"));
}

TEST(WorkloadErrors, EmptyText) {
  EXPECT_TRUE(rejects_text("", "w.json", "w.json", "is not valid JSON"));
}

TEST(WorkloadErrors, TrailingGarbageAfterDocument) {
  EXPECT_TRUE(rejects_text(base().dump() + " }", "w.json", "w.json", "is not valid JSON"));
}

TEST(WorkloadErrors, TopLevelArray) {
  EXPECT_TRUE(rejects(json::array({base()}), "(top level)", "expected a JSON object, found array"));
}

TEST(WorkloadErrors, TopLevelScalar) {
  EXPECT_TRUE(rejects_text("42", "", "(top level)", "expected a JSON object, found number"));
  EXPECT_TRUE(rejects_text("null", "", "(top level)", "expected a JSON object, found null"));
}

TEST(WorkloadErrors, SectionNotAnObject) {
  json d = base();
  d["model"] = json::array({4, 256});
  EXPECT_TRUE(rejects(d, "model", "expected a JSON object, found array"));
}

TEST(WorkloadErrors, NestedSectionNotAnObject) {
  json d = base();
  d["parallelism"]["tensor"] = "megatron";
  EXPECT_TRUE(rejects(d, "parallelism.tensor", "expected a JSON object, found string"));
}

TEST(WorkloadErrors, MoeNotAnObject) {
  json d = base();
  d["model"]["moe"] = 8;
  EXPECT_TRUE(rejects(d, "model.moe", "expected a JSON object, found number"));
}

// ---------------------------------------------------------------------------------------------
// Required keys

TEST(WorkloadErrors, MissingName) {
  json d = base();
  d.erase("name");
  EXPECT_TRUE(rejects(d, "name", "is required but missing"));
}

TEST(WorkloadErrors, MissingModelSection) {
  json d = base();
  d.erase("model");
  EXPECT_TRUE(rejects(d, "model.layers", "is required but missing"));
}

TEST(WorkloadErrors, MissingModelLayers) {
  json d = base();
  d["model"].erase("layers");
  EXPECT_TRUE(rejects(d, "model.layers", "is required but missing"));
}

TEST(WorkloadErrors, MissingModelHidden) {
  json d = base();
  d["model"].erase("hidden");
  EXPECT_TRUE(rejects(d, "model.hidden", "is required but missing"));
}

TEST(WorkloadErrors, MissingModelHeads) {
  json d = base();
  d["model"].erase("heads");
  EXPECT_TRUE(rejects(d, "model.heads", "is required but missing"));
}

TEST(WorkloadErrors, MissingModelSeqLen) {
  json d = base();
  d["model"].erase("seq_len");
  EXPECT_TRUE(rejects(d, "model.seq_len", "is required but missing"));
}

TEST(WorkloadErrors, MissingModelVocab) {
  json d = base();
  d["model"].erase("vocab");
  EXPECT_TRUE(rejects(d, "model.vocab", "is required but missing"));
}

TEST(WorkloadErrors, MissingTrainingSection) {
  json d = base();
  d.erase("training");
  EXPECT_TRUE(rejects(d, "training.global_batch", "is required but missing"));
}

TEST(WorkloadErrors, MissingGlobalBatch) {
  json d = base();
  d["training"].erase("global_batch");
  EXPECT_TRUE(rejects(d, "training.global_batch", "is required but missing"));
}

TEST(WorkloadErrors, MissingMegatronSize) {
  json d = base();
  d["parallelism"]["tensor"].erase("size");
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "is required but missing"));
}

TEST(WorkloadErrors, MissingOptimusQ) {
  json d = optimus_base();
  d["parallelism"]["tensor"].erase("q");
  EXPECT_TRUE(rejects(d, "parallelism.tensor.q", "is required but missing"));
}

TEST(WorkloadErrors, MissingMoeExperts) {
  json d = moe_base();
  d["model"]["moe"].erase("experts");
  EXPECT_TRUE(rejects(d, "model.moe.experts", "is required but missing"));
}

// ---------------------------------------------------------------------------------------------
// Wrong types

TEST(WorkloadErrors, StringForInteger) {
  json d = base();
  d["model"]["hidden"] = "256";
  EXPECT_TRUE(rejects(d, "model.hidden", "expected an integer, found string"));
}

TEST(WorkloadErrors, FractionalFloatForInteger) {
  json d = base();
  d["model"]["hidden"] = 256.5;
  EXPECT_TRUE(rejects(d, "model.hidden", "expected an integer, found 256.5"));
}

TEST(WorkloadErrors, IntegralFloatIsAcceptedForInteger) {
  json d = base();
  d["model"]["hidden"] = 256.0;
  EXPECT_EQ(parse_workload(d, "").model.hidden, 256);
}

TEST(WorkloadErrors, HugeFloatForInteger) {
  json d = base();
  d["training"]["global_batch"] = 1e300;
  EXPECT_TRUE(rejects(d, "training.global_batch", "= 1e+300 is out of range [1, "));
}

// 2^64 becomes a double in the parser: a whole number too large for the rule, said so with the range
// (not "expected an integer").
TEST(WorkloadErrors, WholeNumbersBeyondUint64AreOutOfRange) {
  json d = base();
  d["model"]["layers"] = json::parse("18446744073709551616");
  EXPECT_TRUE(rejects(d, "model.layers", "= 1.8446744073709552e+19 is out of range [1, "));
}

TEST(WorkloadErrors, BoolForInteger) {
  json d = base();
  d["model"]["layers"] = true;
  EXPECT_TRUE(rejects(d, "model.layers", "expected an integer, found boolean"));
}

TEST(WorkloadErrors, NullForInteger) {
  json d = base();
  d["model"]["heads"] = nullptr;
  EXPECT_TRUE(rejects(d, "model.heads", "expected an integer, found null"));
}

TEST(WorkloadErrors, ArrayForInteger) {
  json d = base();
  d["parallelism"]["data"]["size"] = json::array({2});
  EXPECT_TRUE(rejects(d, "parallelism.data.size", "expected an integer, found array"));
}

TEST(WorkloadErrors, StringForBool) {
  json d = base();
  d["parallelism"]["sequence_parallel"] = "true";
  EXPECT_TRUE(rejects(d, "parallelism.sequence_parallel", "expected true or false, found string"));
}

TEST(WorkloadErrors, IntegerForBool) {
  json d = base();
  d["optimizations"]["overlap_all_reduce"] = 1;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_all_reduce", "expected true or false, found number"));
}

TEST(WorkloadErrors, NumberForString) {
  json d = base();
  d["name"] = 42;
  EXPECT_TRUE(rejects(d, "name", "expected a string, found number"));
}

TEST(WorkloadErrors, DescriptionNotAString) {
  json d = base();
  d["description"] = json::array({"a", "b"});
  EXPECT_TRUE(rejects(d, "description", "expected a string, found array"));
}

TEST(WorkloadErrors, StringForNumber) {
  json d = moe_base();
  d["model"]["moe"]["capacity_factor"] = "1.0";
  EXPECT_TRUE(rejects(d, "model.moe.capacity_factor", "expected a number, found string"));
}

TEST(WorkloadErrors, EnumNotAString) {
  json d = base();
  d["training"]["dtype"] = 16;
  EXPECT_TRUE(rejects(d, "training.dtype", "expected a string, found number"));
}

TEST(WorkloadErrors, PlacementOrderNotAnArray) {
  json d = base();
  d["placement"]["order"] = "tensor";
  EXPECT_TRUE(rejects(d, "placement.order", "expected an array of strings, found string"));
}

TEST(WorkloadErrors, PlacementOrderItemNotAString) {
  json d = base();
  d["placement"]["order"] = json::array({"tensor", 1, "data"});
  EXPECT_TRUE(rejects(d, "placement.order[1]", "expected a string, found number"));
}

// ---------------------------------------------------------------------------------------------
// Values out of range

TEST(WorkloadErrors, EmptyName) {
  json d = base();
  d["name"] = "";
  EXPECT_TRUE(rejects(d, "name", "must not be empty"));
}

TEST(WorkloadErrors, NegativeInteger) {
  json d = base();
  d["model"]["layers"] = -4;
  EXPECT_TRUE(rejects(d, "model.layers", "= -4 is out of range [1, 1000000]"));
}

TEST(WorkloadErrors, ZeroInteger) {
  json d = base();
  d["training"]["global_batch"] = 0;
  EXPECT_TRUE(rejects(d, "training.global_batch", "= 0 is out of range [1, "));
}

TEST(WorkloadErrors, ZeroMicroBatch) {
  json d = base();
  d["training"]["micro_batch"] = 0;
  EXPECT_TRUE(rejects(d, "training.micro_batch", "= 0 is out of range"));
}

TEST(WorkloadErrors, DimensionAboveLimit) {
  json d = base();
  d["model"]["hidden"] = int64_t{1} << 40;
  EXPECT_TRUE(rejects(d, "model.hidden", "= 1099511627776 is out of range [1, "));
}

TEST(WorkloadErrors, ZeroStages) {
  json d = base();
  d["parallelism"]["pipeline"]["stages"] = 0;
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.stages", "= 0 is out of range [1, 65536]"));
}

TEST(WorkloadErrors, ZeroStageAboveThree) {
  json d = base();
  d["parallelism"]["data"]["zero"] = 4;
  EXPECT_TRUE(rejects(d, "parallelism.data.zero", "= 4 is out of range [0, 3]"));
}

TEST(WorkloadErrors, OptimusQAboveLimit) {
  json d = optimus_base();
  d["parallelism"]["tensor"]["q"] = 2049;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.q", "= 2049 is out of range [1, 2048]"));
}

TEST(WorkloadErrors, NegativeDevicesPerNode) {
  json d = base();
  d["placement"]["devices_per_node"] = -8;
  EXPECT_TRUE(rejects(d, "placement.devices_per_node", "= -8 is out of range [0, 65536]"));
}

TEST(WorkloadErrors, NegativePipelineLimit) {
  json d = base();
  d["parallelism"]["pipeline"]["pipeline_limit"] = -1;
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.pipeline_limit", "= -1 is out of range"));
}

TEST(WorkloadErrors, MoeSingleExpert) {
  json d = moe_base();
  d["model"]["moe"]["experts"] = 1;
  EXPECT_TRUE(rejects(d, "model.moe.experts", "= 1 is out of range [2, 1048576]"));
}

TEST(WorkloadErrors, MoeTopKAboveExperts) {
  json d = moe_base();
  d["model"]["moe"]["top_k"] = 5;
  EXPECT_TRUE(rejects(d, "model.moe.top_k", "= 5 is out of range [1, 4]"));
}

TEST(WorkloadErrors, MoeNegativeCapacityFactor) {
  json d = moe_base();
  d["model"]["moe"]["capacity_factor"] = -0.5;
  EXPECT_TRUE(rejects(d, "model.moe.capacity_factor", "= -0.5 is out of range [0, 1e+06]"));
}

TEST(WorkloadErrors, MoeImbalanceBelowOne) {
  json d = moe_base();
  d["model"]["moe"]["capacity_factor"] = 0;
  d["model"]["moe"]["imbalance"] = 0.5;
  EXPECT_TRUE(rejects(d, "model.moe.imbalance", "= 0.5 is out of range [1, 1e+06]"));
}

TEST(WorkloadErrors, MoeEveryAboveLayers) {
  json d = moe_base();
  d["model"]["moe"]["every"] = 5;
  EXPECT_TRUE(rejects(d, "model.moe.every", "= 5 is out of range [1, 4]"));
}

TEST(WorkloadErrors, MoeDefaultEveryLeavesNoMoeLayer) {
  json d = moe_base();
  d["model"]["layers"] = 1;
  d["model"]["moe"].erase("every");
  d["parallelism"]["pipeline"] = {{"stages", 1}};
  EXPECT_TRUE(rejects(d, "model.moe.every", "= 2 exceeds model.layers = 1: the model would have no MoE layer"));
}

TEST(WorkloadErrors, TooManyRanks) {
  json d = base();
  d["parallelism"]["data"]["size"] = int64_t{1} << 22;
  d["training"]["global_batch"] = int64_t{1} << 22;
  EXPECT_TRUE(rejects(d, "parallelism", "ranks, more than the limit of 4194304"));
}

TEST(WorkloadErrors, TooManyOps) {
  json d = base();
  d["model"]["layers"] = 1000;
  d["training"]["global_batch"] = 8192;  // m = 4096 micro-batches of 1000 layers
  EXPECT_TRUE(rejects(d, "training.global_batch", "ops (103.3 GB to build), more than the limit of 25000000 ops"));
}

// ---------------------------------------------------------------------------------------------
// Unknown keys, at every level

TEST(WorkloadErrors, UnknownTopLevelKey) {
  json d = base();
  d["nmae"] = "typo";
  EXPECT_TRUE(rejects(d, "nmae", kUnknown));
}

// The empty key is a key too: its path shows it quoted, never as an empty path.
TEST(WorkloadErrors, EmptyKeyIsNamed) {
  json d = base();
  d[""] = 1;
  EXPECT_TRUE(rejects(d, "\"\"", kUnknown));
  d = base();
  d["model"][""] = 1;
  EXPECT_TRUE(rejects(d, "model.\"\"", kUnknown));
}

TEST(WorkloadErrors, UnknownModelKey) {
  json d = base();
  d["model"]["hiden"] = 256;
  EXPECT_TRUE(rejects(d, "model.hiden", kUnknown));
}

TEST(WorkloadErrors, UnknownMoeKey) {
  json d = moe_base();
  d["model"]["moe"]["topk"] = 2;
  EXPECT_TRUE(rejects(d, "model.moe.topk", kUnknown));
}

// A misspelt *required* key is reported as the missing key, not as an unknown one: required keys are
// read before finish() looks for unknown keys.
TEST(WorkloadErrors, MisspeltRequiredKey) {
  json d = base();
  d["model"].erase("hidden");
  d["model"]["hiden"] = 256;
  EXPECT_TRUE(rejects(d, "model.hidden", "is required but missing"));
}

TEST(WorkloadErrors, UnknownTrainingKey) {
  json d = base();
  d["training"]["microbatch"] = 2;
  EXPECT_TRUE(rejects(d, "training.microbatch", kUnknown));
}

TEST(WorkloadErrors, UnknownParallelismKey) {
  json d = base();
  d["parallelism"]["sequence_parralel"] = true;
  EXPECT_TRUE(rejects(d, "parallelism.sequence_parralel", kUnknown));
}

TEST(WorkloadErrors, UnknownDataKey) {
  json d = base();
  d["parallelism"]["data"]["zero_stage"] = 1;
  EXPECT_TRUE(rejects(d, "parallelism.data.zero_stage", kUnknown));
}

TEST(WorkloadErrors, UnknownTensorKey) {
  json d = base();
  d["parallelism"]["tensor"]["degree"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.degree", kUnknown));
}

TEST(WorkloadErrors, UnknownPipelineKey) {
  json d = base();
  d["parallelism"]["pipeline"]["micro_batches"] = 4;
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.micro_batches", kUnknown));
}

TEST(WorkloadErrors, UnknownExpertKey) {
  json d = moe_base();
  d["parallelism"]["expert"]["experts"] = 4;
  EXPECT_TRUE(rejects(d, "parallelism.expert.experts", kUnknown));
}

TEST(WorkloadErrors, UnknownOptimizationsKey) {
  json d = base();
  d["optimizations"]["overlap_allreduce"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_allreduce", kUnknown));
}

TEST(WorkloadErrors, UnknownPlacementKey) {
  json d = base();
  d["placement"]["gpus_per_node"] = 8;
  EXPECT_TRUE(rejects(d, "placement.gpus_per_node", kUnknown));
}

// ---------------------------------------------------------------------------------------------
// Enum spellings

TEST(WorkloadErrors, DtypeMisspelt) {
  json d = base();
  d["training"]["dtype"] = "bfloat16";
  EXPECT_TRUE(rejects(d, "training.dtype", "= \"bfloat16\" is not one of \"bf16\", \"fp16\", \"fp32\""));
}

TEST(WorkloadErrors, AttentionAndGradientDtypeMisspelt) {
  json d = base();
  d["model"]["attention"] = "flash2";
  EXPECT_TRUE(rejects(d, "model.attention", "= \"flash2\" is not one of \"unfused\", \"math\", \"flash\""));
  d = base();
  d["training"]["gradient_reduce_dtype"] = "float32";
  EXPECT_TRUE(rejects(d, "training.gradient_reduce_dtype", "= \"float32\" is not one of \"bf16\", \"fp16\", \"fp32\""));
}

TEST(WorkloadErrors, CheckpointingMisspelt) {
  json d = base();
  d["training"]["checkpointing"] = "ful";
  EXPECT_TRUE(rejects(d, "training.checkpointing", "= \"ful\" is not one of \"full\", \"none\", \"selective\""));
}

TEST(WorkloadErrors, OptimizerUnknown) {
  json d = base();
  d["training"]["optimizer"] = "sgd";
  EXPECT_TRUE(rejects(d, "training.optimizer", "= \"sgd\" is not one of \"adam\""));
}

TEST(WorkloadErrors, TensorModeMisspelt) {
  json d = base();
  d["parallelism"]["tensor"]["mode"] = "Megatron";
  EXPECT_TRUE(rejects(d, "parallelism.tensor.mode",
                      "= \"Megatron\" is not one of \"none\", \"megatron\", \"optimus\", \"axonn\""));
}

TEST(WorkloadErrors, ScheduleMisspelt) {
  json d = base();
  d["parallelism"]["pipeline"]["schedule"] = "1F1B";
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.schedule",
                      "= \"1F1B\" is not one of \"1f1b\", \"gpipe\", \"interleaved\", \"axonn\""));
}

// ---------------------------------------------------------------------------------------------
// Tensor keys of another mode

TEST(WorkloadErrors, OptimusKeyUnderMegatron) {
  json d = base();
  d["parallelism"]["tensor"]["q"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.q", "applies only to mode \"optimus\", not \"megatron\""));
}

TEST(WorkloadErrors, MegatronKeyUnderAxonn) {
  json d = axonn_base();
  d["parallelism"]["tensor"]["size"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "applies only to mode \"megatron\", not \"axonn\""));
}

TEST(WorkloadErrors, AxonnKeyUnderNone) {
  json d = no_tensor(base());
  d["parallelism"]["tensor"]["z"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.z", "applies only to mode \"axonn\", not \"none\""));
}

TEST(WorkloadErrors, TensorKeyWithoutMode) {
  json d = base();
  d["parallelism"]["tensor"].erase("mode");  // mode defaults to "none"
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "applies only to mode \"megatron\", not \"none\""));
}

// ---------------------------------------------------------------------------------------------
// Divisibility

TEST(WorkloadErrors, HeadsDoNotDivideHidden) {
  json d = base();
  d["model"]["heads"] = 6;
  EXPECT_TRUE(rejects(d, "model.heads", "= 6 does not divide model.hidden = 256"));
}

TEST(WorkloadErrors, MegatronSizeDoesNotDivideHeads) {
  json d = base();
  d["parallelism"]["tensor"]["size"] = 16;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "= 16 does not divide model.heads = 8"));
}

TEST(WorkloadErrors, MegatronSizeDoesNotDivideFfn) {
  json d = base();
  d["model"]["ffn_hidden"] = 1023;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "= 2 does not divide model.ffn_hidden = 1023"));
}

TEST(WorkloadErrors, MegatronSizeDoesNotDivideVocab) {
  json d = base();
  d["model"]["vocab"] = 50257;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "= 2 does not divide model.vocab = 50257"));
}

TEST(WorkloadErrors, SequenceParallelSizeDoesNotDivideSeqLen) {
  json d = base();
  d["model"]["seq_len"] = 127;
  d["parallelism"]["sequence_parallel"] = true;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "= 2 does not divide model.seq_len = 127"));
}

// The e2e test's rule, exactly: "parallelism.tensor.x = 3 does not divide model.hidden = 4096".
TEST(WorkloadErrors, AxonnXDoesNotDivideHidden) {
  json d = axonn_base();
  d["parallelism"]["tensor"]["x"] = 3;
  ASSERT_TRUE(rejects(d, "parallelism.tensor.x", "does not divide model.hidden"));
  try {
    parse_workload(d, "");
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.message(), "= 3 does not divide model.hidden = 4096");
    EXPECT_STREQ(e.what(), "parallelism.tensor.x = 3 does not divide model.hidden = 4096");
  }
}

TEST(WorkloadErrors, AxonnYDoesNotDivideHidden) {
  json d = axonn_base();
  d["parallelism"]["tensor"]["y"] = 3;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.y", "= 3 does not divide model.hidden = 4096"));
}

TEST(WorkloadErrors, AxonnXDoesNotDivideHeads) {
  json d = axonn_base();
  d["parallelism"]["tensor"]["x"] = 64;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.x", "= 64 does not divide model.heads = 32"));
}

TEST(WorkloadErrors, AxonnXDoesNotDivideVocab) {
  json d = axonn_base();
  d["model"]["vocab"] = 8191;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.x", "= 2 does not divide model.vocab = 8191"));
}

TEST(WorkloadErrors, AxonnZDoesNotDivideTokens) {
  json d = axonn_base();
  d["parallelism"]["tensor"]["z"] = 3;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.z", "= 3 does not divide training.micro_batch × model.seq_len = 128"));
}

TEST(WorkloadErrors, AxonnZDoesNotDivideWeightBlock) {
  json d = axonn_base();
  d["model"]["hidden"] = 2;
  d["model"]["heads"] = 1;
  d["parallelism"]["tensor"] = {{"mode", "axonn"}, {"x", 1}, {"y", 1}, {"z", 8}};
  EXPECT_TRUE(rejects(d, "parallelism.tensor.z", "= 8 does not divide the QKV weight block"));
}

TEST(WorkloadErrors, OptimusQDoesNotDivideHidden) {
  json d = optimus_base();
  d["parallelism"]["tensor"]["q"] = 3;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.q", "= 3 does not divide model.hidden = 256"));
}

TEST(WorkloadErrors, OptimusQDoesNotDivideTokens) {
  json d = optimus_base();
  d["model"]["seq_len"] = 127;
  EXPECT_TRUE(rejects(d, "parallelism.tensor.q", "= 2 does not divide training.micro_batch × model.seq_len = 127"));
}

// ---------------------------------------------------------------------------------------------
// Batch and pipeline

TEST(WorkloadErrors, GlobalBatchNotMultipleOfReplicas) {
  json d = base();
  d["training"]["global_batch"] = 7;
  EXPECT_TRUE(rejects(d, "training.global_batch",
                      "= 7 is not a multiple of data replicas × micro_batch = 2 "
                      "(parallelism.data.size × training.micro_batch)"));
}

TEST(WorkloadErrors, GlobalBatchNotMultipleOfMicroBatch) {
  json d = base();
  d["training"]["micro_batch"] = 3;
  EXPECT_TRUE(rejects(d, "training.global_batch", "= 8 is not a multiple of data replicas × micro_batch = 6"));
}

TEST(WorkloadErrors, GlobalBatchNotMultipleOfExpertReplicas) {
  json d = moe_base();
  d["training"]["global_batch"] = 6;
  EXPECT_TRUE(rejects(d, "training.global_batch",
                      "= 6 is not a multiple of data replicas × micro_batch = 4 "
                      "(data size × expert size × micro_batch)"));
}

TEST(WorkloadErrors, LayersNotDivisibleByStages) {
  json d = base();
  d["model"]["layers"] = 5;
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.stages × chunks", "= 2 does not divide model.layers = 5"));
}

TEST(WorkloadErrors, LayersNotDivisibleByStagesTimesChunks) {
  json d = base();
  d["parallelism"]["pipeline"] = {{"stages", 2}, {"schedule", "interleaved"}, {"chunks", 3}};
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.stages × chunks", "= 6 does not divide model.layers = 4"));
}

TEST(WorkloadErrors, InterleavedMicroBatchesNotMultipleOfStages) {
  json d = base();
  d["parallelism"]["pipeline"] = {{"stages", 2}, {"schedule", "interleaved"}, {"chunks", 2}};
  d["training"]["global_batch"] = 6;  // m = 3
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.stages", "= 2 does not divide the 3 micro-batches per iteration"));
}

TEST(WorkloadErrors, InterleavedSingleStage) {
  json d = base();
  d["parallelism"]["pipeline"] = {{"stages", 1}, {"schedule", "interleaved"}, {"chunks", 2}};
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.schedule", "\"interleaved\" needs parallelism.pipeline.stages > 1"));
}

TEST(WorkloadErrors, ChunksWithoutInterleaved) {
  json d = base();
  d["parallelism"]["pipeline"]["chunks"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.chunks", "= 2 requires schedule \"interleaved\""));
}

TEST(WorkloadErrors, PipelineLimitWithoutAxonnSchedule) {
  json d = base();
  d["parallelism"]["pipeline"]["pipeline_limit"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.pipeline.pipeline_limit", "applies only to schedule \"axonn\""));
}

TEST(WorkloadErrors, OffloadOptimizerWithFp32) {
  json d = base();
  d["training"]["dtype"] = "fp32";
  d["training"]["offload_optimizer"] = true;
  EXPECT_TRUE(rejects(d, "training.offload_optimizer", "needs dtype bf16 or fp16"));
}

// ---------------------------------------------------------------------------------------------
// Mixture of Experts

TEST(WorkloadErrors, ExpertSizeWithoutMoe) {
  json d = base();
  d["parallelism"]["expert"]["size"] = 2;
  EXPECT_TRUE(rejects(d, "parallelism.expert.size", "= 2 needs an MoE model (model.moe)"));
}

TEST(WorkloadErrors, ExpertSizeDoesNotDivideExperts) {
  json d = moe_base();
  d["parallelism"]["expert"]["size"] = 3;
  d["training"]["global_batch"] = 24;  // a multiple of data 2 × expert 3
  EXPECT_TRUE(rejects(d, "parallelism.expert.size", "= 3 does not divide model.moe.experts = 4"));
}

TEST(WorkloadErrors, MoeWithAxonn) {
  json d = axonn_base();
  d["model"]["moe"] = {{"experts", 4}};
  EXPECT_TRUE(rejects(d, "parallelism.tensor.mode", "= \"axonn\" is not supported with MoE"));
}

TEST(WorkloadErrors, MoeWithOptimus) {
  json d = optimus_base();
  d["model"]["moe"] = {{"experts", 4}};
  EXPECT_TRUE(rejects(d, "parallelism.tensor.mode", "= \"optimus\" is not supported with MoE"));
}

TEST(WorkloadErrors, DuplicateTokenDroppingWithoutMoe) {
  json d = base();
  d["optimizations"]["duplicate_token_dropping"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.duplicate_token_dropping", "needs an MoE model (model.moe)"));
}

TEST(WorkloadErrors, CommAwareCheckpointingWithoutMoe) {
  json d = base();
  d["optimizations"]["comm_aware_checkpointing"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.comm_aware_checkpointing", "needs an MoE model (model.moe)"));
}

TEST(WorkloadErrors, CommAwareCheckpointingWithoutFullCheckpointing) {
  json d = moe_base();
  d["training"]["checkpointing"] = "selective";
  d["optimizations"]["comm_aware_checkpointing"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.comm_aware_checkpointing", "needs training.checkpointing = \"full\""));
}

TEST(WorkloadErrors, DuplicateTokenDroppingWithoutTensorParallelism) {
  json d = no_tensor(moe_base());
  d["optimizations"]["duplicate_token_dropping"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.duplicate_token_dropping", "has no effect without tensor parallelism"));
}

TEST(WorkloadErrors, MoeImbalanceWithCapacityFactor) {
  json d = moe_base();
  d["model"]["moe"]["imbalance"] = 1.5;
  EXPECT_TRUE(rejects(d, "model.moe.imbalance", "applies only to dropless routing"));
}

// ---------------------------------------------------------------------------------------------
// Options without effect, and unsupported combinations

TEST(WorkloadErrors, OverlapAllReduceWithoutTensorParallelism) {
  json d = no_tensor(base());
  d["optimizations"]["overlap_all_reduce"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_all_reduce", "has no effect without tensor parallelism"));
}

TEST(WorkloadErrors, OverlapAllGatherWithoutSharding) {
  json d = base();
  d["optimizations"]["overlap_all_gather"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_all_gather", kNoShard));
}

TEST(WorkloadErrors, OverlapReduceScatterWithoutSharding) {
  json d = axonn_base();  // z = 1: nothing sharded
  d["optimizations"]["overlap_reduce_scatter"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_reduce_scatter", kNoShard));
}

TEST(WorkloadErrors, CacheAllGatherWithoutSharding) {
  json d = base();
  d["optimizations"]["cache_all_gather"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.cache_all_gather", kNoShard));
}

TEST(WorkloadErrors, CacheAllGatherWithoutCheckpointing) {
  json d = base();
  d["parallelism"]["data"]["zero"] = 3;
  d["training"]["checkpointing"] = "none";
  d["optimizations"]["cache_all_gather"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.cache_all_gather", "has no effect without activation checkpointing"));
}

TEST(WorkloadErrors, OverlapGradientSyncWithoutDataParallelism) {
  json d = base();
  d["parallelism"]["data"]["size"] = 1;
  d["optimizations"]["overlap_gradient_sync"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_gradient_sync", "has no effect without data parallelism"));
}

TEST(WorkloadErrors, OverlapParamGatherNeedsShardedOptimizerAndReplicas) {
  json d = base();
  d["optimizations"]["overlap_param_gather"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_param_gather", "parallelism.data.zero is 0"));
  d["parallelism"]["data"] = {{"size", 1}, {"zero", 1}};
  EXPECT_TRUE(rejects(d, "optimizations.overlap_param_gather", "has no effect without data parallelism"));
}

TEST(WorkloadErrors, OverlapTensorCommNeedsSequenceParallelismAndDivisibleTokens) {
  json d = base();
  d["optimizations"]["overlap_tensor_comm"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.overlap_tensor_comm", "with parallelism.sequence_parallel"));
  d["parallelism"]["sequence_parallel"] = true;
  d["model"]["seq_len"] = 130;  // 130 tokens split into 2 tensor shards but not 4 pipeline chunks
  EXPECT_TRUE(rejects(d, "optimizations.overlap_tensor_comm", "(seq_len x micro_batch = 130) must be a multiple"));
}

TEST(WorkloadErrors, OverlapsTheStackLacks) {
  json d = base();
  d["parallelism"]["data"]["zero"] = 1;
  d["parallelism"]["sequence_parallel"] = true;
  d["optimizations"]["overlap_param_gather"] = true;
  d["framework"] = {{"profile", "megatron-lm-2022"}};
  EXPECT_TRUE(rejects(d, "optimizations.overlap_param_gather", "framework \"megatron-lm-2022\" all-gathers"));
  d["optimizations"] = {{"overlap_tensor_comm", true}};
  EXPECT_TRUE(rejects(d, "optimizations.overlap_tensor_comm", "does not pipeline tensor-parallel collectives"));
  d["framework"] = {{"profile", "megatron-core"}};
  d["optimizations"]["overlap_param_gather"] = true;
  EXPECT_NO_THROW(parse_workload(d, ""));
}

TEST(WorkloadErrors, ScatterGatherWithoutPipeline) {
  json d = base();
  d["parallelism"]["pipeline"] = {{"stages", 1}};
  d["optimizations"]["scatter_gather"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.scatter_gather",
                      "needs megatron tensor parallelism (size > 1) and more than one pipeline stage"));
}

TEST(WorkloadErrors, ScatterGatherWithoutTensorParallelism) {
  json d = no_tensor(base());
  d["optimizations"]["scatter_gather"] = true;
  EXPECT_TRUE(rejects(d, "optimizations.scatter_gather", "needs megatron tensor parallelism"));
}

TEST(WorkloadErrors, SequenceParallelWithoutTensorParallelism) {
  json d = no_tensor(base());
  d["parallelism"]["sequence_parallel"] = true;
  EXPECT_TRUE(rejects(d, "parallelism.sequence_parallel", "requires parallelism.tensor.mode = \"megatron\""));
}

TEST(WorkloadErrors, SequenceParallelWithAxonn) {
  json d = axonn_base();
  d["parallelism"]["sequence_parallel"] = true;
  EXPECT_TRUE(rejects(d, "parallelism.sequence_parallel", "requires parallelism.tensor.mode = \"megatron\""));
}

TEST(WorkloadErrors, SequenceParallelWithOptimus) {
  json d = optimus_base();
  d["parallelism"]["sequence_parallel"] = true;
  EXPECT_TRUE(rejects(d, "parallelism.sequence_parallel", "requires parallelism.tensor.mode = \"megatron\""));
}

TEST(WorkloadErrors, Zero3WithAxonn) {
  json d = axonn_base();
  d["parallelism"]["data"]["zero"] = 3;
  EXPECT_TRUE(rejects(d, "parallelism.data.zero", "= 3 is not supported with tensor mode \"axonn\""));
}

TEST(WorkloadErrors, Zero3WithOptimus) {
  json d = optimus_base();
  d["parallelism"]["data"]["zero"] = 3;
  EXPECT_TRUE(rejects(d, "parallelism.data.zero", "= 3 is not supported with tensor mode \"optimus\""));
}

// ---------------------------------------------------------------------------------------------
// Placement

TEST(WorkloadErrors, PlacementOrderUnknownAxis) {
  json d = base();
  d["placement"]["order"] = json::array({"tensor", "pipe", "dat"});
  EXPECT_TRUE(rejects(d, "placement.order[2]", "= \"dat\" is not an axis of this grid (tensor, pipe, data)"));
}

TEST(WorkloadErrors, PlacementOrderExpertAxisOfDenseModel) {
  json d = base();
  d["placement"]["order"] = json::array({"tensor", "expert", "pipe", "data"});
  EXPECT_TRUE(rejects(d, "placement.order[1]", "= \"expert\" is not an axis of this grid"));
}

TEST(WorkloadErrors, PlacementTileMustDivideTheAxis) {
  json d = optimus_base();
  d["placement"]["tile"] = {{"col", 3}};
  EXPECT_TRUE(rejects(d, "placement.tile.col", "= 3 does not divide the axis size 2"));
}

TEST(WorkloadErrors, PlacementTileValues) {
  json d = optimus_base();
  d["placement"]["tile"] = {{"row", 0}};
  EXPECT_TRUE(rejects(d, "placement.tile.row", "= 0 is out of range"));
  d["placement"]["tile"] = json::object();
  EXPECT_TRUE(rejects(d, "placement.tile", "is empty"));
}

TEST(WorkloadErrors, PlacementOrderDuplicateAxis) {
  json d = base();
  d["placement"]["order"] = json::array({"tensor", "tensor", "pipe", "data"});
  EXPECT_TRUE(rejects(d, "placement.order[1]", "= \"tensor\" appears twice"));
}

TEST(WorkloadErrors, PlacementOrderMissingAxis) {
  json d = base();
  d["placement"]["order"] = json::array({"tensor", "pipe"});
  EXPECT_TRUE(rejects(d, "placement.order", "does not list axis \"data\""));
}

TEST(WorkloadErrors, PlacementOrderMissingExpertAxis) {
  json d = moe_base();  // the expert axis (size 2) exists for an MoE model
  d["placement"]["order"] = json::array({"tensor", "pipe", "data"});
  EXPECT_TRUE(rejects(d, "placement.order", "does not list axis \"expert\" (size 2)"));
}

// Axes of size 1 move no rank and may be left out (README, placement).
TEST(WorkloadErrors, PlacementOrderMayOmitSizeOneAxis) {
  json d = moe_base();
  d["parallelism"]["expert"]["size"] = 1;
  d["parallelism"]["pipeline"] = {{"stages", 1}};
  d["placement"]["order"] = json::array({"data", "tensor"});
  EXPECT_NO_THROW(parse_workload(d, ""));
}

// ---------------------------------------------------------------------------------------------
// Sources: the file name (or source label) prefixes the path.

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("paratwin-workload-errors-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json"))
                .string();
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(WorkloadErrors, FileNamePrefixesPath) {
  json d = axonn_base();
  d["parallelism"]["tensor"]["x"] = 3;
  TempFile file(d.dump(2));
  try {
    load_workload_file(file.path());
    FAIL() << "accepted";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.path(), file.path() + ": parallelism.tensor.x");
    EXPECT_EQ(e.message(), "= 3 does not divide model.hidden = 4096");
    EXPECT_EQ(std::string(e.what()), file.path() + ": parallelism.tensor.x = 3 does not divide model.hidden = 4096");
  }
}

TEST(WorkloadErrors, FileNamePrefixesUnknownKey) {
  json d = base();
  d["model"]["hiden"] = 256;
  TempFile file(d.dump());
  try {
    load_workload_file(file.path());
    FAIL() << "accepted";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.path(), file.path() + ": model.hiden");
    EXPECT_NE(e.message().find(kUnknown), std::string::npos) << e.message();
  }
}

TEST(WorkloadErrors, FileNotJsonNamesFile) {
  TempFile file("this is not JSON");
  try {
    load_workload_file(file.path());
    FAIL() << "accepted";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.path(), file.path());
    EXPECT_EQ(e.message().rfind("is not valid JSON", 0), 0u) << e.message();
  }
}

TEST(WorkloadErrors, MissingFile) {
  const std::string path = "/nonexistent-dir/paratwin/no-such-workload.json";
  try {
    load_workload_file(path);
    FAIL() << "accepted";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.message(), "cannot be opened");
  }
}

TEST(WorkloadErrors, SourcePrefixesTopLevelPath) {
  EXPECT_TRUE(rejects_text("[1, 2]", "inline", "inline: (top level)", "expected a JSON object, found array"));
}

// ---------------------------------------------------------------------------------------------
// Inputs at the edges of number representation and of the integer arithmetic in validate().

// A JSON number beyond double's range makes nlohmann throw out_of_range (406), not parse_error; it
// must still come out as a WorkloadError naming the source.
TEST(WorkloadErrors, NumberBeyondDoubleRange) {
  std::string text = base().dump();
  text.replace(text.find("\"global_batch\":8"), 16, "\"global_batch\":1e400");
  EXPECT_TRUE(rejects_text(text, "w.json", "w.json", "is not valid JSON"));
}

// nlohmann's is_number_integer() is also true for unsigned numbers: 2^64 - 1 must not be read
// through get<int64_t>() as -1 ("= -1 is out of range") but reported with its own value.
TEST(WorkloadErrors, UnsignedBeyondInt64NamesItsValue) {
  json d = base();
  d["model"]["vocab"] = UINT64_MAX;
  EXPECT_TRUE(rejects(d, "model.vocab", "= 18446744073709551615 is out of range [1, 16777216]"));
}

// The product of the axis sizes is 2^20 · 2^20 · 4 · 2^22 = 2^64: in int64 it wraps to 0 ranks
// (and is undefined behaviour); the limit check must see the true product.
TEST(WorkloadErrors, RankProductOverflow) {
  json d = axonn_base();
  d["model"] = {{"layers", 4}, {"hidden", 1 << 20}, {"heads", 1 << 20}, {"seq_len", 128}, {"vocab", 1 << 20}};
  d["training"] = {{"global_batch", 1 << 22}};
  d["parallelism"] = {{"data", {{"size", 1 << 22}}},
                      {"tensor", {{"mode", "axonn"}, {"x", 1 << 20}, {"y", 1 << 20}}},
                      {"pipeline", {{"stages", 4}}}};
  EXPECT_TRUE(rejects(d, "parallelism", "ranks, more than the limit of 4194304"));
}

TEST(WorkloadErrors, MicroBatchTokensAboveLimit) {
  json d = base();
  d["model"]["seq_len"] = 1 << 24;
  d["training"]["micro_batch"] = 1 << 10;
  d["training"]["global_batch"] = 1 << 11;
  EXPECT_TRUE(rejects(d, "training.micro_batch", "× model.seq_len exceeds"));
}

// An explicit empty list is not "absent": it lists no axis.
TEST(WorkloadErrors, PlacementOrderEmpty) {
  json d = base();
  d["placement"]["order"] = json::array();
  EXPECT_TRUE(rejects(d, "placement.order", "is empty"));
}

TEST(WorkloadErrors, DuplicateKeysNameTheirPath) {
  EXPECT_TRUE(rejects_text(R"({"name": "a", "name": "b"})", "w.json", "w.json", "key \"name\" appears twice"));
  EXPECT_TRUE(rejects_text(R"({"parallelism": {"tensor": {"x": 2, "mode": "axonn", "x": 4}}})", "w.json", "w.json",
                           "parallelism.tensor: key \"x\" appears twice in one object"));
  EXPECT_TRUE(
      rejects_text(R"({"a": [{"k": 1}, {"k": 2, "k": 3}]})", "w.json", "w.json", "a[]: key \"k\" appears twice"));
  // The same key in two objects is fine (this reaches the workload's own checks).
  EXPECT_TRUE(rejects_text(R"({"a": {"k": 1}, "b": {"k": 2}})", "w.json", "w.json: name", "is required"));
}

TEST(WorkloadErrors, FoldersAndSpecialFilesAreNotRead) {
  const auto folder = std::filesystem::temp_directory_path();
  try {
    load_workload_file(folder.string());
    FAIL() << "accepted a folder";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.message(), "is a folder, not a file");
  }
  try {
    load_workload_file("/dev/zero");
    FAIL() << "accepted /dev/zero";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.path(), "/dev/zero");
    EXPECT_NE(e.message().find("not a regular file"), std::string::npos) << e.message();
  }
}

// A regular file whose listed size is 0 but whose content is far larger (the kernel's page map of this
// process: 8 bytes per page of its address space, terabytes under AddressSanitizer) was read whole.
TEST(WorkloadErrors, FilesLargerThanTheirListedSizeAreNotReadWhole) {
  if (!std::ifstream("/proc/self/pagemap")) GTEST_SKIP() << "no /proc/self/pagemap to read";
  try {
    load_workload_file("/proc/self/pagemap");
    FAIL() << "accepted /proc/self/pagemap";
  } catch (const WorkloadError& e) {
    EXPECT_EQ(e.path(), "/proc/self/pagemap");
    EXPECT_EQ(e.message(), "holds more than the 256 MiB an input file may have");
  }
}

// ---------------------------------------------------------------------------------------------
// Llama-class layer options

TEST(WorkloadErrors, KvHeadsMustDivideHeads) {
  json d = base();
  d["model"]["kv_heads"] = 3;
  EXPECT_TRUE(rejects(d, "model.kv_heads", "does not divide model.heads = 8"));
  d["model"]["kv_heads"] = 16;
  EXPECT_TRUE(rejects(d, "model.kv_heads", "out of range [1, 8]"));
}

TEST(WorkloadErrors, TensorRanksMustDivideKvHeads) {
  json d = base();
  d["model"]["kv_heads"] = 1;  // multi-query attention over 2 tensor ranks
  EXPECT_TRUE(rejects(d, "parallelism.tensor.size", "does not divide model.kv_heads = 1"));
  d["model"]["kv_heads"] = 2;
  EXPECT_NO_THROW(parse_workload(d, ""));
}

TEST(WorkloadErrors, LayerOptionsAreSpelledAsListed) {
  for (const auto& [key, value] : {std::pair{"mlp", "silu"}, {"norm", "batchnorm"}, {"position", "rotary"}}) {
    json d = base();
    d["model"][key] = value;
    EXPECT_TRUE(rejects(d, std::string("model.") + key, "is not one of")) << key;
  }
}

TEST(WorkloadErrors, OptimusAndAxonnRefuseGroupedQueryAttentionAndGatedMlps) {
  json d = optimus_base();
  d["model"]["kv_heads"] = 2;
  EXPECT_TRUE(rejects(d, "model.kv_heads", "grouped-query attention is not modelled with tensor mode \"optimus\""));
  d = axonn_base();
  d["model"]["mlp"] = "swiglu";
  EXPECT_TRUE(rejects(d, "model.mlp", "a gated MLP is not modelled with tensor mode \"axonn\""));
}

}  // namespace
}  // namespace paratwin::workloads
