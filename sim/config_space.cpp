#include "sim/config_space.hpp"

#include <numeric>

namespace paratwin::sim {

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

// The largest micro-batch not above `wanted` that splits each replica's share of the batch.
int64_t micro_batch_for(const Workload& base, int64_t replicas, int64_t wanted) {
  if (replicas <= 0 || base.training.global_batch % replicas != 0) return wanted;  // validate() explains
  const int64_t share = base.training.global_batch / replicas;
  return std::gcd(share, wanted);
}

// Starts from the base with no parallelism: the family fills in the axes.
Workload reset(const Workload& base) {
  Workload w = base;
  w.parallel = {};
  w.parallel.zero_stage = base.parallel.zero_stage;
  w.placement.order.clear();
  w.placement.tile.clear();
  return w;
}

// Optimisations the configuration has no use for are switched off rather than refused.
void fit_optimizations(Workload& w) {
  auto& o = w.opt;
  const auto& t = w.parallel.tensor;
  const bool shards = (t.mode == TensorMode::axonn && t.z > 1) || w.parallel.zero_stage == 3;
  o.overlap_all_reduce = o.overlap_all_reduce && t.degree() > 1;
  o.overlap_reduce_scatter = o.overlap_reduce_scatter && shards;
  o.overlap_all_gather = o.overlap_all_gather && shards;
  o.cache_all_gather = o.cache_all_gather && shards;
  o.overlap_gradient_sync = o.overlap_gradient_sync && w.batch_replicas() > 1;
  o.scatter_gather = o.scatter_gather && t.mode == TensorMode::megatron && t.size > 1 && w.parallel.pipeline.stages > 1;
  o.duplicate_token_dropping = o.duplicate_token_dropping && w.model.moe.enabled() && t.degree() > 1;
  o.comm_aware_checkpointing = o.comm_aware_checkpointing && w.model.moe.enabled();
  w.parallel.sequence_parallel = w.parallel.sequence_parallel && t.mode == TensorMode::megatron && t.size > 1;
}

std::string mb_label(const Workload& w) {
  return " mb=" + std::to_string(w.training.micro_batch);
}

void four_d(const Workload& base, int64_t n, std::vector<Configuration>& out) {
  for (int64_t x : divisors(n))
    for (int64_t y : divisors(n / x))
      for (int64_t z : divisors(n / x / y)) {
        const int64_t data = n / x / y / z;
        Workload w = reset(base);
        w.parallel.tensor.mode = TensorMode::axonn;
        w.parallel.tensor.x = x;
        w.parallel.tensor.y = y;
        w.parallel.tensor.z = z;
        w.parallel.data = data;
        w.parallel.zero_stage = std::min<int64_t>(base.parallel.zero_stage, 2);
        w.training.micro_batch = micro_batch_for(base, data, base.training.micro_batch);
        w.placement.order = {"x", "y", "z", "pipe", "data"};
        fit_optimizations(w);
        out.push_back({Family::four_d,
                       "x=" + std::to_string(x) + " y=" + std::to_string(y) + " z=" + std::to_string(z) +
                           " data=" + std::to_string(data) + mb_label(w),
                       std::move(w)});
      }
}

void ptdp(const Workload& base, int64_t n, std::vector<Configuration>& out) {
  const bool base_pipelined = base.parallel.pipeline.stages > 1;
  for (int64_t t : divisors(n))
    for (int64_t p : divisors(n / t)) {
      const int64_t d = n / t / p;
      for (int64_t mb : {1, 2, 4, 8}) {
        if (d > 0 && base.training.global_batch % (d * mb) != 0) continue;
        Workload w = reset(base);
        w.parallel.tensor.mode = TensorMode::megatron;
        w.parallel.tensor.size = t;
        w.parallel.pipeline.stages = p;
        if (p > 1 && base_pipelined) {
          w.parallel.pipeline.schedule = base.parallel.pipeline.schedule;
          w.parallel.pipeline.chunks = base.parallel.pipeline.chunks;
          w.parallel.pipeline.pipeline_limit = base.parallel.pipeline.pipeline_limit;
        }
        w.parallel.data = d;
        w.parallel.sequence_parallel = base.parallel.sequence_parallel;
        w.training.micro_batch = mb;
        w.placement.order = {"tensor", "expert", "data", "pipe"};
        if (!w.model.moe.enabled()) w.placement.order = {"tensor", "data", "pipe"};
        fit_optimizations(w);
        out.push_back({Family::ptdp,
                       "t=" + std::to_string(t) + " p=" + std::to_string(p) + " d=" + std::to_string(d) + mb_label(w),
                       std::move(w)});
      }
    }
}

void ted(const Workload& base, int64_t n, std::vector<Configuration>& out) {
  for (int64_t t : divisors(n))
    for (int64_t e : divisors(n / t)) {
      const int64_t d = n / t / e;
      Workload w = reset(base);
      w.parallel.tensor.mode = TensorMode::megatron;
      w.parallel.tensor.size = t;
      w.parallel.expert = e;
      w.parallel.data = d;
      w.training.micro_batch = micro_batch_for(base, d * e, base.training.micro_batch);
      w.placement.order = {"tensor", "expert", "pipe", "data"};
      fit_optimizations(w);
      out.push_back(
          {Family::ted,
           "tensor=" + std::to_string(t) + " expert=" + std::to_string(e) + " data=" + std::to_string(d) + mb_label(w),
           std::move(w)});
    }
}

}  // namespace

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

std::vector<Configuration> configurations(const Workload& base, Family family, int64_t gpus) {
  std::vector<Configuration> out;
  if (gpus <= 0 || !applies(family, base)) return out;
  switch (family) {
    case Family::four_d:
      four_d(base, gpus, out);
      break;
    case Family::ptdp:
      ptdp(base, gpus, out);
      break;
    case Family::ted:
      ted(base, gpus, out);
      break;
  }
  for (auto& c : out) c.workload.name = base.name + " [" + c.label + "]";
  return out;
}

}  // namespace paratwin::sim
