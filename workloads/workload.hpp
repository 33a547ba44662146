#pragma once
// The workload description: what model is trained, how, and how it is parallelised. It is the one
// input that both the simulator and the executor derive from (through lower()).
#include <algorithm>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "workloads/framework.hpp"

namespace paratwin::workloads {

// fp8 is E4M3 with per-tensor scaling (Transformer Engine's forward format); only GEMMs take it, with a
// bf16 output, and so far only the GPU backend and its calibration run it (no workload precision yet).
enum class Dtype { bf16, fp16, fp32, fp8 };
constexpr size_t kDtypes = 4;
// selective: Megatron-LM's (Korthikanti et al. 2022), the attention core recomputed. selective_op:
// TorchTitan's per-op policy (torchtitan/parallelisms/parallelize_llama.py _apply_ac_to_transformer_block,
// commit 9dec370, 2024-12): inside each block the outputs of the flash kernel and of every other matmul
// (the 1st, 3rd, ... in forward order) are saved, everything else is recomputed: the 2nd, 4th and 6th
// matmul (K, the output projection, and the MLP's value projection W3, or W2 without a gate) and every
// element-wise op.
enum class Checkpointing { none, full, selective, selective_op };
enum class TensorMode { none, megatron, optimus, axonn };
enum class Schedule { gpipe, one_f_one_b, interleaved, axonn };
// How a framework computes attention: unfused (score GEMM, softmax kernel, context GEMM: Megatron-LM's
// fused scale-mask-softmax), math (PyTorch's composite scaled_dot_product_attention: the causal mask
// added to the scores in a pass of its own before the softmax) or flash (one FlashAttention-2 kernel
// that never writes the scores).
enum class Attention { unfused, math, flash };
// The MLP's activation: gelu (two GEMMs, fc1 of ffn_hidden outputs), or a gated linear unit (Shazeer,
// "GLU Variants Improve Transformer", 2020): fc1 computes 2·ffn_hidden outputs, the gate's and the
// value's, that the activation multiplies (Megatron-Core's gated_linear_unit: linear_fc1 of
// 2·ffn_hidden_size, megatron/core/transformer/mlp.py, core_r0.8.0).
enum class Mlp { gelu, swiglu, geglu };
// Layer normalisation: LayerNorm (weight and bias) or RMSNorm (Zhang and Sennrich 2019: weight only).
enum class Norm { layernorm, rmsnorm };
// Position information: learned absolute embeddings (GPT-2/3: S·h parameters), rotary embeddings
// applied to queries and keys (Su et al., RoFormer 2021), ALiBi biases added to the scores (Press et
// al. 2022), or none.
enum class Position { learned, rope, alibi, none };

// FP8 GEMMs (Transformer Engine, Micikevicius et al., "FP8 Formats for Deep Learning", 2022): the
// transformer layers' linear GEMMs take E4M3/E5M2 operands with per-tensor scales, everything else
// stays in `dtype`. delayed: scales from the amax history of earlier iterations (TE DelayedScaling,
// Megatron-LM's --fp8-recipe delayed); current: each tensor's own amax, one more read of it before its
// cast (TE Float8CurrentScaling, --fp8-recipe tensorwise).
enum class Fp8 { none, delayed, current };
// How context parallelism exchanges keys and values (Transformer Engine's cp_comm_type, Megatron-LM
// --cp-comm-type): p2p, the ring of Liu et al.'s Ring Attention (2023) overlapped block by block with
// the attention kernel; all_to_all, DeepSpeed-Ulysses (Jacobs et al. 2023): heads exchanged for the
// sequence before attention and back after it; all_gather: every rank gathers the keys and values.
enum class ContextComm { p2p, all_to_all, all_gather };
// How an MoE layer's tokens reach their experts (Megatron-Core --moe-token-dispatcher-type).
enum class ExpertDispatch { all_to_all, all_gather };

int bytes_of(Dtype d);
const char* to_string(Dtype d);
const char* to_string(Checkpointing c);
const char* to_string(Attention a);
const char* to_string(Mlp m);
const char* to_string(Norm n);
const char* to_string(Position p);
const char* to_string(Fp8 f);
const char* to_string(ContextComm c);
const char* to_string(ExpertDispatch d);
const char* to_string(TensorMode t);
const char* to_string(Schedule s);

struct MoeConfig {
  int64_t experts = 0;  // 0: a dense model
  int64_t top_k = 1;
  double capacity_factor = 1.0;  // 0: dropless, tokens per expert follow `imbalance`
  int64_t every = 2;             // every `every`-th layer is MoE (layer index % every == every-1)
  double imbalance = 1.0;        // busiest expert's load over the mean (dropless routing only)
  // Fine-grained experts (DeepSeekMoE, Dai et al. 2024): each expert's FFN size; 0: model.ffn_hidden.
  int64_t ffn_hidden = 0;
  // Shared experts that every token passes through beside its routed ones, as one MLP of this total
  // size (Megatron-LM --moe-shared-expert-intermediate-size); 0: none.
  int64_t shared_ffn = 0;
  // Leading layers that keep a dense MLP (DeepSeek-V3's first_k_dense_replace = 3).
  int64_t first_dense = 0;
  bool enabled() const { return experts > 0; }
};

// Multi-head latent attention (DeepSeek-V2, Liu et al. 2024, §2.1; DeepSeek-V3): queries and keys/values
// projected down to latents (each RMSNorm-ed) and up per head; a decoupled rotary part of each query
// head and one rotary key shared by all heads.
struct MlaConfig {
  int64_t q_lora_rank = 0;    // 0: queries projected from the hidden state directly
  int64_t kv_lora_rank = 0;   // the key/value latent; > 0: MLA on
  int64_t qk_head_dim = 0;    // per head, without the rotary part
  int64_t rope_head_dim = 0;  // the rotary part of a query head, and of the shared key
  int64_t v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
};

struct ModelConfig {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn_hidden = 0;  // default 4·hidden
  int64_t seq_len = 0;
  int64_t vocab = 0;
  // Dropout on the attention probabilities (Megatron-LM's --attention-dropout, 0.1 by default): a
  // kernel of its own after the fused scale-mask-softmax, reading and writing every score and keeping
  // a one-byte mask for the backward pass. 0: none (LitGPT). Inside a flash kernel it costs nothing
  // of its own (FlashAttention-2 drops out the tile in registers).
  double attention_dropout = 0;
  // flash (Dao, "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
  // 2023): Q·Kᵀ and P·V tile by tile in one kernel, the causal half of the tiles skipped, the backward
  // pass recomputing the scores (five products where the forward has two), nothing of size s² in
  // memory.
  Attention attention = Attention::unfused;
  // Grouped-query attention (Ainslie et al. 2023): kv_heads key/value heads shared by the query heads
  // (0: one per query head, multi-head attention; 1: multi-query). Heads are hidden/heads wide.
  int64_t kv_heads = 0;
  Mlp mlp = Mlp::gelu;
  Norm norm = Norm::layernorm;
  Position position = Position::learned;
  bool bias = true;  // biases on the linear layers (false: Megatron's --disable-bias-linear)
  // Biases on the query, key and value projections even where `bias` is false (Qwen2's attention;
  // Megatron-LM --add-qkv-bias).
  bool qkv_bias = false;
  bool has_qkv_bias() const { return bias || qkv_bias; }
  bool tied_embeddings = true;  // the output layer shares the word embedding
  // The layer norm after the last layer. Eq. (2) of Narayanan et al. does not count it; models
  // described by their published parameter count (Llama) do.
  bool final_norm = false;
  MoeConfig moe;
  MlaConfig mla;
  int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t head_dim() const { return hidden / heads; }
  // Outputs of the QKV projection: the queries (hidden) and a key and a value per KV head.
  int64_t qkv_outputs() const { return hidden + 2 * kv_head_count() * head_dim(); }
  // Outputs of fc1: ffn_hidden, or twice that for a gated MLP.
  int64_t fc1_outputs() const { return fc1_of(ffn_hidden); }
  int64_t fc1_of(int64_t ffn) const { return mlp == Mlp::gelu ? ffn : 2 * ffn; }
  int64_t expert_ffn() const { return moe.ffn_hidden > 0 ? moe.ffn_hidden : ffn_hidden; }
  // Parameters of one normalisation layer.
  int64_t norm_params() const { return norm == Norm::layernorm ? 2 * hidden : hidden; }
  bool is_moe_layer(int64_t layer) const {
    return moe.enabled() && layer >= moe.first_dense && layer % moe.every == moe.every - 1;
  }
  int64_t moe_layer_count() const {
    return moe.enabled() ? layers / moe.every - std::min(moe.first_dense, layers) / moe.every : 0;
  }
};

struct TrainingConfig {
  int64_t global_batch = 0;  // sequences per iteration
  int64_t micro_batch = 1;   // sequences per micro-batch per model replica
  Dtype dtype = Dtype::bf16;
  Checkpointing checkpointing = Checkpointing::full;
  // With full checkpointing, how many layers of each model chunk (virtual pipeline stage) recompute
  // their forward pass, counted from the chunk's first layer; the others keep their activations.
  // Megatron-LM's --recompute-method block --recompute-num-layers N (megatron/core/transformer/
  // transformer_block.py _checkpointed_forward, 'block': the first N layers of the chunk); FMS-FSDP's
  // selective_checkpointing p picks about p·L evenly spaced blocks (fms_fsdp/policies/ac_handler.py),
  // which the count stands for. 0: every layer.
  int64_t recompute_num_layers = 0;
  bool offload_optimizer = false;      // AxoNN: fp32 weights and Adam state live in host memory
  int64_t offload_bucket = 4'000'000;  // parameters moved per optimizer bucket when offloading
  bool fp32_gradient_copy = false;     // AxoNN keeps fp32 gradients: 20 instead of 16 B/parameter
  // The dtype of the gradients the data-parallel group reduces: the training dtype, or fp32 where the
  // framework accumulates them in fp32 (Megatron-LM with --bf16 forces accumulate_allreduce_grads_in_fp32).
  // Unset: the training dtype.
  std::optional<Dtype> gradient_reduce_dtype;
  Dtype gradient_reduce() const { return gradient_reduce_dtype.value_or(dtype); }
  Fp8 fp8 = Fp8::none;
  // The distributed optimizer all-gathers the updated weights in fp8 and the model keeps them so
  // (Megatron-LM --fp8-param-gather): one byte per parameter gathered and held instead of two.
  bool fp8_param_gather = false;
};

struct TensorConfig {
  TensorMode mode = TensorMode::none;
  int64_t size = 1;             // megatron
  int64_t rows = 1, cols = 1;   // optimus SUMMA mesh
  int64_t x = 1, y = 1, z = 1;  // axonn 3-D grid
  int64_t degree() const;       // ranks in one tensor-parallel group
};

struct PipelineConfig {
  int64_t stages = 1;
  Schedule schedule = Schedule::one_f_one_b;
  int64_t chunks = 1;          // model chunks per stage (interleaved)
  int64_t pipeline_limit = 0;  // AxoNN message-driven: micro-batches in flight (0: = stages)
  // Uneven splits (Megatron-Core --decoder-first/last-pipeline-num-layers): the first (last) stage's
  // layers, the other stages splitting the rest; 0: even.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  // The embedding (loss) counted as a layer of the first (last) stage (Megatron-Core
  // --account-for-embedding/loss-in-pipeline-split).
  bool embedding_in_split = false;
  bool loss_in_split = false;
};

struct ParallelConfig {
  int64_t data = 1;
  int64_t zero_stage = 0;
  TensorConfig tensor;
  bool sequence_parallel = false;
  PipelineConfig pipeline;
  int64_t expert = 1;  // TED: ranks of an expert-parallel group
  // The experts' own tensor parallelism (Megatron-Core --expert-tensor-parallel-size): 0, the tensor
  // size (TED: every expert split over the tensor group); 1, every expert whole on its rank and the
  // expert-parallel group folded over the tensor ranks too (MoE parallel folding: tensor × expert ranks).
  int64_t expert_tensor = 0;
  ExpertDispatch expert_dispatch = ExpertDispatch::all_to_all;
  // Tensor ranks that split each expert, and whether the expert group takes in the tensor ranks.
  bool experts_folded() const { return expert_tensor == 1 && tensor.degree() > 1; }
  // Context parallelism (Megatron-Core --context-parallel-size): the sequence split over `context`
  // ranks, each holding seq_len/context tokens (two chunks of 2·context, Megatron's causal load
  // balancing), the weights replicated and their gradients reduced with the data-parallel group's.
  int64_t context = 1;
  ContextComm context_comm = ContextComm::p2p;
};

struct Optimizations {
  bool overlap_all_reduce = false;        // OAR
  bool overlap_reduce_scatter = false;    // ORS
  bool overlap_all_gather = false;        // OAG
  bool overlap_gradient_sync = false;     // data-parallel gradient reduction overlaps backward
  bool cache_all_gather = false;          // keep gathered weights from forward to backward
  bool duplicate_token_dropping = false;  // DTD
  bool comm_aware_checkpointing = false;  // CAC
  bool scatter_gather = false;            // Megatron p2p scatter/gather
  bool overlap_param_gather = false;      // ZeRO-1/2 parameter all-gathers overlap the next forward
  bool overlap_tensor_comm = false;       // sequence-parallel collectives pipelined with their GEMMs
  // Weight-gradient GEMMs accumulate into the main gradients themselves (Megatron-LM's default
  // gradient_accumulation_fusion); false: a separate add kernel per layer and micro-batch.
  bool gradient_accumulation_fusion = true;
};

struct Placement {
  std::vector<std::string> order;  // grid axes innermost first; empty: the grid's own order
  int64_t devices_per_node = 0;    // 0: unknown here, taken from the machine
  // Block extent per axis (absent: 1): devices are numbered inside one block first, then block by block.
  std::vector<std::pair<std::string, int64_t>> tile;
};

struct Workload {
  std::string name;
  std::string description;  // provenance and assumptions, carried into outputs
  std::string source;       // file the workload came from, for messages
  ModelConfig model;
  TrainingConfig training;
  ParallelConfig parallel;
  Optimizations opt;
  Placement placement;
  Framework framework;  // the software stack the run used

