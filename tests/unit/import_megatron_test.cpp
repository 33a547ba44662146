// `paratwin import megatron`'s translator: Megatron-LM's own example command lines (tests/e2e/megatron/)
// and single arguments varied around a small base command.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "importers/megatron.hpp"
#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"

namespace paratwin::workloads {

using namespace paratwin::importers;  // the importer under test writes this namespace's format
                                      // NOLINT(google-build-using-namespace)
namespace {

using Words = std::vector<std::string>;

// A command line from a test data file: '#' lines are comments, the rest is split on white space.
Words example_command(const std::string& file) {
  std::ifstream in(std::string(PARATWIN_MEGATRON_DIR) + "/" + file);
  EXPECT_TRUE(in) << file;
  Words words;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") != std::string::npos && line[line.find_first_not_of(" \t")] == '#') continue;
    std::istringstream split(line);
    for (std::string w; split >> w;) words.push_back(w);
  }
  return words;
}

MegatronImportOptions world(int64_t ranks) {
  MegatronImportOptions o;
  o.world_size = ranks;
  return o;
}

// A small GPT on 8 GPUs: tensor 2 × pipeline 2 × data 2, 8 micro-batches of 1.
Words base() {
  return {"--num-layers",
          "8",
          "--hidden-size",
          "256",
          "--num-attention-heads",
          "8",
          "--seq-length",
          "128",
          "--micro-batch-size",
          "1",
          "--global-batch-size",
          "16",
          "--tensor-model-parallel-size",
          "2",
          "--pipeline-model-parallel-size",
          "2",
          "--vocab-size",
          "1000",
          "--fp16"};
}

// The base command without its last argument (--fp16): fp32.
Words fp32_base() {
  Words w = base();
  w.pop_back();
  return w;
}

Words with(Words w, const Words& more) {
  w.insert(w.end(), more.begin(), more.end());
  return w;
}

MegatronImport run(const Words& w, const MegatronImportOptions& o = world(8)) {
  return import_megatron(w, o);
}

bool contains(const std::vector<std::string>& list, const std::string& prefix) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

// The error's text, for EXPECT_THAT-free matching.
std::string error_of(const Words& w, const MegatronImportOptions& o = world(8)) {
  try {
    run(w, o);
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_ERROR(words, text)                                \
  do {                                                           \
    const std::string message = error_of(words);                 \
    EXPECT_NE(message.find(text), std::string::npos) << message; \
  } while (0)

TEST(ImportMegatron, VocabularyPaddedAsMegatron) {
  EXPECT_EQ(megatron_padded_vocab(50257, 128, 1), 50304);
  EXPECT_EQ(megatron_padded_vocab(50257, 128, 2), 50432);
  EXPECT_EQ(megatron_padded_vocab(50257, 128, 8), 51200);
  EXPECT_EQ(megatron_padded_vocab(51200, 128, 8), 51200);
  EXPECT_EQ(megatron_padded_vocab(32000, 64, 3), 32064);
  EXPECT_EQ(megatron_padded_vocab(1, 1, 1), 1);
}

// examples/academic_paper_scripts/sc21/run_table_1.sh, 76B: the shipped workload gpt-76b-selene-1024
// was written from the same row by hand.
TEST(ImportMegatron, Sc21Table1Row76BMatchesTheShippedExample) {
  MegatronImportOptions o = world(1024);
  o.gpus_per_node = 8;
  o.framework = "megatron-lm-2021";
  const auto r = run(example_command("sc21_table1_76B.args"), o);
  const auto& w = r.workload;
  const auto shipped = test::example("gpt-76b-selene-1024.json");
  EXPECT_EQ(w.model.layers, shipped.model.layers);
  EXPECT_EQ(w.model.hidden, shipped.model.hidden);
  EXPECT_EQ(w.model.heads, shipped.model.heads);
  EXPECT_EQ(w.model.seq_len, shipped.model.seq_len);
  EXPECT_EQ(w.model.vocab, 51200);  // 50257 padded to a multiple of 128 × 8
  EXPECT_EQ(w.model.attention_dropout, 0.1);
  EXPECT_EQ(w.training.global_batch, shipped.training.global_batch);
  EXPECT_EQ(w.training.micro_batch, shipped.training.micro_batch);
  EXPECT_EQ(w.training.dtype, Dtype::fp16);
  EXPECT_FALSE(w.training.gradient_reduce_dtype.has_value());
  EXPECT_EQ(w.training.checkpointing, Checkpointing::full);
  EXPECT_EQ(w.parallel.tensor.size, 8);
  EXPECT_EQ(w.parallel.pipeline.stages, 4);
  EXPECT_EQ(w.parallel.pipeline.schedule, Schedule::interleaved);
  EXPECT_EQ(w.parallel.pipeline.chunks, 3);  // 60 layers / 4 stages / 5 layers per virtual stage
  EXPECT_EQ(w.parallel.data, 32);
  EXPECT_EQ(w.micro_batches(), 28);
  EXPECT_TRUE(w.opt.scatter_gather);
  EXPECT_FALSE(w.opt.overlap_all_reduce);     // the 2021 profile: before the asynchronous all-reduce
  EXPECT_FALSE(w.opt.overlap_gradient_sync);  // --DDP-impl local
  EXPECT_EQ(w.placement.devices_per_node, 8);
  EXPECT_EQ(w.placement.order, (std::vector<std::string>{"tensor", "data", "pipe"}));
  EXPECT_EQ(w.framework.profile, "megatron-lm-2021");
  EXPECT_TRUE(contains(r.not_modelled, "--lr 0.0001"));
  EXPECT_TRUE(contains(r.not_modelled, "--loss-scale 8192"));
  EXPECT_TRUE(r.unknown.empty());
}

TEST(ImportMegatron, Sc21Table1Row1_7BUsesTorchDdp) {
  MegatronImportOptions o = world(32);
  o.gpus_per_node = 8;
  const auto& w = run(example_command("sc21_table1_1.7B.args"), o).workload;
  EXPECT_EQ(w.parallel.tensor.mode, TensorMode::none);
  EXPECT_EQ(w.parallel.data, 32);
  EXPECT_EQ(w.model.vocab, 50304);           // tensor 1: a multiple of 128
  EXPECT_TRUE(w.opt.overlap_gradient_sync);  // --DDP-impl torch
  EXPECT_EQ(w.placement.order, (std::vector<std::string>{"data", "pipe"}));
}

// examples/pretrain_gpt_distributed_with_mp.sh (2022): world size from torch.distributed.launch.
TEST(ImportMegatron, DistributedWithMpExample2022) {
  const auto r = run(example_command("gpt_distributed_with_mp_2022.args"), MegatronImportOptions{});
  const auto& w = r.workload;
  EXPECT_EQ(w.total_ranks(), 8);
  EXPECT_EQ(w.parallel.tensor.size, 2);
  EXPECT_EQ(w.parallel.pipeline.stages, 2);
  EXPECT_EQ(w.parallel.pipeline.schedule, Schedule::one_f_one_b);
  EXPECT_EQ(w.parallel.data, 2);
  EXPECT_TRUE(w.parallel.sequence_parallel);
  EXPECT_EQ(w.model.vocab, 50432);  // 50257 padded to a multiple of 128 × 2
  EXPECT_EQ(w.model.seq_len, 1024);
  EXPECT_EQ(w.micro_batches(), 2);
  EXPECT_EQ(w.training.checkpointing, Checkpointing::full);  // --activations-checkpoint-method uniform
  EXPECT_TRUE(w.opt.overlap_all_reduce);
  EXPECT_TRUE(w.opt.scatter_gather);
  EXPECT_EQ(w.placement.devices_per_node, 8);  // --nproc_per_node
  EXPECT_EQ(w.framework.profile, "megatron-lm-2022");
  EXPECT_TRUE(contains(r.not_modelled, "--master_port 6000"));
  EXPECT_TRUE(contains(r.not_modelled, "--data-impl mmap"));
  EXPECT_TRUE(contains(r.assumptions, "tokenizer GPT2BPETokenizer"));
  EXPECT_NE(w.description.find("Not modelled (no effect on the cost model): "), std::string::npos);
}

// examples/gpt3/train_gpt3_175b_distributed.sh: as written, one node of 8 GPUs for tensor 8 × pipeline 16.
TEST(ImportMegatron, Gpt3_175bExampleNeedsMoreThanOneNode) {
  const std::string message = error_of(example_command("gpt3_175b_distributed.args"), MegatronImportOptions{});
  EXPECT_NE(message.find("world size: 8 (--nproc_per_node 8 × --nnodes 1) is not divisible by "
                         "--tensor-model-parallel-size 8 × --pipeline-model-parallel-size 16 = 128"),
            std::string::npos)
      << message;
  const auto& w = run(example_command("gpt3_175b_distributed.args"), world(1024)).workload;
  EXPECT_EQ(w.parallel.data, 8);
  EXPECT_EQ(w.model.attention, Attention::flash);  // --attention-backend auto
  EXPECT_EQ(w.training.checkpointing, Checkpointing::none);
  EXPECT_EQ(w.placement.devices_per_node, 8);
}

TEST(ImportMegatron, Gpt3_175BExample2021) {
  const auto r = run(example_command("gpt3_175B_2021.args"), world(1024));
  EXPECT_EQ(r.workload.parallel.data, 8);
  EXPECT_EQ(r.workload.micro_batches(), 192);
  EXPECT_EQ(r.workload.placement.devices_per_node, 0);  // no launcher: from the machine
  EXPECT_TRUE(contains(r.not_modelled, "--data-path 0.2 DATASET_1 0.3 DATASET_2 0.5 DATASET_3"));
  EXPECT_TRUE(contains(r.not_modelled, "--rampup-batch-size 16 16 5859375"));
}

// examples/mixtral/train_mixtral_8x7b_distributed.sh: SwiGLU, GQA and untied weights are refused,
// all at once; --approximate imports the MoE without them.
TEST(ImportMegatron, MixtralImportsAsPublished) {
  // Mixtral 8x7B (Jiang et al., "Mixtral of Experts", 2024; the released checkpoint's 46,702,792,704
  // parameters, 12.9B active): grouped-query attention, SwiGLU experts, RMSNorm, rotary positions, an
  // untied output layer; Megatron-Core's attention (--use-mcore-models) is Transformer Engine's fused
  // kernel, so --no-masked-softmax-fusion changes nothing.
  MegatronImportOptions o;
  o.tokenizer_vocab_size = 32000;
  const auto r = run(example_command("mixtral_8x7b_distributed.args"), o);
  const auto& w = r.workload;
  EXPECT_TRUE(r.dropped.empty());
  EXPECT_EQ(w.model.kv_heads, 8);
  EXPECT_EQ(w.model.mlp, Mlp::swiglu);
  EXPECT_EQ(w.model.norm, Norm::rmsnorm);
  EXPECT_EQ(w.model.position, Position::rope);
  EXPECT_FALSE(w.model.bias);
  EXPECT_FALSE(w.model.tied_embeddings);
  EXPECT_EQ(w.model.attention, Attention::flash);
  EXPECT_DOUBLE_EQ(count_parameters(w.model).total(), 46'702'792'704.0);
  EXPECT_EQ(w.model.moe.experts, 8);
  EXPECT_EQ(w.model.moe.top_k, 2);
  EXPECT_EQ(w.model.moe.every, 1);
  EXPECT_EQ(w.model.moe.capacity_factor, 0);  // dropless
  EXPECT_EQ(w.model.vocab, 32000);
  EXPECT_EQ(w.model.attention_dropout, 0);
  EXPECT_EQ(w.parallel.expert, 8);
  EXPECT_EQ(w.parallel.data, 1);
  EXPECT_EQ(w.parallel.pipeline.stages, 4);
  EXPECT_FALSE(w.parallel.sequence_parallel);  // tensor size 1
  EXPECT_EQ(w.parallel.zero_stage, 1);
  EXPECT_EQ(w.training.dtype, Dtype::bf16);
  EXPECT_EQ(w.training.gradient_reduce(), Dtype::fp32);
  EXPECT_TRUE(w.opt.overlap_gradient_sync);
  EXPECT_TRUE(w.opt.overlap_param_gather);
  EXPECT_EQ(w.placement.order, (std::vector<std::string>{"expert", "data", "pipe"}));
}

TEST(ImportMegatron, BothArgumentFormsAndLauncherWords) {
  const auto a = run(base()).workload;
  const auto b = run({"torchrun", "--nproc-per-node=4", "--nnodes=2", "/opt/megatron/pretrain_gpt.py", "--num-layers=8",
                      "--hidden-size=256", "--num-attention-heads=8", "--seq-length=128", "--micro-batch-size=1",
                      "--global-batch-size=16", "--tensor-model-parallel-size=2", "--pipeline-model-parallel-size=2",
                      "--vocab-size=1000", "--fp16"},
                     MegatronImportOptions{})
                     .workload;
  EXPECT_EQ(nlohmann::json(to_json(a))["parallelism"], nlohmann::json(to_json(b))["parallelism"]);
  EXPECT_EQ(b.placement.devices_per_node, 4);
  EXPECT_EQ(b.model.vocab, 1024);  // 1000 padded to a multiple of 256
}

TEST(ImportMegatron, EachModelledArgument) {
  EXPECT_EQ(run(with(base(), {"--ffn-hidden-size", "512"})).workload.model.ffn_hidden, 512);
  EXPECT_EQ(run(base()).workload.model.ffn_hidden, 1024);
  EXPECT_EQ(run(with(base(), {"--make-vocab-size-divisible-by", "100"})).workload.model.vocab, 1000);
  EXPECT_EQ(run(with(base(), {"--attention-dropout", "0"})).workload.model.attention_dropout, 0);
  EXPECT_EQ(run(with(base(), {"--use-flash-attn"})).workload.model.attention, Attention::flash);
  EXPECT_EQ(run(with(base(), {"--attention-backend", "unfused"})).workload.model.attention, Attention::unfused);
  EXPECT_EQ(run(base()).workload.training.checkpointing, Checkpointing::none);
  EXPECT_EQ(run(with(base(), {"--recompute-activations"})).workload.training.checkpointing, Checkpointing::selective);
  EXPECT_EQ(run(with(base(), {"--recompute-granularity", "selective"})).workload.training.checkpointing,
            Checkpointing::selective);
  EXPECT_EQ(run(with(base(), {"--recompute-granularity", "full", "--recompute-method", "uniform",
                              "--recompute-num-layers", "1"}))
                .workload.training.checkpointing,
            Checkpointing::full);
  EXPECT_EQ(run(with(base(), {"--checkpoint-activations"})).workload.training.checkpointing, Checkpointing::full);
  // block over every layer of a stage is full recomputation
  EXPECT_EQ(run(with(base(),
                     {"--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers", "4"}))
                .workload.training.checkpointing,
            Checkpointing::full);
  const auto uniform2 = run(with(base(), {"--recompute-granularity", "full", "--recompute-num-layers", "2"}));
  EXPECT_TRUE(contains(uniform2.assumptions, "uniform recomputation of 2 layers"));
  const auto bf16 = run(with(fp32_base(), {"--bf16"})).workload;
  EXPECT_EQ(bf16.training.dtype, Dtype::bf16);
  EXPECT_EQ(bf16.training.gradient_reduce(), Dtype::fp32);
  const auto bf16_reduce = run(with(fp32_base(), {"--bf16", "--grad-reduce-in-bf16"})).workload;
  EXPECT_EQ(bf16_reduce.training.gradient_reduce(), Dtype::bf16);
  EXPECT_EQ(run(fp32_base()).workload.training.dtype, Dtype::fp32);
  EXPECT_EQ(run(with(base(), {"--accumulate-allreduce-grads-in-fp32"})).workload.training.gradient_reduce(),
            Dtype::fp32);
  EXPECT_EQ(run(base()).workload.training.gradient_reduce(), Dtype::fp16);
  EXPECT_EQ(run(with(base(), {"--use-distributed-optimizer"})).workload.parallel.zero_stage, 1);
  EXPECT_TRUE(run(with(base(), {"--overlap-grad-reduce"})).workload.opt.overlap_gradient_sync);
  EXPECT_TRUE(run(with(base(), {"--DDP-impl", "torch"})).workload.opt.overlap_gradient_sync);
  EXPECT_FALSE(run(with(base(), {"--no-async-tensor-model-parallel-allreduce"})).workload.opt.overlap_all_reduce);
  EXPECT_FALSE(run(with(base(), {"--no-scatter-gather-tensors-in-pipeline"})).workload.opt.scatter_gather);
  EXPECT_TRUE(run(with(base(), {"--sequence-parallel"})).workload.parallel.sequence_parallel);
  EXPECT_TRUE(
      run(with(base(), {"--use-distributed-optimizer", "--overlap-param-gather"})).workload.opt.overlap_param_gather);
  EXPECT_TRUE(run(with(base(), {"--sequence-parallel", "--tp-comm-overlap"})).workload.opt.overlap_tensor_comm);
  // Megatron-LM needs the distributed optimizer and sequence parallelism for them: without, no effect.
  const auto lone = run(with(base(), {"--overlap-param-gather", "--tp-comm-overlap"}));
  EXPECT_FALSE(lone.workload.opt.overlap_param_gather);
  EXPECT_FALSE(lone.workload.opt.overlap_tensor_comm);
  EXPECT_TRUE(contains(lone.assumptions, "--overlap-param-gather without --use-distributed-optimizer"));
  EXPECT_TRUE(contains(lone.assumptions, "--tp-comm-overlap without tensor and sequence parallelism"));
  EXPECT_EQ(run(with(base(), {"--use-tp-pp-dp-mapping"})).workload.placement.order,
            (std::vector<std::string>{"tensor", "pipe", "data"}));
  EXPECT_EQ(run(with(base(), {"--context-parallel-size", "1"})).workload.total_ranks(), 8);
}

TEST(ImportMegatron, VirtualStagesBecomeChunks) {
  const auto a = run(with(base(), {"--num-layers-per-virtual-pipeline-stage", "2"})).workload;
  EXPECT_EQ(a.parallel.pipeline.schedule, Schedule::interleaved);
  EXPECT_EQ(a.parallel.pipeline.chunks, 2);  // 8 layers / 2 stages / 2 per virtual stage
  const auto b = run(with(base(), {"--num-virtual-stages-per-pipeline-rank", "4"})).workload;
  EXPECT_EQ(b.parallel.pipeline.chunks, 4);
  EXPECT_EQ(b.parallel.pipeline.schedule, Schedule::interleaved);
  EXPECT_ERROR(with(base(), {"--num-layers-per-virtual-pipeline-stage", "3"}),
               "--num-layers-per-virtual-pipeline-stage = 3 does not divide the 4 layers per stage");
  EXPECT_ERROR(with(base(), {"--num-virtual-stages-per-pipeline-rank", "3"}),
               "--num-layers 8 is not divisible by --pipeline-model-parallel-size 2 × 3 = 6");
}

TEST(ImportMegatron, MoeArguments) {
  const auto w = run(with(base(), {"--num-experts", "4", "--expert-model-parallel-size", "2", "--moe-router-topk", "1",
                                   "--moe-layer-freq", "2", "--moe-expert-capacity-factor", "1.5",
                                   "--moe-token-dispatcher-type", "alltoall"}))
                     .workload;
  EXPECT_EQ(w.model.moe.experts, 4);
  EXPECT_EQ(w.model.moe.top_k, 1);
  EXPECT_EQ(w.model.moe.every, 2);
  EXPECT_EQ(w.model.moe.capacity_factor, 1.5);
  EXPECT_EQ(w.parallel.expert, 2);
  EXPECT_EQ(w.parallel.data, 1);  // Megatron-LM's data-parallel size 2 holds the 2 expert ranks
  EXPECT_EQ(w.placement.order, (std::vector<std::string>{"tensor", "expert", "data", "pipe"}));
  EXPECT_EQ(w.parallel.expert_dispatch, ExpertDispatch::all_to_all);
  EXPECT_EQ(w.parallel.expert_tensor, 0);
  // Megatron-LM's default dispatcher is the all-gather one; DeepEP's flex dispatcher is not modelled.
  const auto gather =
      run(with(base(), {"--num-experts", "4", "--expert-model-parallel-size", "2", "--sequence-parallel"})).workload;
  EXPECT_EQ(gather.parallel.expert_dispatch, ExpertDispatch::all_gather);
  const std::string message = error_of(
      with(base(), {"--num-experts", "4", "--expert-model-parallel-size", "2", "--moe-token-dispatcher-type", "flex"}));
  EXPECT_NE(message.find("--moe-token-dispatcher-type flex (paratwin models the alltoall and allgather dispatchers)"),
            std::string::npos)
      << message;
}

// --expert-tensor-parallel-size 1 (MoE parallel folding): Megatron-LM's EP spans the tensor ranks, so
// paratwin's expert axis is EP / TP and the data axis what is left.
TEST(ImportMegatron, ExpertTensorParallelismOneFoldsTheExpertGroup) {
  const auto w =
      run(with(base(), {"--num-experts", "8", "--expert-model-parallel-size", "4", "--expert-tensor-parallel-size", "1",
                        "--sequence-parallel", "--moe-token-dispatcher-type", "alltoall"}),
          world(16))
          .workload;
  EXPECT_EQ(w.parallel.expert_tensor, 1);
  EXPECT_EQ(w.parallel.expert, 2);  // 4 expert-parallel ranks = 2 tensor ranks × 2
  EXPECT_EQ(w.parallel.data, 2);    // Megatron's data-parallel size 4 = 2 × 2
  const std::string odd = error_of(
      with(base(), {"--num-experts", "6", "--expert-model-parallel-size", "3", "--expert-tensor-parallel-size", "1"}));
  EXPECT_NE(odd.find("must be a multiple of --tensor-model-parallel-size 2"), std::string::npos) << odd;
}

TEST(ImportMegatron, MegatronConstraintsNameTheNumbers) {
  EXPECT_ERROR(with(base(), {"--num-layers", "7"}),
               "--num-layers = 7 is not divisible by --pipeline-model-parallel-size 2");
  EXPECT_ERROR(with(base(), {"--num-attention-heads", "6"}),
               "--hidden-size = 256 is not divisible by --num-attention-heads 6");
  EXPECT_ERROR(with(base(), {"--num-attention-heads", "1"}),
               "--num-attention-heads = 1 is not divisible by --tensor-model-parallel-size 2");
  EXPECT_ERROR(with(base(), {"--global-batch-size", "15"}),
               "--global-batch-size = 15 is not divisible by --micro-batch-size 1 × data-parallel size 2 = 2");
  EXPECT_ERROR(with(base(), {"--global-batch-size", "6", "--num-virtual-stages-per-pipeline-rank", "2"}),
               "makes 3 micro-batches per iteration, not a multiple of --pipeline-model-parallel-size 2");
  EXPECT_ERROR(with(base(), {"--bf16"}), "--fp16: and --bf16 exclude each other");
  EXPECT_ERROR(with(base(), {"--num-layers", "x"}), "--num-layers = x is not an integer");
  EXPECT_ERROR(with(base(), {"--fp16", "yes"}), "--fp16: takes no value");
  EXPECT_ERROR(with(base(), {"--max-position-embeddings", "64"}),
               "--max-position-embeddings = 64 is less than --seq-length 128");
  EXPECT_ERROR(with(base(), {"stray"}), "--fp16: takes no value, got \"--fp16 stray\"");
  Words no_layers = base();
  no_layers.erase(no_layers.begin(), no_layers.begin() + 2);
  EXPECT_ERROR(no_layers, "--num-layers: is required");
  const std::string bad_world = error_of(base(), world(6));
  EXPECT_NE(bad_world.find("world size: 6 (--world-size 6) is not divisible by --tensor-model-parallel-size 2 × "
                           "--pipeline-model-parallel-size 2 = 4"),
            std::string::npos)
      << bad_world;
  EXPECT_NE(error_of(base(), MegatronImportOptions{}).find("world size: is unknown"), std::string::npos);
}

TEST(ImportMegatron, UnknownArgumentsAreListedNeverIgnored) {
  const Words w = with(base(), {"--no-such-flag", "3", "--another-one", "--lr", "1e-4"});
  try {
    run(w);
    FAIL() << "no error";
  } catch (const MegatronArgumentsError& e) {
    EXPECT_EQ(e.unknown(), (std::vector<std::string>{"--no-such-flag 3", "--another-one"}));
    EXPECT_NE(std::string(e.what()).find("2 arguments paratwin does not know: --no-such-flag 3, --another-one"),
              std::string::npos);
  }
  MegatronImportOptions o = world(8);
  o.allow_unknown = true;
  const auto r = run(w, o);
  EXPECT_EQ(r.unknown, (std::vector<std::string>{"--no-such-flag 3", "--another-one"}));
  EXPECT_TRUE(contains(r.not_modelled, "--lr 1e-4"));
  EXPECT_NE(r.workload.description.find("Unknown, left out (--allow-unknown): --no-such-flag 3, --another-one"),
            std::string::npos);
}

TEST(ImportMegatron, InexpressibleArgumentsAreRefused) {
  EXPECT_ERROR(with(base(), {"--context-parallel-size", "2", "--use-flash-attn", "--cp-comm-type", "a2a+p2p"}),
               "--cp-comm-type a2a+p2p (p2p, a2a and allgather are modelled)");
  EXPECT_ERROR(with(base(), {"--context-parallel-size", "2"}),
               "--context-parallel-size (the workload's parallelism.context.size) = 2 needs model.attention \"flash\"");
  EXPECT_ERROR(with(base(), {"--kv-channels", "64"}), "--kv-channels 64 (attention heads of another size");
  // block over fewer layers than a chunk holds: those first layers of each chunk
  const auto block1 = run(with(base(), {"--recompute-granularity", "full", "--recompute-method", "block",
                                        "--recompute-num-layers", "1"}))
                          .workload.training;
  EXPECT_EQ(block1.checkpointing, Checkpointing::full);
  EXPECT_EQ(block1.recompute_num_layers, 1);
  EXPECT_ERROR(with(base(), {"--optimizer", "sgd"}), "--optimizer sgd (only the Adam optimizer");
  EXPECT_EQ(run(with(base(), {"--optimizer", "adam"})).workload.total_ranks(), 8);
}

TEST(ImportMegatron, VocabularyFromTheTokenizer) {
  Words w = base();
  w.resize(w.size() - 3);  // drop --vocab-size 1000 --fp16
  EXPECT_EQ(run(with(w, {"--tokenizer-type", "GPT2BPETokenizer"})).workload.model.vocab, 50432);
  EXPECT_EQ(run(with(w, {"--tokenizer-type", "NullTokenizer", "--vocab-size", "1023"})).workload.model.vocab, 1024);
  EXPECT_ERROR(with(w, {"--tokenizer-type", "HuggingFaceTokenizer"}), "--tokenizer-vocab-size");
  MegatronImportOptions o = world(8);
  o.tokenizer_vocab_size = 32001;
  EXPECT_EQ(run(with(w, {"--tokenizer-type", "HuggingFaceTokenizer"}), o).workload.model.vocab, 32256);
}

TEST(ImportMegatron, OptionsSetNamePlacementAndFramework) {
  MegatronImportOptions o = world(8);
  o.name = "mine";
  o.devices_per_node = 4;
  o.machine = "perlmutter";
  o.framework = "megatron-lm-2021";
  const auto w = run(base(), o).workload;
  EXPECT_EQ(w.name, "mine");
  EXPECT_EQ(w.placement.devices_per_node, 4);
  EXPECT_EQ(w.framework.profile, "megatron-lm-2021");
  EXPECT_EQ(run(base()).workload.name, "megatron-gpt-8l-256h-8");
}

// The tokenizers of today's released models, sized as Megatron-LM's tokenizer library sizes them
// (megatron/core/tokenizers/, main 2026-11): NullTokenizer of exactly --vocab-size, TikTokenizer of
// 2^17 unless told, the Llama 2 / Mixtral SentencePiece model, Hugging Face names of released models.
TEST(ImportMegatron, TokenizersOfReleasedModels) {
  Words w = base();
  w.resize(w.size() - 3);  // drop --vocab-size 1000 --fp16
  const auto vocab = [&](const Words& more) { return run(with(w, more)).workload.model.vocab; };
  EXPECT_EQ(vocab({"--tokenizer-type", "NullTokenizer", "--vocab-size", "128256"}), 128256);
  EXPECT_EQ(vocab({"--tokenizer-type", "Llama2Tokenizer", "--tokenizer-model", "/data/tokenizer.model"}), 32000);
  EXPECT_EQ(vocab({"--tokenizer-type", "TikTokenizer", "--tokenizer-model", "/data/llama3.tiktoken"}), 131072);
  EXPECT_EQ(vocab({"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model", "meta-llama/Meta-Llama-3-8B"}),
            128256);
  EXPECT_EQ(vocab({"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model", "mistralai/Mixtral-8x7B-v0.1"}),
            32000);
  EXPECT_ERROR(with(w, {"--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model", "/my/own"}),
               "give --vocab-size in the command or paratwin's --tokenizer-vocab-size");
}

// Megatron-FSDP's sharding strategies are ZeRO stages (v1 always with the distributed optimizer), on
// the megatron-fsdp profile; fully sharded parameters over pipeline stages are not modelled.
TEST(ImportMegatron, MegatronFsdpStrategiesAreZeroStages) {
  const Words one_stage = with(fp32_base(), {"--pipeline-model-parallel-size", "1", "--bf16", "--use-megatron-fsdp"});
  const auto zero = [&](const Words& more) { return run(with(one_stage, more)).workload.parallel.zero_stage; };
  EXPECT_EQ(zero({}), 3);  // optim_grads_params by default
  EXPECT_EQ(zero({"--data-parallel-sharding-strategy", "optim_grads"}), 2);
  EXPECT_EQ(zero({"--data-parallel-sharding-strategy", "optim"}), 1);
  EXPECT_EQ(zero({"--data-parallel-sharding-strategy", "no_shard"}), 1);
  EXPECT_EQ(run(one_stage).workload.framework.profile, "megatron-fsdp");
  EXPECT_ERROR(with(one_stage, {"--data-parallel-sharding-strategy", "everything"}),
               "--data-parallel-sharding-strategy = everything is not one of no_shard, optim");
  EXPECT_ERROR(with(fp32_base(), {"--bf16", "--use-megatron-fsdp"}), "fully sharded parameters across pipeline stages");
  // Without Megatron-FSDP the strategy changes nothing.
  EXPECT_EQ(run(with(base(), {"--data-parallel-sharding-strategy", "optim_grads_params"})).workload.parallel.zero_stage,
            0);
  EXPECT_FALSE(run(with(one_stage, {"--no-gradient-accumulation-fusion"})).workload.opt.gradient_accumulation_fusion);
  EXPECT_TRUE(run(one_stage).workload.opt.gradient_accumulation_fusion);
}

// A launch script run without its arguments leaves `--data-path $DATA_PATH` without a value: harmless
// for what does not enter the cost model, an error for what does.
TEST(ImportMegatron, ArgumentsLeftEmptyByAScript) {
  const auto r = run(with(base(), {"--data-path", "--save", "--lr", "1e-4"}));
  EXPECT_TRUE(std::any_of(r.assumptions.begin(), r.assumptions.end(), [](const std::string& a) {
    return a.find("given without a value") != std::string::npos && a.find("--data-path, --save") != std::string::npos;
  }));
  EXPECT_ERROR(with(base(), {"--micro-batch-size", "--lr", "1e-4"}), "--micro-batch-size: needs a value");
}

// Megatron-LM's other models have GPT-like arguments: refused by their entry point, by name.
TEST(ImportMegatron, OtherModelsRefusedByTheirEntryPoint) {
  Words bert{"torchrun", "--nproc_per_node", "8", "pretrain_bert.py"};
  EXPECT_ERROR(with(bert, base()), "pretrain_bert.py: trains BERT");
  Words t5{"torchrun", "--nproc_per_node", "8", "/opt/Megatron-LM/pretrain_t5.py"};
  EXPECT_ERROR(with(t5, base()), "pretrain_t5.py: trains T5, an encoder-decoder");
  Words gpt{"torchrun", "--nproc_per_node", "8", "pretrain_gpt.py"};
  EXPECT_EQ(run(with(gpt, base())).workload.total_ranks(), 8);
}

// One message lists everything in the way: an error in the values and every unknown and
// inexpressible argument (gpt-oss's features), not one round at a time.
TEST(ImportMegatron, AnErrorComesWithEveryInexpressibleArgument) {
  const Words w = with(base(), {"--num-layers", "7", "--softmax-type", "learnable", "--window-size", "127,0",
                                "--enable-gpt-oss", "--no-such-flag"});
  try {
    run(w);
    FAIL() << "no error";
  } catch (const MegatronArgumentsError& e) {
    EXPECT_NE(e.error().find("--num-layers"), std::string::npos) << e.error();
    EXPECT_TRUE(contains(e.inexpressible(), "--softmax-type learnable (softmax with an off-by-one or learnable"));
    EXPECT_TRUE(contains(e.inexpressible(), "--window-size 127,0 (sliding-window attention"));
    EXPECT_TRUE(contains(e.inexpressible(), "--enable-gpt-oss (gpt-oss's layer"));
    EXPECT_EQ(e.unknown(), (std::vector<std::string>{"--no-such-flag"}));
  }
  EXPECT_EQ(run(with(base(), {"--softmax-type", "vanilla", "--glu-linear-offset", "0.0"})).workload.total_ranks(), 8);
}

// Uneven pipeline splits as Megatron-Core's flags give them: Llama 3.1 405B's 126 layers on 8 stages of
// 8 virtual stages with the embedding and the loss counted; first/last stages of their own sizes.
TEST(ImportMegatron, UnevenPipelineSplits) {
  const Words llama405 = {"--num-layers",
                          "126",
                          "--hidden-size",
                          "256",
                          "--num-attention-heads",
                          "8",
                          "--seq-length",
                          "128",
                          "--micro-batch-size",
                          "1",
                          "--global-batch-size",
                          "64",
                          "--pipeline-model-parallel-size",
                          "8",
                          "--num-virtual-stages-per-pipeline-rank",
                          "8",
                          "--account-for-embedding-in-pipeline-split",
                          "--account-for-loss-in-pipeline-split",
                          "--vocab-size",
                          "1000",
                          "--bf16"};
  const auto w = run(llama405, world(8)).workload;
  EXPECT_EQ(w.parallel.pipeline.chunks, 8);
  EXPECT_TRUE(w.parallel.pipeline.embedding_in_split);
  EXPECT_TRUE(w.parallel.pipeline.loss_in_split);
  Words no_loss = llama405;
  no_loss.erase(std::find(no_loss.begin(), no_loss.end(), "--account-for-loss-in-pipeline-split"));
  EXPECT_ERROR(no_loss, "--num-layers = 126 + the embedding is not divisible by --pipeline-model-parallel-size 8");
  Words layers_per_virtual = with(fp32_base(), {"--pipeline-model-parallel-size", "4", "--num-layers", "10",
                                                "--decoder-first-pipeline-num-layers", "1"});
  const auto uneven =
      run(with(layers_per_virtual, {"--tensor-model-parallel-size", "1", "--global-batch-size", "8"}), world(8))
          .workload;
  EXPECT_EQ(uneven.parallel.pipeline.first_stage_layers, 1);
  EXPECT_ERROR(
      with(layers_per_virtual, {"--tensor-model-parallel-size", "1", "--decoder-last-pipeline-num-layers", "2"}),
      "--decoder-first-pipeline-num-layers (the workload's parallelism.pipeline.first_stage_layers)");
}

}  // namespace
}  // namespace paratwin::workloads
