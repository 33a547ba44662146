// Framework profiles: every shipped profile parses and names a source for each value it sets; a
// workload's overrides win and are written back as overrides only; the stack's features bound what a
// workload may ask; a workload that names no stack gets the current one that runs its configuration.
#include "workloads/framework.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "workloads/default_stack.hpp"
#include "workloads/error.hpp"
#include "workloads/stack_features.hpp"

namespace pw = paratwin::workloads;
using nlohmann::json;

namespace {

json data_parallel(int64_t zero) {
  json j =
      json::parse(R"({"name": "dp", "model": {"layers": 4, "hidden": 256, "heads": 4, "seq_len": 128, "vocab": 1024},
    "training": {"global_batch": 16, "micro_batch": 2},
    "parallelism": {"data": {"size": 4}}})");
  j["parallelism"]["data"]["zero"] = zero;
  return j;
}

json megatron(const std::string& profile) {
  json j =
      json::parse(R"({"name": "tp", "model": {"layers": 4, "hidden": 256, "heads": 4, "seq_len": 128, "vocab": 1024},
    "training": {"global_batch": 8, "micro_batch": 1},
    "parallelism": {"data": {"size": 2}, "tensor": {"mode": "megatron", "size": 2}, "pipeline": {"stages": 2}}})");
  if (!profile.empty()) j["framework"] = {{"profile", profile}};
  return j;
}

}  // namespace

TEST(Framework, EveryShippedProfileParsesWithASourcePerValue) {
  for (const auto& name : pw::builtin_framework_names()) {
    SCOPED_TRACE(name);
    const pw::Framework f = pw::builtin_framework(name);
    EXPECT_EQ(f.profile, name);
    EXPECT_FALSE(f.description.empty());
    ASSERT_FALSE(f.sources.empty());
    EXPECT_EQ(f.sources.front().key, "kernel_efficiency");
    for (const auto& s : f.sources) EXPECT_GT(s.source.size(), 10u) << s.key;
  }
}

TEST(Framework, ClassesFollowTheKernelEfficiencyUnlessGiven) {
  const auto f = pw::builtin_framework("megatron-lm-2021");
  EXPECT_LT(f.kernel_efficiency, 1.0);
  EXPECT_EQ(f.attention_efficiency, f.kernel_efficiency);
  EXPECT_EQ(f.elementwise_efficiency, f.kernel_efficiency);
  EXPECT_EQ(f.optimizer_efficiency, f.kernel_efficiency);
}

TEST(Framework, MechanismsAsTheStacksCodeHasThem) {
  // DeepSpeed 2021: a gather per leaf module, serialised (facts in workloads/frameworks/deepspeed-2021.json).
  const auto ds21 = pw::builtin_framework("deepspeed-2021");
  EXPECT_EQ(ds21.sharding.gather_unit, pw::GatherUnit::submodule);
  EXPECT_EQ(ds21.sharding.prefetch, 0);
  EXPECT_TRUE(ds21.broadcast_p2p);
  EXPECT_EQ(ds21.features.zero_with_pipeline, 1);
  const auto fsdp = pw::builtin_framework("fsdp-2023");
  EXPECT_EQ(fsdp.sharding.gather_unit, pw::GatherUnit::layer);
  EXPECT_EQ(fsdp.sharding.prefetch, 1);
  EXPECT_FALSE(fsdp.sharding.regather_after_recompute);
  EXPECT_EQ(fsdp.gradient_bucket_bytes, 25.0 * 1024 * 1024);
}

