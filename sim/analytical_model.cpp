#include "sim/analytical_model.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "sim/analytical_collectives.hpp"
#include "sim/cost_model.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/lower.hpp"

namespace paratwin::sim {

namespace {

using workloads::Op;
using workloads::OpKind;
using workloads::Phase;
using workloads::Stream;

bool per_micro_batch(Phase p) {
  return p == Phase::forward || p == Phase::backward || p == Phase::recompute;
}

// One stage's op list laid out in time with closed-form op costs: every op starts when its stream is
// free and its dependencies are done (an ASAP schedule with in-order streams, as the engine runs them,
// minus contention between concurrent ops). A message from a neighbouring stage is taken to be there
// when asked for: waiting for other stages is the bubble, added by formula.
struct StageTimes {
  double split = 0;  // end of the last forward/backward compute: the micro-batches' part ends here
  double end = 0;    // the whole op list (gradient synchronisation and optimizer included)
  double compute_mb = 0, compute_rest = 0;
  double exposed_mb = 0, exposed_rest = 0;
  double p2p = 0;  // messages sent per micro-batch (summed), for the bubble
  struct Collective {
    double count = 0, bytes = 0, seconds = 0, exposed = 0;
  };
  std::map<std::pair<int, workloads::AxisMask>, std::array<Collective, 2>> collectives;  // [0] rest, [1] per mb
};

}  // namespace

AnalyticalModel::AnalyticalModel(const topology::Topology& topology, AnalyticalOptions options)
    : topology_(topology), options_(std::move(options)) {
  const std::string library = options_.library.empty() ? topology.machine().profile.library : options_.library;
  collectives_ = std::make_unique<CollectiveTimes>(topology, library, options_.placement_aware);
}

AnalyticalModel::~AnalyticalModel() = default;

AnalyticalEstimate AnalyticalModel::estimate(const workloads::Workload& w) {
  workloads::validate(w);
  const auto& machine = topology_.machine();
  if (w.total_ranks() > topology_.devices())
    throw std::invalid_argument(w.name + " needs " + std::to_string(w.total_ranks()) + " devices but " + machine.name +
                                " (as given) has " + std::to_string(topology_.devices()));
  const auto& pp = w.parallel.pipeline;
  const int64_t m = w.micro_batches();
  // Lower as few micro-batches as show the steady state, then scale the micro-batches' part to m:
  // gradient accumulation repeats the same ops. Without a pipeline one is enough; with p stages, 2p
  // reach the most micro-batches any schedule keeps in flight (interleaved warm-up: 2(p-1) + (v-1)p
  // chunks, at most (v+1)p of the 2p·v), so the activation memory is the full iteration's too.
  const int64_t m1 = pp.stages == 1 ? 1 : std::min(m, 2 * pp.stages);
  workloads::Workload small = w;
  small.training.global_batch = w.batch_replicas() * w.training.micro_batch * m1;
  workloads::LowerOptions lo;
  lo.devices_per_node = machine.devices_per_node();
  lo.validate_program = false;
  const auto program = workloads::lower(small, lo);
  const auto placement = program.placement();
  const CostModel cost(machine, w.framework.kernel_efficiency);
  const double scale = static_cast<double>(m) / static_cast<double>(m1);

  AnalyticalEstimate out;
  out.device_memory = machine.node.device.memory;
  out.model_flops = workloads::model_flops(w);
  const int pipe = program.grid.axis_index("pipe");
  double slowest = -1, per_mb_slowest = 0;
  for (const auto& role : program.roles) {
    const int64_t rank = pipe < 0 ? 0 : program.grid.with_coord(0, pipe, role.stage);
    StageTimes st;
    std::vector<double> end(role.ops.size(), 0);
    std::array<double, workloads::kStreams> free{};
    for (size_t i = 0; i < role.ops.size(); ++i) {
      const Op& op = role.ops[i];
      double ready = 0;
      int64_t last = -1;  // the dependency that finishes last
      const uint32_t* d = role.deps_of(op);
      for (uint32_t k = 0; k < op.dep_count; ++k)
        if (last < 0 || end[d[k]] > ready) {
          ready = end[d[k]];
          last = d[k];
        }
      const auto s = static_cast<size_t>(op.stream);
      const double start = std::max(free[s], ready);
      const bool mb = per_micro_batch(op.phase);
      double seconds = 0;
      if (workloads::is_compute(op.kind)) {
        seconds = cost.compute_seconds(op);
        (mb ? st.compute_mb : st.compute_rest) += op.stream == Stream::compute ? seconds : 0;
      } else if (workloads::is_collective(op.kind)) {
        seconds = collectives_->seconds(program, placement, rank, op.kind, op.group, op.bytes, op.root);
        auto& c = st.collectives[{static_cast<int>(op.kind), op.group}][mb ? 1 : 0];
        c.count += 1;
        c.bytes += op.bytes;
        c.seconds += seconds;
      } else if (op.kind == OpKind::send) {
        seconds = collectives_->message_seconds(program, placement, rank, op.bytes);
        st.p2p += seconds;
      }
      // The compute stream waited: charge the wait to the collective it waited for.
      if (op.stream == Stream::compute && start > free[s] && last >= 0) {
        const Op& blocker = role.ops[static_cast<size_t>(last)];
        const double gap = start - free[s];
        if (workloads::is_collective(blocker.kind)) {
          (mb ? st.exposed_mb : st.exposed_rest) += gap;
          st.collectives[{static_cast<int>(blocker.kind), blocker.group}][mb ? 1 : 0].exposed += gap;
        }
      }
      end[i] = start + seconds;
      free[s] = end[i];
      st.end = std::max(st.end, end[i]);
      if (op.stream == Stream::compute && mb) st.split = std::max(st.split, end[i]);
    }
    // Seed 003 §2.2: (p-1)/v micro-batch times of fill and drain, messages included.
    const double per_mb = (st.split + st.p2p) / static_cast<double>(m1);
    const double time = scale * st.split + (st.end - st.split);
    if (time > slowest) {
      slowest = time;
      per_mb_slowest = per_mb;
      out.compute = scale * st.compute_mb + st.compute_rest;
      out.exposed_comm = scale * st.exposed_mb + st.exposed_rest;
      out.p2p_seconds = scale * st.p2p;
      out.collectives.clear();
      for (const auto& [key, parts] : st.collectives) {
        AxisCost a;
        a.kind = static_cast<OpKind>(key.first);
        a.group = program.grid.mask_name(key.second);
        a.group_size = program.grid.group_size(key.second);
        a.bandwidth = collectives_->ring_bandwidth(program, placement, rank, key.second);
        for (int k = 0; k < 2; ++k) {
          const double f = k == 1 ? scale : 1.0;
          a.count += static_cast<int64_t>(parts[static_cast<size_t>(k)].count * f + 0.5);
          a.bytes += parts[static_cast<size_t>(k)].bytes * f;
          a.seconds += parts[static_cast<size_t>(k)].seconds * f;
          a.exposed += parts[static_cast<size_t>(k)].exposed * f;
        }
        out.collectives.push_back(a);
      }
    }
    // Memory: the busiest stage. GPipe keeps every micro-batch's activations; the lowered m1 of them
    // stand for m.
    auto memory = role.memory;
    if (pp.schedule == workloads::Schedule::gpipe && pp.stages > 1) memory.activations *= scale;
    if (memory.total() > out.memory.total()) out.memory = memory;
  }
  out.bubble_fraction = static_cast<double>(pp.stages - 1) / (static_cast<double>(pp.chunks) * static_cast<double>(m));
  out.micro_batch = per_mb_slowest;
  out.bubble = pp.stages > 1 ? static_cast<double>(pp.stages - 1) / static_cast<double>(pp.chunks) * per_mb_slowest : 0;
  out.iteration = slowest + out.bubble;
  out.tokens_per_second = static_cast<double>(w.training.global_batch * w.model.seq_len) / out.iteration;
  out.percent_of_peak =
      100 * out.model_flops / out.iteration / static_cast<double>(w.total_ranks()) / cost.peak_flops(w.training.dtype);
  return out;
}

AnalyticalEstimate estimate(const workloads::Workload& w, const topology::Topology& topology,
                            const AnalyticalOptions& options) {
  AnalyticalModel model(topology, options);
  return model.estimate(w);
}

}  // namespace paratwin::sim
