#include "sim/config_space.hpp"

#include <algorithm>
#include <numeric>

#include "workloads/op_checkpointing.hpp"

namespace paratwin::sim {

using workloads::Checkpointing;
using workloads::Schedule;
using workloads::TensorMode;
using workloads::Workload;

namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// Micro-batch sizes, smallest first: each replica's share of the batch must split into them.
std::vector<int64_t> micro_batches(const Workload& base, int64_t replicas, const Vary& vary) {
  const int64_t wanted = base.training.micro_batch;
  if (replicas <= 0 || base.training.global_batch % replicas != 0) return {wanted};  // validate() explains
  const int64_t share = base.training.global_batch / replicas;
  // Not varied: the largest not above the base's that splits the share, as before the search varied it.
  if (!vary.micro_batch) return {std::gcd(share, wanted)};
  std::vector<int64_t> out;
  for (int64_t mb = 1; mb <= std::max<int64_t>(8, wanted); mb *= 2)
    if (share % mb == 0) out.push_back(mb);
  if (share % wanted == 0 && std::find(out.begin(), out.end(), wanted) == out.end()) out.push_back(wanted);
  std::sort(out.begin(), out.end());
  return out;
}

// Starts from the base with no parallelism: the family fills in the axes. How tokens reach experts is
// the stack's choice, not a split of the GPUs: kept.
Workload reset(const Workload& base) {
  Workload w = base;
  w.parallel = {};
  w.parallel.expert_dispatch = base.parallel.expert_dispatch;
  w.parallel.context_comm = base.parallel.context_comm;
  w.placement.order.clear();
  w.placement.tile.clear();
  return w;
}

// Optimisations the variant has no use for are switched off rather than refused.
void fit_optimizations(Workload& w) {
  auto& o = w.opt;
  const auto& t = w.parallel.tensor;
  const bool shards = (t.mode == TensorMode::axonn && t.z > 1) || w.parallel.zero_stage == 3;
  o.overlap_all_reduce = o.overlap_all_reduce && t.degree() > 1;
  o.overlap_reduce_scatter = o.overlap_reduce_scatter && shards;
  o.overlap_all_gather = o.overlap_all_gather && shards;
  o.cache_all_gather = o.cache_all_gather && shards && w.training.checkpointing != Checkpointing::none;
  o.overlap_gradient_sync = o.overlap_gradient_sync && w.batch_replicas() > 1;
  o.scatter_gather = o.scatter_gather && t.mode == TensorMode::megatron && t.size > 1 && w.parallel.pipeline.stages > 1;
  o.duplicate_token_dropping = o.duplicate_token_dropping && w.model.moe.enabled() && t.degree() > 1;
  o.comm_aware_checkpointing =
      o.comm_aware_checkpointing && w.model.moe.enabled() && w.training.checkpointing == Checkpointing::full;
  o.overlap_param_gather =
      o.overlap_param_gather && (w.parallel.zero_stage == 1 || w.parallel.zero_stage == 2) && w.batch_replicas() > 1;
  o.overlap_tensor_comm = o.overlap_tensor_comm && tensor_comm_overlap_fits(w);
}

// The memory-for-time variants of a configuration whose parallelism is set in `w`, expected fastest
// first. A dimension not varied keeps the base's value (or the nearest the configuration allows).
void add_variants(Configuration& c, const Workload& base, const std::vector<int64_t>& micro, const Vary& vary) {
  const auto& t = c.workload.parallel.tensor;
  const bool megatron_tp = t.mode == TensorMode::megatron && t.size > 1;
  // validate(): ZeRO-3 with axonn or optimus is refused (z already shards weights).
  const int64_t max_zero = t.mode == TensorMode::axonn || t.mode == TensorMode::optimus ? 2 : 3;
  std::vector<Checkpointing> ckpt{base.training.checkpointing};
  if (vary.checkpointing) ckpt = {Checkpointing::none, Checkpointing::selective, Checkpointing::full};
  // TorchTitan's per-op policy where the stack has it and it is modelled for this configuration.
  if (vary.checkpointing && base.framework.features.op_selective_recompute && base.framework.profile != "generic" &&
      workloads::op_checkpointing_unmodelled(c.workload).empty())
    ckpt.insert(ckpt.begin() + 2, Checkpointing::selective_op);
  std::vector<int64_t> zero{std::min(base.parallel.zero_stage, max_zero)};
  // Expected fastest first: ZeRO-1 and 2 run the same steps, which usually take no longer than
  // ZeRO-0's (the all-reduce's bytes as a reduce-scatter and an all-gather, the optimizer step split
  // over the replicas); ZeRO-3 gathers weights every layer.
  if (vary.zero) zero = c.workload.batch_replicas() > 1 ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0};
  if (vary.zero && c.workload.batch_replicas() > 1 && max_zero == 3) zero.push_back(3);
  std::vector<bool> sp{base.parallel.sequence_parallel && megatron_tp};
  if (vary.sequence_parallel && megatron_tp) sp = {false, true};
  std::vector<int64_t> mbs = micro;
  std::reverse(mbs.begin(), mbs.end());  // the largest first
  for (int64_t mb : mbs)
    for (auto k : ckpt)
      for (int64_t z : zero)
        for (bool s : sp) c.variants.push_back({k, z, s, mb});
}

