#include "sim/analytical_model.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <stdexcept>

#include "sim/analytical_collectives.hpp"
#include "sim/cost_model.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/lower.hpp"
#include "workloads/op_walker.hpp"

namespace paratwin::sim {

namespace {

using workloads::Op;
using workloads::OpKind;
using workloads::Phase;
using workloads::Stream;

bool per_micro_batch(Phase p) {
  return p == Phase::forward || p == Phase::backward || p == Phase::recompute;
}

// One stage's op list laid out in time with closed-form op costs by the op walker the engine and the
// executor drive (workloads/op_walker.hpp): every op starts when its stream is free and its
// dependencies are done, minus the engine's contention between concurrent ops. A message from a neighbouring stage is
// taken to be there when asked for: waiting for other stages is the bubble, added by formula.
struct StageTimes {
  double split = 0;  // end of the last forward/backward compute: the micro-batches' part ends here
  double end = 0;    // the whole op list (gradient synchronisation and optimizer included)
  double compute_mb = 0, compute_rest = 0;
  double exposed_mb = 0, exposed_rest = 0;
  double message_mb = 0, message_rest = 0;  // waits for a message within the stage (the ledger's bubble)
  double idle_mb = 0, idle_rest = 0;        // waits for anything else (the ledger's other idle)
  double p2p = 0;                           // messages sent per micro-batch (summed), for the bubble
  double extra = 0;  // what collectives outside the micro-batches added to their compute (ComputePacer)
  struct Collective {
    double count = 0, bytes = 0, seconds = 0, exposed = 0;
  };
  std::map<std::pair<int, workloads::AxisMask>, std::array<Collective, 2>> collectives;  // [0] rest, [1] per mb
};

// The compute stream's running op, slowed while a collective of the rank is in flight on another stream
// (the collective's kernel takes compute units and memory bandwidth: ProfileSpec
// compute_slowdown_communicating), as the engine's RankActor::compute_pace paces it: its end moves
// whenever a collective starts or ends. The lowered micro-batches stand for m (the estimate scales
// them), but a collective outside them (the gradient synchronisation overlapping the last backward)
// slows their compute once: what it costs them is kept apart, not to be scaled.
class ComputePacer {
 public:
  explicit ComputePacer(double slowdown) : slowdown_(slowdown) {}
  bool on() const { return slowdown_ > 0; }
  // Compute op `op`, `seconds` long at full speed, starts now: its end.
  double start(uint32_t op, double now, double seconds, bool micro_batch) {
    op_ = op;
    left_ = seconds;
    mark_ = now;
    micro_batch_ = micro_batch;
    set_rate();
    return now + left_ / rate_;
  }
  // A collective of a micro-batch's phases (or another) starts (+1) or ends (-1) now: the paced op and
  // its new end, if one runs.
  std::optional<std::pair<uint32_t, double>> collective(double now, bool micro_batch, int change) {
    (micro_batch ? in_micro_batch_ : outside_) += change;
    if (op_ < 0) return std::nullopt;
    settle(now);
    set_rate();
    return std::make_pair(static_cast<uint32_t>(op_), now + left_ / rate_);
  }
  // Op `op` ended now.
  void finished(uint32_t op, double now) {
    if (static_cast<int64_t>(op) != op_) return;
    settle(now);
    op_ = -1;
  }
  // What collectives outside the micro-batches added to the micro-batches' compute.
  double extra_outside() const { return extra_outside_; }

 private:
  void settle(double now) {
    const double elapsed = now - mark_;
    left_ = std::max(0.0, left_ - elapsed * rate_);
    if (outside_only_ && micro_batch_) extra_outside_ += elapsed * (1 - rate_);
    mark_ = now;
  }
  void set_rate() {
    rate_ = in_micro_batch_ + outside_ > 0 ? 1 - slowdown_ : 1.0;
    outside_only_ = in_micro_batch_ == 0 && outside_ > 0;
  }

