// The dimensions the configuration search varies beyond the family's axes: micro-batch, interleaved
// chunks, sequence parallelism, recomputation and ZeRO stage. Counts and the rules that decide where
// each applies; every ranked workload validates and lowers; skipping variants by dominance ranks as
// estimating every one does. No SimGrid here.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "sim/config_space.hpp"
#include "sim/search.hpp"
#include "topology/machine.hpp"
#include "workloads/lower.hpp"
#include "workloads/stack_features.hpp"
#include "workloads/workload.hpp"

namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

namespace {

pw::Workload example(const std::string& file) {
  return pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + file);
}

const ps::Vary kNothing = ps::Vary::nothing();

size_t variants(const std::vector<ps::Configuration>& cs) {
  size_t n = 0;
  for (const auto& c : cs) n += c.variants.size();
  return n;
}

}  // namespace

TEST(SearchSpace, PipelinedConfigurationsHaveTheirMicroBatchAndChunks) {
  // tiny-pp-1f1b: 4 layers, batch 8. t·p·d = 4: (1,1,4) (2,1,2) (4,1,1) without a pipeline, one
  // configuration each (the micro-batch a variant); (1,2,2): share 4, mb 1, 2, 4 × v 1, 2 (2·2 | 4) = 6;
  // (1,4,1): share 8, mb 1, 2, 4, 8 × v 1 (4·2 ∤ 4) = 4; (2,2,1): 4 mb × 2 v = 8. 21 in all.
  const auto base = example("tiny-pp-1f1b.json");
  const auto cs = ps::configurations(base, ps::Family::ptdp, 4);
  EXPECT_EQ(cs.size(), 21u);
  std::set<std::string> labels;
  for (const auto& c : cs) {
    const auto& p = c.workload.parallel.pipeline;
    EXPECT_EQ(base.model.layers % (p.stages * p.chunks), 0) << c.axes;
    EXPECT_EQ(p.chunks > 1, p.schedule == pw::Schedule::interleaved) << c.axes;
    EXPECT_EQ(c.micro_batch_is_knob, p.stages == 1) << c.axes;
    // With a pipeline every variant has the same micro-batch; without, the largest comes first.
    for (const auto& k : c.variants) {
      if (p.stages > 1) {
        EXPECT_EQ(k.micro_batch, c.variants.front().micro_batch);
      } else {
        EXPECT_LE(k.micro_batch, c.variants.front().micro_batch);
      }
      labels.insert(c.label(k));
    }
  }
  EXPECT_EQ(labels.size(), variants(cs)) << "labels must tell every variant apart";
  EXPECT_TRUE(labels.count("t2 p2 d1 mb4 v2 sp sel")) << "chunks, sequence parallelism and recomputation in the label";
  EXPECT_TRUE(labels.count("t1 p2 d2 mb1 none zero3"));
  // Nothing varied: one configuration per split, the base's micro-batch (2) and one variant each.
  const auto fixed = ps::configurations(base, ps::Family::ptdp, 4, kNothing);
  EXPECT_EQ(fixed.size(), 6u);
  EXPECT_EQ(variants(fixed), 6u);
  for (const auto& c : fixed) EXPECT_EQ(c.variants.front().micro_batch, base.training.micro_batch) << c.axes;
}

TEST(SearchSpace, VariantsApplyOnlyWhereTheRulesAllowThem) {
  const auto base = example("tiny-pp-1f1b.json");
  for (const auto& c : ps::configurations(base, ps::Family::ptdp, 4)) {
    const auto& w = c.workload;
    const bool tp = w.parallel.tensor.size > 1, replicas = w.batch_replicas() > 1;
    std::set<int64_t> zero;
    std::set<bool> sp;
    std::set<pw::Checkpointing> ckpt;
    for (const auto& k : c.variants) {
      zero.insert(k.zero);
      sp.insert(k.sequence_parallel);
      ckpt.insert(k.checkpointing);
    }
    EXPECT_EQ(zero.size(), replicas ? 4u : 1u) << c.axes;  // ZeRO over data parallelism only
    EXPECT_EQ(sp.size(), tp ? 2u : 1u) << c.axes;          // sequence parallelism with t > 1 only
    EXPECT_EQ(ckpt.size(), 3u) << c.axes;
  }
  // AxoNN: ZeRO up to 2 (the z axis shards weights), no sequence parallelism.
  const auto dense = example("tiny-gpt-3d.json");
  for (const auto& c : ps::configurations(dense, ps::Family::four_d, 8)) {
    std::set<int64_t> zero;
    for (const auto& k : c.variants) {
      zero.insert(k.zero);
      EXPECT_FALSE(k.sequence_parallel) << c.label(k);
    }
    const std::set<int64_t> expected = c.workload.parallel.data > 1 ? std::set<int64_t>{0, 1, 2} : std::set<int64_t>{0};
    EXPECT_EQ(zero, expected) << c.axes;
  }
  // TED: ZeRO with more than one batch replica (data × expert).
  const auto moe = example("tiny-moe-ted.json");
  for (const auto& c : ps::configurations(moe, ps::Family::ted, 4))
    for (const auto& k : c.variants) EXPECT_TRUE(k.zero == 0 || c.workload.batch_replicas() > 1) << c.label(k);
}