std::string pipeline_label(const Workload& w) {
  const auto& p = w.parallel.pipeline;
  std::string out = p.chunks > 1 ? " v" + std::to_string(p.chunks) : "";
  if (p.first_stage_layers > 0) out += " first" + std::to_string(p.first_stage_layers);
  if (p.last_stage_layers > 0) out += " last" + std::to_string(p.last_stage_layers);
  if (p.embedding_in_split || p.loss_in_split) out += " +emb+loss";
  return out;
}

void four_d(const Workload& base, int64_t n, const Vary& vary, std::vector<Configuration>& out) {
  for (int64_t x : divisors(n))
    for (int64_t y : divisors(n / x))
      for (int64_t z : divisors(n / x / y)) {
        const int64_t data = n / x / y / z;
        Configuration c;
        c.family = Family::four_d;
        c.axes =
            "x" + std::to_string(x) + " y" + std::to_string(y) + " z" + std::to_string(z) + " d" + std::to_string(data);
        Workload& w = c.workload;
        w = reset(base);
        w.parallel.tensor.mode = TensorMode::axonn;
        w.parallel.tensor.x = x;
        w.parallel.tensor.y = y;
        w.parallel.tensor.z = z;
        w.parallel.data = data;
        w.placement.order = {"x", "y", "z", "pipe", "data"};
        c.micro_batch_is_knob = true;
        add_variants(c, base, micro_batches(base, data, vary), vary);
        out.push_back(std::move(c));
      }
}

// p stages over layers that p does not divide, as Megatron-Core splits them (megatron/training/
// arguments.py, main 2026-11): the embedding and the loss counted as a layer each when that makes the
// count divide (--account-for-embedding/loss-in-pipeline-split, as Megatron-Bridge's Llama 3.1 405B
// recipe), else the remainder over the first and last stages, the middle ones taking ceil(layers / p)
// each (--decoder-first/last-pipeline-num-layers). False when neither fits.
bool uneven_split(int64_t layers, workloads::PipelineConfig& pipeline) {
  const int64_t p = pipeline.stages;
  if (p < 2 || layers % p == 0) return false;
  if ((layers + 2) % p == 0 && (layers + 2) / p >= 2) {
    pipeline.embedding_in_split = pipeline.loss_in_split = true;
    return true;
  }
  if (p < 3) return false;
  const int64_t middle = (layers + p - 1) / p, ends = layers - (p - 2) * middle;
  const int64_t first = ends / 2, last = ends - first;
  if (first < 1 || last > middle) return false;
  pipeline.first_stage_layers = first;
  pipeline.last_stage_layers = last;
  return true;
}

// The pipeline schedules of p stages: v = 1 (the base's schedule when it is pipelined and not
// interleaved, else 1F1B; split unevenly when p does not divide the layers) and interleaved v where
// p·v divides the layers.
std::vector<workloads::PipelineConfig> schedules(const Workload& base, int64_t p, const Vary& vary) {
  const auto& bp = base.parallel.pipeline;
  workloads::PipelineConfig plain;
  plain.stages = p;
  if (p > 1 && bp.stages > 1 && bp.schedule != Schedule::interleaved) {
    plain.schedule = bp.schedule;
    plain.pipeline_limit = bp.pipeline_limit;
  }
  if (p == bp.stages &&
      (bp.first_stage_layers > 0 || bp.last_stage_layers > 0 || bp.embedding_in_split || bp.loss_in_split)) {
    plain.first_stage_layers = bp.first_stage_layers;  // the base's own split of its stages
    plain.last_stage_layers = bp.last_stage_layers;
    plain.embedding_in_split = bp.embedding_in_split;
    plain.loss_in_split = bp.loss_in_split;
  } else if (vary.uneven_stages) {
    uneven_split(base.model.layers, plain);
  }
  if (p == 1) return {plain};
  std::vector<workloads::PipelineConfig> out;
  if (!vary.chunks) {
    if (bp.stages > 1 && bp.schedule == Schedule::interleaved && bp.chunks > 1)
      out.push_back({p, Schedule::interleaved, bp.chunks, 0});  // validate() explains if p·v ∤ layers
    else
      out.push_back(plain);
    return out;
  }
  out.push_back(plain);
  const int64_t layers = base.model.layers;
  for (int64_t v = 2; p * v <= layers; ++v) {
    workloads::PipelineConfig interleaved{p, Schedule::interleaved, v, 0};
    if (layers % (p * v) == 0) {
      out.push_back(interleaved);
    } else if (vary.uneven_stages && (layers + 2) % (p * v) == 0) {
      interleaved.embedding_in_split = interleaved.loss_in_split = true;  // 126 layers on 8 × 8 (Llama 3.1 405B)
      out.push_back(interleaved);
    }
  }
  return out;
}