  double slowdown_;
  int64_t op_ = -1;
  double left_ = 0, mark_ = 0, rate_ = 1, extra_outside_ = 0;
  bool micro_batch_ = false, outside_only_ = false;
  int in_micro_batch_ = 0, outside_ = 0;
};

// One stage's ops walked in order: every op starts when its stream is free and its dependencies are
// done and takes `seconds_of` it alone, compute paced while a collective runs beside it
// (`compute_slowdown`); its times split into the micro-batches' part and the rest.
StageTimes walk_stage(const workloads::Role& role, double compute_slowdown,
                      const std::function<double(const Op&)>& seconds_of) {
  StageTimes st;
  workloads::OpWalker walker(role);
  std::vector<double> began(role.ops.size(), 0), ends(role.ops.size(), 0);
  std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>> running;
  double now = 0;
  ComputePacer pacer(compute_slowdown);
  const auto moved = [&](std::optional<std::pair<uint32_t, double>> end) {
    if (!end) return;
    ends[end->first] = end->second;
    running.emplace(end->second, end->first);
  };
  const auto side_collective = [&](const Op& op) {
    return workloads::is_collective(op.kind) && op.stream != Stream::compute;
  };
  const auto start = [&](int, uint32_t i) {
    const Op& op = role.ops[i];
    const bool mb = per_micro_batch(op.phase);
    for (const workloads::IdleCharge& wait : walker.started(i, now)) {
      if (wait.cause == workloads::IdleCause::collective) {
        const Op& blocker = role.ops[static_cast<size_t>(wait.blocker)];
        (mb ? st.exposed_mb : st.exposed_rest) += wait.seconds;
        st.collectives[{static_cast<int>(blocker.kind), blocker.group}][mb ? 1 : 0].exposed += wait.seconds;
      } else if (wait.cause == workloads::IdleCause::message) {
        (mb ? st.message_mb : st.message_rest) += wait.seconds;
      } else {
        (mb ? st.idle_mb : st.idle_rest) += wait.seconds;
      }
    }
    const double seconds = seconds_of(op);
    if (workloads::is_collective(op.kind)) {
      auto& c = st.collectives[{static_cast<int>(op.kind), op.group}][mb ? 1 : 0];
      c.count += 1;
      c.bytes += op.bytes;
      c.seconds += seconds;
    } else if (op.kind == OpKind::send) {
      st.p2p += seconds;
    }
    began[i] = now;
    ends[i] = now + seconds;
    if (pacer.on() && op.stream == Stream::compute && workloads::is_compute(op.kind) && seconds > 0)
      ends[i] = pacer.start(i, now, seconds, mb);
    running.emplace(ends[i], i);
    if (side_collective(op)) moved(pacer.collective(now, mb, +1));
  };
  while (!walker.finished()) {
    walker.start_ready(workloads::kStreamOrder, start);
    const auto [end, i] = running.top();
    running.pop();
    if (end != ends[i]) continue;  // an end the pace moved, or a second entry of an op done
    ends[i] = -1;
    now = end;
    pacer.finished(i, now);
    if (role.ops[i].stream == Stream::compute && workloads::is_compute(role.ops[i].kind))
      (per_micro_batch(role.ops[i].phase) ? st.compute_mb : st.compute_rest) += end - began[i];
    if (side_collective(role.ops[i])) moved(pacer.collective(now, per_micro_batch(role.ops[i].phase), -1));
    walker.finished(i, began[i], end);
    st.end = std::max(st.end, end);
    if (role.ops[i].stream == Stream::compute && per_micro_batch(role.ops[i].phase)) st.split = std::max(st.split, end);
  }
  st.extra = pacer.extra_outside();
  return st;
}

}  // namespace

AnalyticalModel::AnalyticalModel(const topology::Topology& topology, AnalyticalOptions options)
    : topology_(topology), options_(std::move(options)) {
  const std::string library = options_.library.empty() ? topology.machine().profile.library : options_.library;
  collectives_ = std::make_unique<CollectiveTimes>(topology, library, options_.placement_aware);
}

AnalyticalModel::~AnalyticalModel() = default;

AnalyticalEstimate AnalyticalModel::estimate(const workloads::Workload& w) {
  return estimate(w, true);
}

AnalyticalEstimate AnalyticalModel::estimate_if_fits(const workloads::Workload& w) {
  return estimate(w, false);
}

AnalyticalEstimate AnalyticalModel::estimate(const workloads::Workload& w, bool time_what_does_not_fit) {
  workloads::validate(w);
  const auto& machine = topology_.machine();
  if (w.total_ranks() > topology_.devices())
    // A precondition its callers check where the user gives workload and machine (predict, search).
    throw std::logic_error("estimate: " + w.name + " needs " + std::to_string(w.total_ranks()) + " devices but " +
                           machine.name + " (as given) has " + std::to_string(topology_.devices()));
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
  const CostModel cost(machine, w.framework);
  const double scale = static_cast<double>(m) / static_cast<double>(m1);

  AnalyticalEstimate out;
  out.device_memory = machine.node.device.memory;
  const auto flops = workloads::iteration_flops(w);
  out.model_flops = flops.model;
  out.hardware_flops = flops.hardware;
  // Memory: the busiest stage. GPipe keeps every micro-batch's activations; the lowered m1 of them
  // stand for m.
  for (const auto& role : program.roles) {
    auto memory = role.memory;
    if (pp.schedule == workloads::Schedule::gpipe && pp.stages > 1) memory.activations *= scale;
    if (memory.total() > out.memory.total()) out.memory = memory;
  }
  if (!time_what_does_not_fit && !out.fits()) return out;
  const int pipe = program.grid.axis_index("pipe");
  double slowest = -1, per_mb_slowest = 0;
  for (const auto& role : program.roles) {
    const int64_t rank = pipe < 0 ? 0 : program.grid.with_coord(0, pipe, role.stage);
    // One op alone at closed-form cost: compute by the cost model, collectives and messages over the
    // topology from this stage's first rank.
    const auto seconds_of = [&](const Op& op) -> double {
      if (workloads::is_compute(op.kind))
        return op.kind == OpKind::gemm ? gemm_seconds(cost, op) : cost.compute_seconds(op);
      if (workloads::is_collective(op.kind))
        return collectives_->seconds(program, placement, rank, op.kind, op.group, op.bytes, op.root);
      if (op.kind == OpKind::send) return collectives_->message_seconds(program, placement, rank, op.bytes);
      return 0.0;
    };
    StageTimes st = walk_stage(role, machine.profile.compute_slowdown_communicating, seconds_of);
    // [narayanan2021megatron] §2.2: (p-1)/v micro-batch times of fill and drain, messages included.
    const double extra = st.extra;
    const double per_mb = (st.split - extra + st.p2p) / static_cast<double>(m1);
    const double time = scale * (st.split - extra) + extra + (st.end - st.split);
    st.compute_mb -= extra;
    st.compute_rest += extra;
    if (time > slowest) {
      slowest = time;
      per_mb_slowest = per_mb;
      out.compute = scale * st.compute_mb + st.compute_rest;
      out.exposed_comm = scale * st.exposed_mb + st.exposed_rest;
      out.message_wait = scale * st.message_mb + st.message_rest;
      out.other_idle = scale * st.idle_mb + st.idle_rest;
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
  }
  out.bubble_fraction = static_cast<double>(pp.stages - 1) / (static_cast<double>(pp.chunks) * static_cast<double>(m));
  out.micro_batch = per_mb_slowest;
  out.bubble =
      out.message_wait +
      (pp.stages > 1 ? static_cast<double>(pp.stages - 1) / static_cast<double>(pp.chunks) * per_mb_slowest : 0);
  out.iteration = slowest + out.bubble;
  out.tokens_per_second = static_cast<double>(w.training.global_batch * w.model.seq_len) / out.iteration;
  const auto rates = workloads::flop_rates(flops, out.iteration, static_cast<double>(w.total_ranks()),
                                           cost.peak_flops(w.training.dtype));
  out.percent_of_peak = rates.model_percent;
  out.percent_of_peak_hardware = rates.hardware_percent;
  return out;
}

double AnalyticalModel::gemm_seconds(const CostModel& cost, const workloads::Op& op) {
  const auto& g = op.gemm;
  const auto key = std::make_tuple(g.m, g.n, g.k, g.batch, (g.trans_a ? 2 : 0) + (g.trans_b ? 1 : 0),
                                   static_cast<int>(op.dtype), cost.efficiency(op));
  const auto found = gemm_seconds_.find(key);
  if (found != gemm_seconds_.end()) return found->second;
  return gemm_seconds_[key] = cost.compute_seconds(op);
}

AnalyticalEstimate estimate(const workloads::Workload& w, const topology::Topology& topology,
                            const AnalyticalOptions& options) {
  AnalyticalModel model(topology, options);
  return model.estimate(w);
}

}  // namespace paratwin::sim