TEST(SearchSpace, TheDominanceRulesOrderTimeAndMemory) {
  const auto base = example("tiny-pp-1f1b.json");
  const auto cs = ps::configurations(base, ps::Family::ptdp, 4);
  const auto flat = std::find_if(cs.begin(), cs.end(), [](const auto& c) { return c.axes == "t2 p1 d2"; });
  ASSERT_NE(flat, cs.end());
  using C = pw::Checkpointing;
  const ps::Knobs none8{C::none, 1, false, 8}, full8{C::full, 1, false, 8}, none4{C::none, 1, false, 4};
  const ps::Knobs zero2{C::none, 2, false, 8}, zero3{C::none, 3, false, 8}, zero0{C::none, 0, false, 8};
  EXPECT_TRUE(ps::no_slower(*flat, none8, full8));
  EXPECT_TRUE(ps::no_slower(*flat, none8, none4));  // no pipeline: a larger micro-batch
  // ZeRO-2 reduce-scatters every micro-batch's gradients during its backward, ZeRO-1 once after the
  // last: neither dominates, each is compared with itself only.
  EXPECT_FALSE(ps::no_slower(*flat, none8, zero2));
  EXPECT_FALSE(ps::no_slower(*flat, zero2, none8));
  // 3 adds weight gathers but overlaps its gradient reduce-scatters: compared with 3 only.
  EXPECT_FALSE(ps::no_slower(*flat, zero2, zero3));
  EXPECT_FALSE(ps::no_slower(*flat, zero3, none8));
  // ZeRO 0 against 1: faster for small models (no all-gather after the step), slower for large ones.
  EXPECT_FALSE(ps::no_slower(*flat, none8, zero0));
  EXPECT_FALSE(ps::no_slower(*flat, zero0, none8));
  EXPECT_FALSE(ps::no_slower(*flat, none8, {C::none, 1, true, 8}));
  EXPECT_TRUE(ps::no_larger(full8, none8));
  EXPECT_TRUE(ps::no_larger(zero3, none8));
  EXPECT_TRUE(ps::no_larger(none4, none8));
  EXPECT_FALSE(ps::no_larger(none8, full8));
}

TEST(SearchSpace, SkippingDominatedVariantsRanksAsEstimatingEveryOne) {
  struct Case {
    std::string file, machine;
    int64_t gpus;
  };
  for (const Case& k : {Case{"gpt-20b-perlmutter-32.json", "perlmutter", 32},
                        Case{"tiny-pp-1f1b.json", "perlmutter", 8}, Case{"tiny-moe-ted.json", "perlmutter", 8}}) {
    const auto base = example(k.file);
    const auto machine = pt::resolve_machine(k.machine);
    const pt::Topology topology(machine.slice((k.gpus + machine.devices_per_node() - 1) / machine.devices_per_node()));
    ps::SearchOptions options;
    options.gpus = k.gpus;
    const auto fast = ps::search(base, topology, options);
    options.exhaustive = true;
    const auto all = ps::search(base, topology, options);
    EXPECT_EQ(all.skipped, 0) << k.file;
    EXPECT_EQ(all.estimated + all.broken, all.variants) << k.file;
    EXPECT_EQ(fast.estimated + fast.skipped + fast.broken, fast.variants) << k.file;
    EXPECT_GT(fast.skipped, 0) << k.file;
    EXPECT_EQ(fast.variants, all.variants) << k.file;
    EXPECT_LT(fast.estimated, all.estimated) << k.file;
    ASSERT_EQ(fast.ranked.size(), all.ranked.size()) << k.file;
    EXPECT_EQ(fast.rejected.size(), all.rejected.size()) << k.file;
    for (size_t i = 0; i < fast.ranked.size(); ++i) {
      EXPECT_EQ(fast.ranked[i].label, all.ranked[i].label) << k.file << " rank " << i + 1;
      EXPECT_DOUBLE_EQ(fast.ranked[i].estimate.iteration, all.ranked[i].estimate.iteration) << k.file;
    }
  }
}