  int64_t total_ranks() const;
  // Model replicas that split the batch (data × expert for TED): global_batch / (replicas · micro_batch)
  // micro-batches per iteration.
  int64_t batch_replicas() const;
  // Tokens of one micro-batch that one rank holds: micro_batch × seq_len, split by context parallelism.
  int64_t tokens_per_rank() const;
  int64_t micro_batches() const;
};

// Chunks of rows of a GEMM whose tensor-parallel collective optimizations.overlap_tensor_comm
// pipelines with it: Transformer Engine's userbuffers overlap (v1.8 transformer_engine/pytorch/module/
// base.py initialize_ub, l.100-102 and 229-231) runs all-gather + GEMM as a ring exchange of tensor-size
// steps and GEMM + reduce-scatter as a pipeline of num_splits = 4 chunks.
constexpr int64_t kTensorCommPipelineSplits = 4;
// Whether the micro-batch's tokens split into both chunkings (TE asserts the division).
bool tensor_comm_overlap_fits(const Workload& w);

// Parse and validate; throws WorkloadError naming the JSON path and the broken rule.
Workload parse_workload(const nlohmann::json& doc, const std::string& source);
Workload load_workload_file(const std::string& path);
// A short label of a workload's parallel configuration, e.g. "t=2 p=2 d=4 mb=1" or "x=2 y=1 z=4 d=128 mb=16".
std::string configuration_label(const Workload& w);
Workload parse_workload_text(const std::string& text, const std::string& source);
// Cross-field rules (divisibility, supported combinations); parse_workload calls it.
void validate(const Workload& w);
nlohmann::json to_json(const Workload& w);

}  // namespace paratwin::workloads
