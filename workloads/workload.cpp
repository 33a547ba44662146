#include "workloads/workload.hpp"

#include <nlohmann/json.hpp>

namespace paratwin::workloads {

int bytes_of(Dtype d) {
  return d == Dtype::fp32 ? 4 : d == Dtype::fp8 ? 1 : 2;
}

const char* to_string(Dtype d) {
  switch (d) {
    case Dtype::bf16:
      return "bf16";
    case Dtype::fp16:
      return "fp16";
    case Dtype::fp32:
      return "fp32";
    case Dtype::fp8:
      return "fp8";
  }
  return "?";
}
const char* to_string(Checkpointing c) {
  switch (c) {
    case Checkpointing::none:
      return "none";
    case Checkpointing::full:
      return "full";
    case Checkpointing::selective:
      return "selective";
    case Checkpointing::selective_op:
      return "selective_op";
  }
  return "?";
}
const char* to_string(Attention a) {
  return a == Attention::flash ? "flash" : a == Attention::math ? "math" : "unfused";
}
const char* to_string(Mlp m) {
  return m == Mlp::swiglu ? "swiglu" : m == Mlp::geglu ? "geglu" : "gelu";
}
const char* to_string(Norm n) {
  return n == Norm::rmsnorm ? "rmsnorm" : "layernorm";
}
const char* to_string(Position p) {
  switch (p) {
    case Position::learned:
      return "learned";
    case Position::rope:
      return "rope";
    case Position::alibi:
      return "alibi";
    case Position::none:
      return "none";
  }
  return "?";
}
const char* to_string(Fp8 f) {
  return f == Fp8::delayed ? "delayed" : f == Fp8::current ? "current" : "none";
}
const char* to_string(ExpertDispatch d) {
  return d == ExpertDispatch::all_gather ? "all_gather" : "all_to_all";
}

const char* to_string(ContextComm c) {
  return c == ContextComm::all_to_all ? "all_to_all" : c == ContextComm::all_gather ? "all_gather" : "p2p";
}
const char* to_string(TensorMode t) {
  switch (t) {
    case TensorMode::none:
      return "none";
    case TensorMode::megatron:
      return "megatron";
    case TensorMode::optimus:
      return "optimus";
    case TensorMode::axonn:
      return "axonn";
  }
  return "?";
}
const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe:
      return "gpipe";
    case Schedule::one_f_one_b:
      return "1f1b";
    case Schedule::interleaved:
      return "interleaved";
    case Schedule::axonn:
      return "axonn";
  }
  return "?";
}

int64_t TensorConfig::degree() const {
  switch (mode) {
    case TensorMode::none:
      return 1;
    case TensorMode::megatron:
      return size;
    case TensorMode::optimus:
      return rows * cols;
    case TensorMode::axonn:
      return x * y * z;
  }
  return 1;
}

int64_t Workload::total_ranks() const {
  return parallel.tensor.degree() * parallel.context * parallel.expert * parallel.pipeline.stages * parallel.data;
}

int64_t Workload::batch_replicas() const {
  return parallel.data * parallel.expert;
}

int64_t Workload::tokens_per_rank() const {
  return training.micro_batch * model.seq_len / parallel.context;
}

int64_t Workload::micro_batches() const {
  return training.global_batch / (batch_replicas() * training.micro_batch);
}

bool tensor_comm_overlap_fits(const Workload& w) {
  const auto& t = w.parallel.tensor;
  const int64_t tokens = w.tokens_per_rank();
  return t.mode == TensorMode::megatron && t.size > 1 && w.parallel.sequence_parallel && tokens % t.size == 0 &&
         tokens % kTensorCommPipelineSplits == 0;
}