TEST(SearchSpace, EveryRankedWorkloadValidatesLowersAndRoundTrips) {
  for (const std::string file : {"gpt-20b-perlmutter-32.json", "tiny-pp-1f1b.json", "tiny-moe-ted.json"}) {
    const auto base = example(file);
    const auto machine = pt::resolve_machine("perlmutter");
    const int64_t gpus = file == "gpt-20b-perlmutter-32.json" ? 32 : 8;
    const pt::Topology topology(machine.slice(gpus / machine.devices_per_node()));
    ps::SearchOptions options;
    options.gpus = gpus;
    const auto r = ps::search(base, topology, options);
    ASSERT_FALSE(r.ranked.empty()) << file;
    std::set<std::string> labels;
    for (const auto& c : r.ranked) {
      const auto& w = c.workload;
      EXPECT_NO_THROW(pw::validate(w)) << c.label;
      EXPECT_EQ(w.total_ranks(), gpus) << c.label;
      EXPECT_EQ(w.training.global_batch % (w.batch_replicas() * w.training.micro_batch), 0) << c.label;
      EXPECT_NE(c.label.find(" mb" + std::to_string(w.training.micro_batch)), std::string::npos) << c.label;
      const auto back = pw::parse_workload(pw::to_json(w), "ranked");
      EXPECT_EQ(pw::to_json(back), pw::to_json(w)) << c.label;
      pw::LowerOptions lo;
      lo.devices_per_node = machine.devices_per_node();
      EXPECT_EQ(pw::lower(back, lo).grid.size(), gpus) << c.label;
      labels.insert(c.label);
    }
    EXPECT_EQ(labels.size(), r.ranked.size()) << file << ": one row per configuration";
  }
}

// A split without tensor parallelism is described as such (mode none, no tensor axis in the placement),
// so that a stack without Megatron's tensor parallelism (FSDP1) can run it; with hybrid sharding the
// replica axis is placed right outside the data axis.
TEST(SearchSpace, SplitsWithoutTensorParallelismNeedNoTensorMode) {
  const auto base = example("llama2-7b-fms-hsdp-a100-128.json");
  const auto cs = ps::configurations(base, ps::Family::ptdp, 128, kNothing);
  size_t plain = 0;
  for (const auto& c : cs) {
    const auto& w = c.workload;
    const auto& order = w.placement.order;
    EXPECT_EQ(w.parallel.tensor.size > 1, w.parallel.tensor.mode == pw::TensorMode::megatron) << c.axes;
    EXPECT_EQ(std::count(order.begin(), order.end(), "tensor"), w.parallel.tensor.size > 1 ? 1 : 0) << c.axes;
    const auto data = std::find(order.begin(), order.end(), "data");
    ASSERT_NE(data, order.end()) << c.axes;
    ASSERT_NE(data + 1, order.end()) << c.axes;
    EXPECT_EQ(*(data + 1), "replica") << c.axes;
    if (w.parallel.tensor.size == 1 && w.parallel.pipeline.stages == 1) ++plain;
  }
  EXPECT_EQ(plain, 1u);
}

namespace {

// The configurations whose axes label contains `part`.
std::vector<ps::Configuration> labelled(const std::vector<ps::Configuration>& cs, const std::string& part) {
  std::vector<ps::Configuration> out;
  for (const auto& c : cs)
    if ((" " + c.axes + " ").find(part) != std::string::npos) out.push_back(c);
  return out;
}

ps::Vary only(bool ps::Vary::*dimension) {
  ps::Vary v = kNothing;
  v.*dimension = true;
  return v;
}

}  // namespace

// Context parallelism enters PTD-P where the stack runs it and each rank keeps at least 4,096 tokens:
// Llama 3 70B at 8,192 tokens on Megatron-Core gets c = 2 (Megatron-Bridge's layout), never c = 4.
TEST(SearchSpace, ContextParallelismWhereTheStackRunsItAndTheSequenceIsLong) {
  const auto base = example("llama3-70b-dgx-h100-1024-fp8.json");
  const auto cs = ps::configurations(base, ps::Family::ptdp, 64, only(&ps::Vary::context));
  const auto with_cp = labelled(cs, " c2 ");
  ASSERT_FALSE(with_cp.empty());
  EXPECT_TRUE(labelled(cs, " c4 ").empty());
  for (const auto& c : with_cp) {
    EXPECT_EQ(c.workload.parallel.context, 2) << c.axes;
    EXPECT_EQ(c.workload.total_ranks(), 64) << c.axes;
    const auto& order = c.workload.placement.order;
    EXPECT_EQ(std::count(order.begin(), order.end(), "context"), 1) << c.axes;
  }
  // Not varied: the base's c = 2, which divides 64.
  for (const auto& c : ps::configurations(base, ps::Family::ptdp, 64, kNothing))
    EXPECT_EQ(c.workload.parallel.context, (64 / c.workload.parallel.tensor.size) % 2 == 0 ? 2 : 1) << c.axes;
  auto fsdp1 = base;
  fsdp1.framework.features.context_parallel = false;
  for (const auto& c : ps::configurations(fsdp1, ps::Family::ptdp, 64, only(&ps::Vary::context)))
    EXPECT_EQ(c.workload.parallel.context, 1) << c.axes;
}