TEST(Framework, WorkloadOverridesWinAndAreWrittenBackAlone) {
  json j = data_parallel(3);
  j["framework"] = {{"profile", "fsdp2"}, {"sharding", {{"prefetch", 2}}}, {"gradient_bucket_bytes", 1e6}};
  const auto w = paratwin::test::workload(j);
  EXPECT_EQ(w.framework.sharding.prefetch, 2);
  EXPECT_EQ(w.framework.gradient_bucket_bytes, 1e6);
  bool marked = false;
  for (const auto& s : w.framework.sources)
    if (s.key == "sharding.prefetch") marked = s.source == "set in the workload";
  EXPECT_TRUE(marked);
  const json back = pw::to_workload_json(w.framework);
  EXPECT_EQ(back, (json{{"profile", "fsdp2"}, {"gradient_bucket_bytes", 1e6}, {"sharding", {{"prefetch", 2}}}}));
  EXPECT_EQ(paratwin::test::workload(pw::to_json(w)).framework.sharding.prefetch, 2);
}

TEST(Framework, AnUnknownMechanismKeyIsAnError) {
  json j = data_parallel(3);
  j["framework"] = {{"profile", "fsdp2"}, {"sharding", {{"prefetch_depth", 2}}}};
  EXPECT_THROW(paratwin::test::workload(j), pw::WorkloadError);
}

TEST(StackFeatures, AWorkloadCannotClaimWhatItsStackLacks) {
  json sp = megatron("megatron-lm-2021");
  sp["parallelism"]["sequence_parallel"] = true;
  try {
    paratwin::test::workload(sp);
    FAIL() << "megatron-lm-2021 with sequence parallelism was accepted";
  } catch (const pw::WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.sequence_parallel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("megatron-lm-2021"), std::string::npos) << e.what();
  }
  json zero2 = megatron("megatron-lm-2022");
  zero2["parallelism"]["data"]["zero"] = 2;  // Megatron-LM has no ZeRO-2
  EXPECT_THROW(paratwin::test::workload(zero2), pw::WorkloadError);
  json pipe3 = megatron("megatron-deepspeed");
  pipe3["parallelism"]["data"]["zero"] = 3;  // DeepSpeed's pipeline engine refuses ZeRO-2/3
  const auto w = [&] {
    pw::Workload x = paratwin::test::workload(megatron("megatron-deepspeed"));
    x.parallel.zero_stage = 3;
    return x;
  }();
  const auto missing = pw::missing_stack_features(w);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].path, "parallelism.data.zero");
  EXPECT_NE(missing[0].message.find("without pipeline stages"), std::string::npos) << missing[0].message;
  EXPECT_THROW(paratwin::test::workload(pipe3), pw::WorkloadError);
  json flash = megatron("megatron-lm-2022");
  flash["model"]["attention"] = "flash";
  EXPECT_THROW(paratwin::test::workload(flash), pw::WorkloadError);
  flash["framework"]["profile"] = "megatron-core";
  EXPECT_NO_THROW(paratwin::test::workload(flash));
}

TEST(DefaultStack, AWorkloadNamingNoneGetsTheCurrentStackOfItsConfiguration) {
  const auto tp = pw::parse_workload(megatron(""), "");
  EXPECT_EQ(tp.framework.profile, "megatron-core");
  EXPECT_FALSE(tp.framework.chosen_because.empty());
  EXPECT_NE(pw::stack_label(tp.framework).find("chosen for tensor, pipeline or context parallelism"),
            std::string::npos);
  EXPECT_EQ(pw::parse_workload(data_parallel(3), "").framework.profile, "fsdp2");
  EXPECT_EQ(pw::parse_workload(data_parallel(2), "").framework.profile, "deepspeed");
  EXPECT_EQ(pw::parse_workload(data_parallel(0), "").framework.profile, "megatron-core");
  // FSDP2 has no MoE layers: a ZeRO-3 MoE goes to DeepSpeed.
  json moe = data_parallel(3);
  moe["model"]["moe"] = {{"experts", 4}};
  EXPECT_EQ(pw::parse_workload(moe, "").framework.profile, "deepspeed");
  // Named: kept, and said so without a reason.
  const auto named = pw::parse_workload(megatron("generic"), "");
  EXPECT_EQ(named.framework.profile, "generic");
  EXPECT_EQ(pw::stack_label(named.framework), "framework generic");
}