nlohmann::json to_json(const Workload& w) {
  nlohmann::json j;
  j["name"] = w.name;
  if (!w.description.empty()) j["description"] = w.description;
  auto& m = j["model"];
  m = {{"layers", w.model.layers},         {"hidden", w.model.hidden},   {"heads", w.model.heads},
       {"ffn_hidden", w.model.ffn_hidden}, {"seq_len", w.model.seq_len}, {"vocab", w.model.vocab}};
  if (w.model.attention_dropout > 0) m["attention_dropout"] = w.model.attention_dropout;
  if (w.model.attention != Attention::unfused) m["attention"] = to_string(w.model.attention);
  if (w.model.kv_heads > 0) m["kv_heads"] = w.model.kv_heads;
  if (w.model.mlp != Mlp::gelu) m["mlp"] = to_string(w.model.mlp);
  if (w.model.norm != Norm::layernorm) m["norm"] = to_string(w.model.norm);
  if (w.model.position != Position::learned) m["position"] = to_string(w.model.position);
  if (!w.model.bias) m["bias"] = false;
  if (w.model.qkv_bias) m["qkv_bias"] = true;
  if (!w.model.tied_embeddings) m["tied_embeddings"] = false;
  if (w.model.final_norm) m["final_norm"] = true;
  if (w.model.moe.enabled())
    m["moe"] = {{"experts", w.model.moe.experts},
                {"top_k", w.model.moe.top_k},
                {"capacity_factor", w.model.moe.capacity_factor},
                {"every", w.model.moe.every},
                {"imbalance", w.model.moe.imbalance}};
  if (w.model.moe.ffn_hidden > 0) m["moe"]["ffn_hidden"] = w.model.moe.ffn_hidden;
  if (w.model.moe.shared_ffn > 0) m["moe"]["shared_ffn"] = w.model.moe.shared_ffn;
  if (w.model.moe.first_dense > 0) m["moe"]["first_dense"] = w.model.moe.first_dense;
  if (w.model.mla.enabled()) {
    m["mla"] = {{"kv_lora_rank", w.model.mla.kv_lora_rank},
                {"qk_head_dim", w.model.mla.qk_head_dim},
                {"rope_head_dim", w.model.mla.rope_head_dim},
                {"v_head_dim", w.model.mla.v_head_dim}};
    if (w.model.mla.q_lora_rank > 0) m["mla"]["q_lora_rank"] = w.model.mla.q_lora_rank;
  }
  j["training"] = {{"global_batch", w.training.global_batch},
                   {"micro_batch", w.training.micro_batch},
                   {"dtype", to_string(w.training.dtype)},
                   {"optimizer", "adam"},
                   {"checkpointing", to_string(w.training.checkpointing)},
                   {"offload_optimizer", w.training.offload_optimizer},
                   {"offload_bucket", w.training.offload_bucket},
                   {"fp32_gradient_copy", w.training.fp32_gradient_copy}};
  if (w.training.gradient_reduce_dtype)
    j["training"]["gradient_reduce_dtype"] = to_string(*w.training.gradient_reduce_dtype);
  if (w.training.fp8 != Fp8::none) j["training"]["fp8"] = to_string(w.training.fp8);
  if (w.training.fp8_param_gather) j["training"]["fp8_param_gather"] = true;
  if (w.training.recompute_num_layers > 0) j["training"]["recompute_num_layers"] = w.training.recompute_num_layers;
  auto& p = j["parallelism"];
  p["data"] = {{"size", w.parallel.data}, {"zero", w.parallel.zero_stage}};
  const auto& t = w.parallel.tensor;
  p["tensor"] = {{"mode", to_string(t.mode)}};
  if (t.mode == TensorMode::megatron) p["tensor"]["size"] = t.size;
  if (t.mode == TensorMode::optimus) p["tensor"]["q"] = t.rows;
  if (t.mode == TensorMode::axonn) {
    p["tensor"]["x"] = t.x;
    p["tensor"]["y"] = t.y;
    p["tensor"]["z"] = t.z;
  }
  p["sequence_parallel"] = w.parallel.sequence_parallel;
  p["pipeline"] = {{"stages", w.parallel.pipeline.stages},
                   {"schedule", to_string(w.parallel.pipeline.schedule)},
                   {"chunks", w.parallel.pipeline.chunks},
                   {"pipeline_limit", w.parallel.pipeline.pipeline_limit}};
  if (w.parallel.pipeline.first_stage_layers > 0)
    p["pipeline"]["first_stage_layers"] = w.parallel.pipeline.first_stage_layers;
  if (w.parallel.pipeline.last_stage_layers > 0)
    p["pipeline"]["last_stage_layers"] = w.parallel.pipeline.last_stage_layers;
  if (w.parallel.pipeline.embedding_in_split) p["pipeline"]["embedding_in_split"] = true;
  if (w.parallel.pipeline.loss_in_split) p["pipeline"]["loss_in_split"] = true;
  p["expert"] = {{"size", w.parallel.expert}};
  if (w.parallel.expert_tensor > 0) p["expert"]["tensor"] = w.parallel.expert_tensor;
  if (w.parallel.expert_dispatch != ExpertDispatch::all_to_all)
    p["expert"]["dispatcher"] = to_string(w.parallel.expert_dispatch);
  if (w.parallel.context > 1)
    p["context"] = {{"size", w.parallel.context}, {"comm", to_string(w.parallel.context_comm)}};
  j["optimizations"] = {{"overlap_all_reduce", w.opt.overlap_all_reduce},
                        {"overlap_reduce_scatter", w.opt.overlap_reduce_scatter},
                        {"overlap_all_gather", w.opt.overlap_all_gather},
                        {"overlap_gradient_sync", w.opt.overlap_gradient_sync},
                        {"cache_all_gather", w.opt.cache_all_gather},
                        {"duplicate_token_dropping", w.opt.duplicate_token_dropping},
                        {"comm_aware_checkpointing", w.opt.comm_aware_checkpointing},
                        {"scatter_gather", w.opt.scatter_gather},
                        {"overlap_param_gather", w.opt.overlap_param_gather},
                        {"overlap_tensor_comm", w.opt.overlap_tensor_comm},
                        {"gradient_accumulation_fusion", w.opt.gradient_accumulation_fusion}};
  j["placement"] = {{"devices_per_node", w.placement.devices_per_node}};
  if (!w.placement.order.empty()) j["placement"]["order"] = w.placement.order;
  for (const auto& [axis, extent] : w.placement.tile) j["placement"]["tile"][axis] = extent;
  j["framework"] = to_workload_json(w.framework);
  return j;
}

std::string configuration_label(const workloads::Workload& w) {
  const auto& p = w.parallel;
  std::string label;
  const auto add = [&](const std::string& part) { label += (label.empty() ? "" : " ") + part; };
  switch (p.tensor.mode) {
    case TensorMode::megatron:
      add("t=" + std::to_string(p.tensor.size));
      break;
    case TensorMode::optimus:
      add("q=" + std::to_string(p.tensor.rows));
      break;
    case TensorMode::axonn:
      add("x=" + std::to_string(p.tensor.x) + " y=" + std::to_string(p.tensor.y) + " z=" + std::to_string(p.tensor.z));
      break;
    case TensorMode::none:
      break;
  }
  if (p.sequence_parallel) add("sp");
  if (p.expert > 1) add("e=" + std::to_string(p.expert));
  if (p.pipeline.stages > 1) add("p=" + std::to_string(p.pipeline.stages));
  if (p.pipeline.chunks > 1) add("v=" + std::to_string(p.pipeline.chunks));
  add("d=" + std::to_string(p.data));
  if (p.zero_stage > 0) add("zero=" + std::to_string(p.zero_stage));
  add("mb=" + std::to_string(w.training.micro_batch));
  return label;
}

}  // namespace paratwin::workloads