// Stages that do not divide the layers split as Megatron-Core splits them: 70 layers on 12 stages with
// the embedding and the loss counted as layers (5 + 10 × 6 + 5), on 11 stages as 3 + 9 × 7 + 4, and
// 126 layers on 8 stages × 8 chunks with the embedding and loss counted (Llama 3.1 405B); a stack that
// splits evenly is not offered them.
TEST(SearchSpace, UnevenStagesWhereTheLayersDoNotDivide) {
  auto base = example("llama3-70b-dgx-h100-1024-fp8.json");
  base.model.layers = 70;
  ps::Vary vary = only(&ps::Vary::uneven_stages);
  vary.chunks = true;
  int counted = 0, ends = 0, valid = 0;
  for (const int64_t gpus : {96, 88})
    for (const auto& c : ps::configurations(base, ps::Family::ptdp, gpus, vary)) {
      const auto& p = c.workload.parallel.pipeline;
      if (p.stages == 12) {
        ++counted;
        EXPECT_TRUE(p.embedding_in_split && p.loss_in_split) << c.axes;  // 72 slots: also with v = 2, 3, 6
        EXPECT_EQ(p.first_stage_layers + p.last_stage_layers, 0) << c.axes;
      } else if (p.stages == 11 && p.chunks == 1) {
        ++ends;
        EXPECT_EQ(p.first_stage_layers, 3) << c.axes;
        EXPECT_EQ(p.last_stage_layers, 4) << c.axes;
      } else {
        continue;
      }
      try {
        pw::validate(c.with(c.variants.front()));
        ++valid;
      } catch (const std::exception&) {  // another rule (heads over t, the batch over d) may refuse it
      }
    }
  EXPECT_GT(counted, 0);
  EXPECT_GT(ends, 0);
  EXPECT_GT(valid, 0);
  const auto b405 = example("llama31-405b-dgx-h100-1024-fp8cs.json");
  bool interleaved = false;
  for (const auto& c : ps::configurations(b405, ps::Family::ptdp, 64, ps::Vary{})) {
    const auto& p = c.workload.parallel.pipeline;
    if (p.stages == 8 && p.chunks == 8) {
      interleaved = true;
      EXPECT_TRUE(p.embedding_in_split && p.loss_in_split) << c.axes;
      EXPECT_NE(c.label(c.variants.front()).find(" v8 +emb+loss"), std::string::npos) << c.label(c.variants.front());
    }
  }
  EXPECT_TRUE(interleaved);
  auto even = base;
  even.framework.features.uneven_stages = false;
  for (const auto& c : ps::configurations(even, ps::Family::ptdp, 88, vary)) {
    if (c.workload.parallel.pipeline.stages == 11 && c.workload.parallel.pipeline.chunks == 1) {
      EXPECT_FALSE(pw::missing_stack_features(c.with(c.variants.front())).empty()) << c.axes;
    }
  }
}

// MoE: beside TED's split experts, whole experts over the tensor × expert ranks ("ef"), where the
// experts divide over them.
TEST(SearchSpace, FoldedExpertsBesideTedsSplitOnes) {
  const auto base = example("tiny-moe-ted.json");
  const auto cs = ps::configurations(base, ps::Family::ted, 8, only(&ps::Vary::expert_folding));
  const auto folded = labelled(cs, " ef");
  ASSERT_FALSE(folded.empty());
  for (const auto& c : folded) {
    EXPECT_EQ(c.workload.parallel.expert_tensor, 1) << c.axes;
    EXPECT_GT(c.workload.parallel.tensor.size, 1) << c.axes;
    EXPECT_EQ(base.model.moe.experts % (c.workload.parallel.tensor.size * c.workload.parallel.expert), 0) << c.axes;
  }
  EXPECT_TRUE(labelled(ps::configurations(base, ps::Family::ted, 8, kNothing), " ef").empty());
}