// The context-parallel sizes of PTD-P on n GPUs: 1, and where the stack runs context parallelism every
// c whose ranks keep at least kMinContextTokens of the sequence in 2·c equal chunks (Megatron-Core's
// causal load balancing); not varied, the base's c where it divides n.
constexpr int64_t kMinContextTokens = 4096;
std::vector<int64_t> contexts(const Workload& base, int64_t n, const Vary& vary) {
  if (!vary.context) return {n % base.parallel.context == 0 ? base.parallel.context : 1};
  std::vector<int64_t> out{1};
  if (!base.framework.features.context_parallel) return out;
  const int64_t s = base.model.seq_len;
  for (int64_t c : divisors(n))
    if (c > 1 && s % (2 * c) == 0 && s / c >= kMinContextTokens) out.push_back(c);
  return out;
}

void ptdp(const Workload& base, int64_t n, const Vary& vary, std::vector<Configuration>& out) {
  for (int64_t t : divisors(n))
    for (int64_t cp : contexts(base, n / t, vary))
      for (int64_t p : divisors(n / t / cp)) {
        const int64_t d = n / t / cp / p;
        const auto micro = micro_batches(base, d, vary);
        // With a pipeline the micro-batch sets the bubble: each size is a configuration of its own.
        const std::vector<std::vector<int64_t>> groups =
          p > 1 ? [&] {
            std::vector<std::vector<int64_t>> g;
            for (int64_t mb : micro) g.push_back({mb});
            return g;
          }()
                : std::vector<std::vector<int64_t>>{micro};
        for (const auto& mbs : groups)
          for (const auto& pipeline : schedules(base, p, vary)) {
            Configuration c;
            c.family = Family::ptdp;
            c.axes = "t" + std::to_string(t) + (cp > 1 ? " c" + std::to_string(cp) : "") + " p" + std::to_string(p) +
                     " d" + std::to_string(d);
            Workload& w = c.workload;
            w = reset(base);
            w.parallel.tensor.mode = TensorMode::megatron;
            w.parallel.tensor.size = t;
            w.parallel.context = cp;
            w.parallel.pipeline = pipeline;
            w.parallel.data = d;
            // Megatron-LM's rank order: tensor, context, expert, data, pipeline.
            w.placement.order = {"tensor", "context", "expert", "data", "pipe"};
            if (!w.model.moe.enabled()) std::erase(w.placement.order, std::string("expert"));
            if (cp == 1) std::erase(w.placement.order, std::string("context"));
            if (t == 1) {
              // No tensor parallelism: the same program as Megatron's with one tensor rank, which a stack
              // without Megatron's tensor parallelism (FSDP, DeepSpeed ZeRO) can run.
              w.parallel.tensor.mode = TensorMode::none;
              std::erase(w.placement.order, std::string("tensor"));
            }
            c.micro_batch_is_knob = p == 1;
            add_variants(c, base, mbs, vary);
            out.push_back(std::move(c));
          }
      }
}

