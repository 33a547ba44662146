// Reading a workload JSON document into a Workload. Every key is read through JsonReader so that
// unknown keys are errors; cross-field rules live in validate.cpp.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "workloads/default_stack.hpp"
#include "workloads/error.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {

namespace {

using paratwin::JsonReader;

// Bounds far beyond any real model that keep every product of sizes (tokens × hidden × ffn) well
// inside 64-bit integers and doubles' exact range.
constexpr int64_t kMaxHidden = int64_t{1} << 20;
constexpr int64_t kMaxFfn = int64_t{1} << 22;
constexpr int64_t kMaxSeq = int64_t{1} << 24;
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxBatch = int64_t{1} << 30;
constexpr int64_t kMaxRanks = int64_t{1} << 22;  // 4M ranks: beyond any machine we model

template <typename E>
E enum_of(const std::string& s, const std::vector<std::pair<std::string, E>>& table) {
  for (const auto& [name, value] : table)
    if (name == s) return value;
  return table.front().second;  // unreachable: JsonReader::choice checked the spelling
}

const std::vector<std::pair<std::string, Dtype>> kDtypes = {
    {"bf16", Dtype::bf16}, {"fp16", Dtype::fp16}, {"fp32", Dtype::fp32}};
const std::vector<std::pair<std::string, Checkpointing>> kCheckpointing = {
    {"full", Checkpointing::full},
    {"none", Checkpointing::none},
    {"selective", Checkpointing::selective},
    {"selective_op", Checkpointing::selective_op}};
const std::vector<std::pair<std::string, Attention>> kAttention = {
    {"unfused", Attention::unfused}, {"math", Attention::math}, {"flash", Attention::flash}};
const std::vector<std::pair<std::string, Mlp>> kMlp = {
    {"gelu", Mlp::gelu}, {"swiglu", Mlp::swiglu}, {"geglu", Mlp::geglu}};
const std::vector<std::pair<std::string, Norm>> kNorm = {{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}};
const std::vector<std::pair<std::string, Position>> kPosition = {
    {"learned", Position::learned}, {"rope", Position::rope}, {"alibi", Position::alibi}, {"none", Position::none}};
const std::vector<std::pair<std::string, Fp8>> kFp8 = {
    {"none", Fp8::none}, {"delayed", Fp8::delayed}, {"current", Fp8::current}};
const std::vector<std::pair<std::string, ExpertDispatch>> kExpertDispatch = {
    {"all_to_all", ExpertDispatch::all_to_all}, {"all_gather", ExpertDispatch::all_gather}};
const std::vector<std::pair<std::string, ContextComm>> kContextComm = {
    {"p2p", ContextComm::p2p}, {"all_to_all", ContextComm::all_to_all}, {"all_gather", ContextComm::all_gather}};
const std::vector<std::pair<std::string, TensorMode>> kTensorModes = {{"none", TensorMode::none},
                                                                      {"megatron", TensorMode::megatron},
                                                                      {"optimus", TensorMode::optimus},
                                                                      {"axonn", TensorMode::axonn}};
const std::vector<std::pair<std::string, Schedule>> kSchedules = {{"1f1b", Schedule::one_f_one_b},
                                                                  {"gpipe", Schedule::gpipe},
                                                                  {"interleaved", Schedule::interleaved},
                                                                  {"axonn", Schedule::axonn}};

template <typename E>
std::vector<std::string> names(const std::vector<std::pair<std::string, E>>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.push_back(entry.first);
  return out;
}

template <typename E>
E read_enum(JsonReader& r, const std::string& key, const std::vector<std::pair<std::string, E>>& table) {
  return enum_of(r.choice(key, names(table), table.front().first), table);
}

ModelConfig read_model(JsonReader r) {
  ModelConfig m;
  m.layers = r.integer("layers", std::nullopt, 1, 1'000'000);
  m.hidden = r.integer("hidden", std::nullopt, 1, kMaxHidden);
  m.heads = r.integer("heads", std::nullopt, 1, kMaxHidden);
  m.ffn_hidden = r.integer("ffn_hidden", 4 * m.hidden, 1, kMaxFfn);
  m.seq_len = r.integer("seq_len", std::nullopt, 1, kMaxSeq);
  m.vocab = r.integer("vocab", std::nullopt, 1, kMaxVocab);
  m.attention_dropout = r.number("attention_dropout", 0.0, 0.0, 0.999);
  m.attention = read_enum(r, "attention", kAttention);
  m.kv_heads = r.integer("kv_heads", 0, 1, m.heads);
  m.mlp = read_enum(r, "mlp", kMlp);
  m.norm = read_enum(r, "norm", kNorm);
  m.position = read_enum(r, "position", kPosition);
  m.bias = r.boolean("bias", true);
  m.qkv_bias = r.boolean("qkv_bias", false);
  m.tied_embeddings = r.boolean("tied_embeddings", true);
  m.final_norm = r.boolean("final_norm", false);
  if (r.has("moe")) {
    JsonReader e = r.object("moe");
    m.moe.experts = e.integer("experts", std::nullopt, 2, 1 << 20);
    m.moe.top_k = e.integer("top_k", 1, 1, m.moe.experts);
    m.moe.capacity_factor = e.number("capacity_factor", 1.0, 0.0, 1e6);
    m.moe.every = e.integer("every", 2, 1, m.layers);
    m.moe.imbalance = e.number("imbalance", 1.0, 1.0, 1e6);
    m.moe.ffn_hidden = e.integer("ffn_hidden", 0, 1, kMaxFfn);
    m.moe.shared_ffn = e.integer("shared_ffn", 0, 1, kMaxFfn);
    m.moe.first_dense = e.integer("first_dense", 0, 0, m.layers - 1);
    e.finish();
  }
  if (r.has("mla")) {
    JsonReader a = r.object("mla");
    m.mla.q_lora_rank = a.integer("q_lora_rank", 0, 1, kMaxHidden);
    m.mla.kv_lora_rank = a.integer("kv_lora_rank", std::nullopt, 1, kMaxHidden);
    m.mla.qk_head_dim = a.integer("qk_head_dim", std::nullopt, 1, kMaxHidden);
    m.mla.rope_head_dim = a.integer("rope_head_dim", std::nullopt, 1, kMaxHidden);
    m.mla.v_head_dim = a.integer("v_head_dim", std::nullopt, 1, kMaxHidden);
    a.finish();
  }
  r.finish();
  return m;
}

TrainingConfig read_training(JsonReader r) {
  TrainingConfig t;
  t.global_batch = r.integer("global_batch", std::nullopt, 1, kMaxBatch);
  t.micro_batch = r.integer("micro_batch", 1, 1, kMaxBatch);
  t.dtype = read_enum(r, "dtype", kDtypes);
  if (r.has("gradient_reduce_dtype")) t.gradient_reduce_dtype = read_enum(r, "gradient_reduce_dtype", kDtypes);
  r.choice("optimizer", {"adam"}, "adam");
  t.checkpointing = read_enum(r, "checkpointing", kCheckpointing);
  t.recompute_num_layers = r.integer("recompute_num_layers", 0, 0, 1'000'000);
  t.offload_optimizer = r.boolean("offload_optimizer", false);
  t.offload_bucket = r.integer("offload_bucket", 4'000'000, 1, int64_t{1} << 40);
  t.fp32_gradient_copy = r.boolean("fp32_gradient_copy", false);
  t.fp8 = read_enum(r, "fp8", kFp8);
  t.fp8_param_gather = r.boolean("fp8_param_gather", false);
  r.finish();
  return t;
}

// Keys of parallelism.tensor that belong to one mode only: naming them under another mode is an
// error that says which mode they need, not a bare "unknown key".
void reject_foreign_tensor_keys(const JsonReader& r, TensorMode mode) {
  const std::vector<std::pair<std::string, TensorMode>> owners = {{"size", TensorMode::megatron},
                                                                  {"q", TensorMode::optimus},
                                                                  {"x", TensorMode::axonn},
                                                                  {"y", TensorMode::axonn},
                                                                  {"z", TensorMode::axonn}};
  for (const auto& [key, owner] : owners)
    if (r.has(key) && owner != mode)
      r.fail(key, std::string("applies only to mode \"") + to_string(owner) + "\", not \"" + to_string(mode) + "\"");
}

TensorConfig read_tensor(JsonReader r) {
  TensorConfig t;
  t.mode = read_enum(r, "mode", kTensorModes);
  reject_foreign_tensor_keys(r, t.mode);
  switch (t.mode) {
    case TensorMode::none:
      break;
    case TensorMode::megatron:
      t.size = r.integer("size", std::nullopt, 1, kMaxRanks);
      break;
    case TensorMode::optimus:
      t.rows = t.cols = r.integer("q", std::nullopt, 1, 2048);
      break;
    case TensorMode::axonn:
      t.x = r.integer("x", 1, 1, kMaxRanks);
      t.y = r.integer("y", 1, 1, kMaxRanks);
      t.z = r.integer("z", 1, 1, kMaxRanks);
      break;
  }
  r.finish();
  return t;
}

ParallelConfig read_parallel(JsonReader r) {
  ParallelConfig p;
  {
    JsonReader d = r.object("data");
    p.data = d.integer("size", 1, 1, kMaxRanks);
    p.zero_stage = d.integer("zero", 0, 0, 3);
    d.finish();
  }
  p.tensor = read_tensor(r.object("tensor"));
  p.sequence_parallel = r.boolean("sequence_parallel", false);
  {
    JsonReader pp = r.object("pipeline");
    p.pipeline.stages = pp.integer("stages", 1, 1, 1 << 16);
    p.pipeline.schedule = read_enum(pp, "schedule", kSchedules);
    p.pipeline.chunks = pp.integer("chunks", 1, 1, 1 << 12);
    p.pipeline.pipeline_limit = pp.integer("pipeline_limit", 0, 0, 1 << 20);
    p.pipeline.first_stage_layers = pp.integer("first_stage_layers", 0, 1, 1'000'000);
    p.pipeline.last_stage_layers = pp.integer("last_stage_layers", 0, 1, 1'000'000);
    p.pipeline.embedding_in_split = pp.boolean("embedding_in_split", false);
    p.pipeline.loss_in_split = pp.boolean("loss_in_split", false);
    pp.finish();
  }
  {
    JsonReader e = r.object("expert");
    p.expert = e.integer("size", 1, 1, kMaxRanks);
    p.expert_tensor = e.integer("tensor", 0, 1, kMaxRanks);
    if (e.has("dispatcher")) p.expert_dispatch = read_enum(e, "dispatcher", kExpertDispatch);
    e.finish();
  }
  {
    JsonReader c = r.object("context");
    p.context = c.integer("size", 1, 1, kMaxRanks);
    p.context_comm = read_enum(c, "comm", kContextComm);
    c.finish();
  }
  r.finish();
  return p;
}

Optimizations read_optimizations(JsonReader r) {
  Optimizations o;
  o.overlap_all_reduce = r.boolean("overlap_all_reduce", false);
  o.overlap_reduce_scatter = r.boolean("overlap_reduce_scatter", false);
  o.overlap_all_gather = r.boolean("overlap_all_gather", false);
  o.overlap_gradient_sync = r.boolean("overlap_gradient_sync", false);
  o.cache_all_gather = r.boolean("cache_all_gather", false);
  o.duplicate_token_dropping = r.boolean("duplicate_token_dropping", false);
  o.comm_aware_checkpointing = r.boolean("comm_aware_checkpointing", false);
  o.scatter_gather = r.boolean("scatter_gather", false);
  o.overlap_param_gather = r.boolean("overlap_param_gather", false);
  o.overlap_tensor_comm = r.boolean("overlap_tensor_comm", false);
  o.gradient_accumulation_fusion = r.boolean("gradient_accumulation_fusion", true);
  r.finish();
  return o;
}

Placement read_placement(JsonReader r) {
  Placement p;
  if (r.has("order")) {
    p.order = r.string_list("order");
    if (p.order.empty()) r.fail("order", "is empty: list every grid axis, innermost first, or leave the key out");
  }
  p.devices_per_node = r.integer("devices_per_node", 0, 0, 1 << 16);
  if (r.has("tile")) {
    JsonReader t = r.object("tile");
    for (const auto& axis : t.keys()) p.tile.emplace_back(axis, t.integer(axis, std::nullopt, 1, 1 << 22));
    if (p.tile.empty()) r.fail("tile", "is empty: name the axes a node's block spans, or leave the key out");
  }
  r.finish();
  return p;
}

}  // namespace