// TED's split experts, and with tensor parallelism and expert_folding the same axes with every expert
// whole and spread over the tensor × expert ranks (Megatron-Core --expert-tensor-parallel-size 1,
// labelled "ef": its expert-parallel size is t·e).
void ted(const Workload& base, int64_t n, const Vary& vary, std::vector<Configuration>& out) {
  for (int64_t t : divisors(n))
    for (int64_t e : divisors(n / t))
      for (const bool folded : {false, true}) {
        if (folded && (t == 1 || !vary.expert_folding || base.model.moe.experts % (t * e) != 0)) continue;
        const int64_t d = n / t / e;
        Configuration c;
        c.family = Family::ted;
        c.axes = "t" + std::to_string(t) + (folded ? " ef" : " e") + std::to_string(e) + " d" + std::to_string(d);
        Workload& w = c.workload;
        w = reset(base);
        w.parallel.tensor.mode = TensorMode::megatron;
        w.parallel.tensor.size = t;
        w.parallel.expert = e;
        w.parallel.expert_tensor = folded ? 1 : 0;
        w.parallel.data = d;
        w.placement.order = {"tensor", "expert", "pipe", "data"};
        c.micro_batch_is_knob = true;
        add_variants(c, base, micro_batches(base, d * e, vary), vary);
        out.push_back(std::move(c));
      }
}

}  // namespace

Workload Configuration::with(const Knobs& k) const {
  Workload w = workload;
  w.training.checkpointing = k.checkpointing;
  // A partial count belongs to full checkpointing (workload.hpp recompute_num_layers).
  if (k.checkpointing != Checkpointing::full) w.training.recompute_num_layers = 0;
  w.training.micro_batch = k.micro_batch;
  w.parallel.zero_stage = k.zero;
  w.parallel.sequence_parallel = k.sequence_parallel;
  fit_optimizations(w);
  w.name = workload.name + " [" + label(k) + "]";
  return w;
}

std::string Configuration::label(const Knobs& k) const {
  static const char* const recompute[] = {"none", "full", "sel", "selop"};  // Checkpointing's order
  std::string out = axes + " mb" + std::to_string(k.micro_batch) + pipeline_label(workload);
  if (k.sequence_parallel) out += " sp";
  out += std::string(" ") + recompute[static_cast<int>(k.checkpointing)];
  if (k.zero > 0) out += " zero" + std::to_string(k.zero);
  return out;
}

bool applies(Family family, const Workload& base) {
  switch (family) {
    case Family::four_d:
      return !base.model.moe.enabled();
    case Family::ted:
      return base.model.moe.enabled();
    case Family::ptdp:
      return true;
  }
  return false;
}

std::vector<Configuration> configurations(const Workload& base, Family family, int64_t gpus, const Vary& vary) {
  std::vector<Configuration> out;
  if (gpus <= 0 || !applies(family, base)) return out;
  switch (family) {
    case Family::four_d:
      four_d(base, gpus, vary, out);
      break;
    case Family::ptdp:
      ptdp(base, gpus, vary, out);
      break;
    case Family::ted:
      ted(base, gpus, vary, out);
      break;
  }
  // Hybrid sharding's replicas are an axis of their own (workloads/grid.cpp make_grid), placed right
  // outside the shard groups, as the base workload must list it.
  if (base.framework.sharding.shard_group > 0)
    for (auto& c : out) {
      auto& order = c.workload.placement.order;
      const auto data = std::find(order.begin(), order.end(), "data");
      if (data != order.end() && std::find(order.begin(), order.end(), "replica") == order.end())
        order.insert(data + 1, "replica");
    }
  return out;
}

namespace {

// Recomputation from least to most: none, selective, full.
int recompute_level(Checkpointing c) {
  return c == Checkpointing::none ? 0 : c == Checkpointing::selective ? 1 : 2;
}

}  // namespace

// Each ZeRO stage is compared with itself only. ZeRO-1's reduce-scatter and all-gather move the bytes
// of 0's all-reduce and split the optimizer step, faster for large models, slower for small ones (the
// all-gather after the step is exposed). ZeRO-2 reduce-scatters every micro-batch's gradients during
// its backward (DeepSpeed's stage_1_and_2.py), which can hide them where ZeRO-1's one reduction after
// the last micro-batch is exposed, or cost more where there are many micro-batches. Stage 3 adds weight
// gathers but needs no all-gather after the step, so it can beat 1 and 2 when the gathers overlap.
bool no_slower(const Configuration& c, const Knobs& a, const Knobs& b) {
  if (a.sequence_parallel != b.sequence_parallel || a.zero != b.zero) return false;
  if (a.zero > b.zero || recompute_level(a.checkpointing) > recompute_level(b.checkpointing)) return false;
  return c.micro_batch_is_knob ? a.micro_batch >= b.micro_batch : a.micro_batch == b.micro_batch;
}

bool no_larger(const Knobs& a, const Knobs& b) {
  return recompute_level(a.checkpointing) >= recompute_level(b.checkpointing) && a.zero >= b.zero &&
         a.sequence_parallel >= b.sequence_parallel && a.micro_batch <= b.micro_batch;
}

}  // namespace paratwin::sim