Workload parse_workload(const nlohmann::json& doc, const std::string& source) {
  try {
    JsonReader top(doc, "", "workloads/README.md");
    Workload w;
    w.source = source;
    w.name = top.string("name");
    if (w.name.empty()) top.fail("name", "must not be empty");
    w.description = top.string("description", "");
    w.model = read_model(top.object("model"));
    w.training = read_training(top.object("training"));
    w.parallel = read_parallel(top.object("parallelism"));
    w.opt = read_optimizations(top.object("optimizations"));
    w.placement = read_placement(top.object("placement"));
    const bool named = top.has("framework");
    w.framework = read_framework(top.object("framework"));
    top.finish();
    if (!named) {
      const DefaultStack d = default_stack(w);
      w.framework = builtin_framework(d.profile);
      w.framework.chosen_because = d.reason;
    }
    validate(w);
    return w;
  } catch (const InputError& e) {
    if (source.empty()) throw WorkloadError(e.path(), e.message());
    throw WorkloadError(source + ": " + e.path(), e.message());
  }
}

Workload parse_workload_text(const std::string& text, const std::string& source) {
  return parse_workload(parse_json<WorkloadError>(text, source), source);
}

Workload load_workload_file(const std::string& path) {
  return parse_workload_text(read_text_file<WorkloadError>(path), path);
}

}  // namespace paratwin::workloads
