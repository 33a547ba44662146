#include "sim/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <simgrid/s4u.hpp>
#include <unordered_map>

#include "sim/cost_model.hpp"
#include "sim/folding.hpp"
#include "sim/group_layouts.hpp"
#include "sim/node_collectives.hpp"
#include "sim/phases.hpp"
#include "sim/tuner.hpp"
#include "topology/platform.hpp"

namespace paratwin::sim {

namespace {

namespace sg4 = simgrid::s4u;
using workloads::Op;
using workloads::OpKind;
using workloads::Role;
using workloads::Stream;

constexpr int kStreams = workloads::kStreams;
constexpr int kChannelForward = 100, kChannelBackward = 101;
// SimGrid refuses null payloads; messages carry this token (only their simulated size matters).
int kToken = 0;
// A phase's transfers fall into a few size classes (sim/phases.hpp); each class is one flow to a sink.
constexpr int kFlowsPerPhase = static_cast<int>(kMaxFlows);

topology::PlatformOptions platform_options(const SimOptions& o) {
  topology::PlatformOptions p;
  p.zero_latency = o.free_communication;
  p.actor_hosts = o.fidelity == Fidelity::fast;
  p.sinks = p.actor_hosts ? kStreams * kFlowsPerPhase : 0;
  return p;
}

// An actor waiting at a phase for its last member, and the stream it waits on.
struct Waiter {
  int32_t actor = 0;
  int stream = 0;
};

struct PhaseEntry {
  int32_t arrived = 0;
  std::vector<Waiter> waiting;
};

// State shared by every rank actor (the simulation runs all actors in one thread).
struct Shared {
  const workloads::Program& program;
  const topology::Topology& topology;
  const SimOptions& options;
  bool phased;  // fast fidelity: communication in phases (sim/phases.hpp)
  CostModel cost;
  topology::Platform platform;
  workloads::PlacementMap placement;
  std::string library;
  GroupLayouts layouts;
  Tuner tuner;
  std::vector<std::array<std::vector<uint32_t>, kStreams>> stream_ops;  // per role, per stream
  std::vector<std::vector<uint8_t>> feeds_other_stream;                 // per role, per op
  std::vector<bool> one_compute_stream;  // per role: all its compute runs on one stream (never two kernels at once)
  std::vector<bool> traced;
  SimResult result;
  std::map<std::pair<int, workloads::AxisMask>, CollectiveStats> collective_stats;
  int pipe_axis;
  // Progress: ops done over all ranks, reported at every 5 % with the wall time and an estimate of what is left.
  int64_t ops_total = 0, ops_done = 0, next_report = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  StepCosts step_costs;
  Folding fold;
  std::unique_ptr<NodeCollectives> node_collectives;  // when folded
  std::unique_ptr<PhasePlanner> phases;               // when phased
  std::map<PhaseKey, PhaseEntry> board;               // phases some but not all members reached
  std::vector<sg4::Mailbox*> notices;                 // per actor and stream: "your phase is over"
  std::chrono::steady_clock::time_point last_report = started;

  Shared(const workloads::Program& p, const topology::Topology& t, const SimOptions& o)
      : program(p),
        topology(t),
        options(o),
        phased(o.fidelity == Fidelity::fast),
        cost(t.machine(), p.framework.kernel_efficiency),
        platform(topology::build_platform(t, platform_options(o))),
        placement(p.placement()),
        library(o.library.empty() ? t.machine().profile.library : o.library),
        layouts(p, placement, t, library),
        tuner(t, library, o.algorithms),
        pipe_axis(p.grid.axis_index("pipe")),
        step_costs(StepCosts::of(t.machine(), library)) {
    for (const Role& role : p.roles) {
      std::array<std::vector<uint32_t>, kStreams> per;
      for (uint32_t i = 0; i < role.ops.size(); ++i) per[static_cast<int>(role.ops[i].stream)].push_back(i);
      int computing = 0;
      for (int st = 0; st < kStreams; ++st)
        computing += std::any_of(per[static_cast<size_t>(st)].begin(), per[static_cast<size_t>(st)].end(),
                                 [&](uint32_t i) { return workloads::is_compute(role.ops[i].kind); });
      one_compute_stream.push_back(computing <= 1);
      stream_ops.push_back(std::move(per));
      std::vector<uint8_t> feeds(role.ops.size(), 0);
      for (const Op& op : role.ops) {
        const uint32_t* d = role.deps_of(op);
        for (uint32_t k = 0; k < op.dep_count; ++k)
          if (role.ops[d[k]].stream != op.stream) feeds[d[k]] = 1;
      }
      feeds_other_stream.push_back(std::move(feeds));
    }
    if (o.fidelity == Fidelity::fast && o.fold && !o.free_communication)
      fold = plan_folding(p, placement, t.machine(), o.fold_by);
    else
      fold.reason = o.fidelity != Fidelity::fast ? "exact fidelity" : "not asked";
    if (fold.active) node_collectives = std::make_unique<NodeCollectives>(p, placement, t, layouts, step_costs);
    if (phased) {
      std::vector<int32_t> actor_of(static_cast<size_t>(p.grid.size()));
      std::map<int64_t, int32_t> number;
      for (int64_t r = 0; r < p.grid.size(); ++r) {
        const int64_t rep = fold.active ? fold.rep[static_cast<size_t>(r)] : r;
        actor_of[static_cast<size_t>(r)] = number.emplace(rep, static_cast<int32_t>(number.size())).first->second;
      }
      phases = std::make_unique<PhasePlanner>(p, placement, t, layouts, step_costs, std::move(actor_of),
                                              o.one_copy_of_replica_links);
      notices.assign(static_cast<size_t>(phases->actors()) * kStreams, nullptr);
    }
    for (int64_t r = 0; r < p.grid.size(); ++r) {
      if (!fold.active || fold.rep[static_cast<size_t>(r)] == r)
        ops_total += static_cast<int64_t>(p.roles[static_cast<size_t>(p.role_of(r))].ops.size());
    }
    next_report = ops_total / 20;
    traced.assign(static_cast<size_t>(p.grid.size()), false);
    for (int64_t r : o.trace_ranks)
      if (r >= 0 && r < p.grid.size()) traced[static_cast<size_t>(r)] = true;
    result.ranks.resize(static_cast<size_t>(p.grid.size()));
  }

  // Reports at a 5 % mark of the ops if a second has passed since the last report (a short run
  // says little), and at least every 10 s.
  void op_done(int64_t count) {
    ops_done += count;
    if (!options.progress || ops_total == 0) return;
    const auto now = std::chrono::steady_clock::now();
    const auto since = now - last_report;
    if (!(ops_done >= next_report && since >= std::chrono::seconds(1)) && since < std::chrono::seconds(10)) return;
    last_report = now;
    const double elapsed = std::chrono::duration<double>(now - started).count();
    const double fraction = static_cast<double>(ops_done) / static_cast<double>(ops_total);
    std::fprintf(stderr,
                 "paratwin simulate: %3.0f%% of %lld ops (simulated %.4g s), %.0f s elapsed, about %.0f s left\n",
                 100 * fraction, static_cast<long long>(ops_total), sg4::Engine::get_clock(), elapsed,
                 elapsed * (1 - fraction) / fraction);
    while (next_report <= ops_done) next_report += std::max<int64_t>(1, ops_total / 20);
  }

  // Where a rank's actor runs: its device, or the device's actor host when phased.
  sg4::Host* actor_host_of(int64_t rank) const {
    const auto d = static_cast<size_t>(placement.device_of(rank));
    return phased ? platform.actor_hosts[d] : platform.hosts[d];
  }
  sg4::Mailbox* notice(int32_t actor, int stream) {
    sg4::Mailbox*& m = notices[static_cast<size_t>(actor) * kStreams + static_cast<size_t>(stream)];
    if (!m) m = sg4::Mailbox::by_name("n" + std::to_string(actor) + "." + std::to_string(stream));
    return m;
  }
};

class RankActor {
 public:
  RankActor(Shared& shared, int64_t rank)
      : sh_(shared),
        rank_(rank),
        role_(shared.program.roles[static_cast<size_t>(shared.program.role_of(rank))]),
        streams_(shared.stream_ops[static_cast<size_t>(shared.program.role_of(rank))]),
        feeds_(shared.feeds_other_stream[static_cast<size_t>(shared.program.role_of(rank))]),
        role_index_(static_cast<size_t>(shared.program.role_of(rank))),
        weight_(shared.fold.active ? shared.fold.weight[static_cast<size_t>(rank)] : 1),
        actor_(shared.phases ? shared.phases->actor_of(rank) : 0),
        device_(shared.placement.device_of(rank)),
        done_(role_.ops.size(), 0) {}

  void operator()() {
    double idle_since = 0;
    Blocked blocked = Blocked::none;
    while (true) {
      start_ready_ops();
      if (finished()) break;
      // Account the compute stream's idle time since the last event to its cause.
      const double now = sg4::Engine::get_clock();
      charge(blocked, now - idle_since);
      idle_since = now;
      blocked = compute_blocked_on();
      wait_for_event();
    }
    const double now = sg4::Engine::get_clock();
    charge(blocked, now - idle_since);
    auto& t = sh_.result.ranks[static_cast<size_t>(rank_)];
    t.end = now;
  }

 private:
  enum class Blocked { none, comm, message, other };

  // What the actor needs of each of its groups, looked up once (a role has a handful of group axes).
  struct GroupInfo {
    workloads::AxisMask mask = 0;
    const GroupLayout* layout = nullptr;
    bool on_node = false;                       // folded, and every member on this rank's node
    int32_t component = 0, component_size = 1;  // phased: the actors meeting at its phases
  };

  const GroupInfo& group_info(workloads::AxisMask mask) {
    for (const GroupInfo& g : groups_)
      if (g.mask == mask) return g;
    GroupInfo g;
    g.mask = mask;
    g.layout = &sh_.layouts.of(rank_, mask);
    g.on_node = sh_.node_collectives && sh_.node_collectives->on_node(rank_, mask);
    if (sh_.phases) {
      g.component = sh_.phases->component(actor_, mask);
      g.component_size = sh_.phases->component_size(g.component, mask);
    }
    groups_.push_back(g);
    return groups_.back();
  }

  struct Flight {
    bool active = false;
    uint32_t op = 0;
    double start = 0;
    std::vector<Step> steps;
    size_t step = 0;
    int outstanding = 0;
    double wake = -1;                       // > 0: waiting for added latency until then
    bool timed = false;                     // the op ends at `wake` (compute alone on its device, folded collective)
    Algorithm algorithm = Algorithm::ring;  // the library's choice for this collective
    std::vector<void*> payloads;            // receive buffers of the current step
    int64_t ordinal = 0;                    // phased collective: its place among the group's on this stream
    std::vector<Waiter> waiters;            // phased: the members to tell when the phase's transfers end
    double phase_latency = -1;              // phased leader: the latency to add once its flows end (>= 0)
    bool in_latency = false;                // `wake` ends the phase's latency
    // Compute ops run back to back as one execution: (op, seconds) in stream order.
    std::vector<std::pair<uint32_t, double>> batch;
  };

  bool finished() const {
    for (int s = 0; s < kStreams; ++s)
      if (flights_[s].active || head_[s] < streams_[static_cast<size_t>(s)].size()) return false;
    return true;
  }

  bool deps_done(const Op& op) const {
    const uint32_t* d = role_.deps_of(op);
    for (uint32_t k = 0; k < op.dep_count; ++k)
      if (!done_[d[k]]) return false;
    return true;
  }

  void start_ready_ops() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (int s = 0; s < kStreams; ++s) {
        if (flights_[s].active || head_[s] >= streams_[static_cast<size_t>(s)].size()) continue;
        const uint32_t i = streams_[static_cast<size_t>(s)][head_[s]];
        if (!deps_done(role_.ops[i])) continue;
        start(s, i);
        progress = true;
      }
    }
  }

  void start(int s, uint32_t i) {
    const Op& op = role_.ops[i];
    Flight& f = flights_[s];
    f = Flight{};
    f.active = true;
    f.op = i;
    f.start = sg4::Engine::get_clock();
    if (workloads::is_compute(op.kind)) {
      const double seconds = batch_compute(s, i);
      if (seconds > 0 && sh_.one_compute_stream[static_cast<size_t>(role_index_)]) {
        // Nothing else computes on this device: a timer ends the work exactly when an execution would,
        // without an activity for SimGrid to manage.
        f.timed = true;
        f.wake = f.start + seconds;
        if (s == static_cast<int>(Stream::compute)) {
          compute_left_ = seconds;
          compute_mark_ = f.start;
          compute_rate_ = 1;
          compute_pace();
        }
        return;
      }
      if (seconds > 0) {
        add_activity(s, sg4::this_actor::exec_async(seconds * sh_.cost.host_speed()));
        f.outstanding = 1;
        return;
      }
      complete(s);
      return;
    }
    if (workloads::is_collective(op.kind))
      f.algorithm = sh_.tuner.choose(op.kind, *group_info(op.group).layout, op.bytes);
    // Free communication: collectives take no time; messages still synchronise their two ends (a
    // zero-byte transfer over zero-latency routes), so pipeline stages keep their order.
    if (!workloads::is_p2p(op.kind) && (sh_.options.free_communication || !workloads::is_collective(op.kind))) {
      complete(s);
      return;
    }
    if (workloads::is_p2p(op.kind)) {
      const bool backward = op.stream == Stream::send_bwd || op.stream == Stream::recv_bwd;
      const int channel = backward ? kChannelBackward : kChannelForward;
      const int64_t peer = sh_.program.grid.with_coord(rank_, sh_.pipe_axis, op.peer_stage);
      if (sh_.phased) {
        message_phase(s, op, channel, peer);
        return;
      }
      f.payloads.assign(1, nullptr);
      if (op.kind == OpKind::send) {
        const uint64_t size = sh_.options.free_communication ? 0 : bytes(op.bytes);
        add_activity(s, mailbox(peer, rank_, channel)->put_async(&kToken, size));
        ++sh_.result.flows;
        ++sh_.result.transfers;
      } else {
        add_activity(s, mailbox(rank_, peer, channel)->get_async<void>(&f.payloads[0]));
      }
      f.outstanding = 1;
      return;
    }
    const GroupInfo& group = group_info(op.group);
    if (group.on_node) {
      f.timed = true;
      f.wake = f.start + sh_.node_collectives->seconds(rank_, op, f.algorithm);
      return;
    }
    const auto& grid = sh_.program.grid;
    const int32_t me = static_cast<int32_t>(grid.index_in_group(rank_, op.group));
    f.steps = sh_.step_costs.plan(op.kind, f.algorithm, *group.layout, me, op.bytes, op.root, sh_.options.fidelity);
    if (sh_.phased) f.ordinal = collectives_started_[{op.group, s}]++;
    post_step(s);
    compute_pace();
  }

  double seconds_of(const Op& op) const {
    if (!workloads::is_compute(op.kind)) return 0;  // memory events
    return sh_.options.compute_seconds ? sh_.options.compute_seconds(op) : sh_.cost.compute_seconds(op);
  }

  // Runs op i and the compute-stream ops after it as one execution while nothing else waits for them
  // in between: the ops that follow depend only on finished ops or on the batch, and no op of the
  // batch but the last feeds another stream. Fewer, longer executions; the same timeline.
  double batch_compute(int s, uint32_t i) {
    constexpr size_t kMaxBatch = 256;
    Flight& f = flights_[s];
    f.batch.clear();
    f.batch.emplace_back(i, seconds_of(role_.ops[i]));
    double total = f.batch.back().second;
    const auto& ops = streams_[static_cast<size_t>(s)];
    for (size_t h = head_[s] + 1; h < ops.size() && f.batch.size() < kMaxBatch; ++h) {
      if (feeds_[f.batch.back().first]) break;
      const uint32_t j = ops[h];
      const Op& next = role_.ops[j];
      if (!workloads::is_compute(next.kind) && next.kind != OpKind::alloc && next.kind != OpKind::free) break;
      const uint32_t* d = role_.deps_of(next);
      bool ready = true;
      for (uint32_t k = 0; k < next.dep_count && ready; ++k)
        ready =
            done_[d[k]] || std::any_of(f.batch.begin(), f.batch.end(), [&](const auto& b) { return b.first == d[k]; });
      if (!ready) break;
      f.batch.emplace_back(j, seconds_of(next));
      total += f.batch.back().second;
    }
    return total;
  }

  static uint64_t bytes(double b) { return static_cast<uint64_t>(std::max(0.0, b)); }

  // The mailbox of messages from `from` to `to` on a channel; one of the two is a lane of this actor,
  // and the actor remembers the ones it uses. Ranks stay below 2^22 (workloads' limit).
  sg4::Mailbox* mailbox(int64_t to, int64_t from, int channel) {
    const uint64_t key =
        (static_cast<uint64_t>(to) << 30) | (static_cast<uint64_t>(from) << 8) | static_cast<uint64_t>(channel & 0xff);
    auto [it, fresh] = mailboxes_.emplace(key, nullptr);
    if (fresh)
      it->second =
          sg4::Mailbox::by_name("m" + std::to_string(to) + "." + std::to_string(from) + "." + std::to_string(channel));
    return it->second;
  }

  // Phased: this actor reached phase `key`, which `expected` actors meet at. All but the last wait
  // for a notice; the last starts the flows of every member (`flows()`: PhaseFlows) from its own
  // device to sinks along the flows' routes, and gives the notices when they end.
  template <class Flows>
  void arrive(int s, const PhaseKey& key, int32_t expected, Flows&& flows) {
    Flight& f = flights_[s];
    f.outstanding = 0;
    if (expected > 1) {
      PhaseEntry& entry = sh_.board[key];
      if (++entry.arrived < expected) {
        entry.waiting.push_back({actor_, s});
        f.payloads.assign(1, nullptr);
        add_activity(s, sh_.notice(actor_, s)->get_async<void>(&f.payloads[0]));
        f.outstanding = 1;
        return;
      }
      f.waiters = std::move(entry.waiting);
      sh_.board.erase(key);
    }
    if (!sh_.options.free_communication) {
      const PhaseFlows& phase = flows();
      if (phase.flows.size() > static_cast<size_t>(kFlowsPerPhase))
        throw std::logic_error("a phase of " + std::string(workloads::to_string(role_.ops[f.op].kind)) + " has " +
                               std::to_string(phase.flows.size()) + " flows, more than its " +
                               std::to_string(kFlowsPerPhase) + " sinks");
      // The flows carry no latency, so that SimGrid does not revisit them when it is paid; the
      // phase's longest route latency follows the transfers instead.
      f.phase_latency = 0;
      for (size_t j = 0; j < phase.flows.size(); ++j) {
        const PhaseFlow& flow = phase.flows[j];
        const int sink = s * kFlowsPerPhase + static_cast<int>(j);
        sh_.platform.phase_routes->set(device_, sink, flow.resources);
        f.phase_latency = std::max(f.phase_latency, flow.latency);
        add_activity(s, sg4::Comm::sendto_async(sh_.platform.hosts[static_cast<size_t>(device_)],
                                                sh_.platform.sinks[static_cast<size_t>(sink)], bytes(flow.bytes)));
        ++f.outstanding;
      }
      sh_.result.flows += static_cast<int64_t>(phase.flows.size());
      sh_.result.transfers += phase.transfers();
    }
    if (f.outstanding == 0) transfers_done(s);
  }

  // Phased pipeline message: sender and receiver meet; the flows are the sender's.
  void message_phase(int s, const Op& op, int channel, int64_t peer_rank) {
    const int32_t peer = sh_.phases->actor_of(peer_rank);
    const bool sending = op.kind == OpKind::send;
    const int32_t from = sending ? actor_ : peer, to = sending ? peer : actor_;
    PhaseKey key;
    key.kind = 1;
    key.a = static_cast<uint64_t>(from);
    key.b = static_cast<uint64_t>(to);
    key.channel = channel;
    key.ordinal = messages_started_[{peer, channel * 2 + (sending ? 1 : 0)}]++;
    const int64_t to_stage = sending ? op.peer_stage : sh_.program.grid.coord(rank_, sh_.pipe_axis);
    const double size = op.bytes;
    arrive(s, key, from == to ? 1 : 2,
           [&]() -> const PhaseFlows& { return sh_.phases->message(from, to_stage, size); });
  }

  // The transfers of stream s's step or message ended: tell the phase's other members, then go on.
  void transfers_done(int s) {
    Flight& f = flights_[s];
    if (f.phase_latency > 0) {
      f.wake = sg4::Engine::get_clock() + f.phase_latency;
      f.phase_latency = -1;
      f.in_latency = true;
      return;
    }
    f.phase_latency = -1;
    f.in_latency = false;
    f.wake = -1;
    for (const Waiter& w : f.waiters) sh_.notice(w.actor, w.stream)->put_init(&kToken, 0)->detach();
    f.waiters.clear();
    if (workloads::is_collective(role_.ops[f.op].kind)) {
      step_done(s);
      return;
    }
    // A library's own cost per message (a calibrated profile), at both ends.
    const Op& op = role_.ops[f.op];
    const auto& cost = sh_.cost.machine().profile.message_cost;
    const double extra = sh_.options.free_communication ? 0 : cost.step + cost.per_byte * op.bytes;
    if (extra > 0) {
      f.timed = true;
      f.wake = sg4::Engine::get_clock() + extra;
    } else {
      complete(s);
    }
  }

  // Posts the current step of stream s's collective, skipping empty steps; completes the op when
  // no step is left.
  void post_step(int s) {
    Flight& f = flights_[s];
    const Op& op = role_.ops[f.op];
    const int channel = static_cast<int>(op.stream);
    if (sh_.phased) {  // every member meets at every step, even one where it moves nothing
      if (f.step >= f.steps.size()) {
        complete(s);
        return;
      }
      const GroupInfo& group = group_info(op.group);
      PhaseKey key;
      key.a = op.group;
      key.b = static_cast<uint64_t>(group.component);
      key.channel = s;
      key.ordinal = f.ordinal;
      key.step = static_cast<int>(f.step);
      const size_t step = f.step;
      const Algorithm algorithm = f.algorithm;
      arrive(s, key, group.component_size, [&, step, algorithm]() -> const PhaseFlows& {
        const auto& steps = sh_.phases->collective(group.component, op.group, op.kind, algorithm, op.bytes, op.root);
        if (steps.size() != flights_[s].steps.size())
          throw std::logic_error("a phased " + std::string(workloads::to_string(op.kind)) + " has " +
                                 std::to_string(steps.size()) + " steps for its group and " +
                                 std::to_string(flights_[s].steps.size()) + " for rank " + std::to_string(rank_));
        return steps[step];
      });
      return;
    }
    while (f.step < f.steps.size()) {
      const Step& st = f.steps[f.step];
      if (st.sends.empty() && st.recvs.empty()) {
        ++f.step;
        continue;
      }
      const auto& grid = sh_.program.grid;
      f.payloads.assign(st.recvs.size(), nullptr);
      for (const auto& t : st.sends) {
        const int64_t peer = grid.group_member(rank_, op.group, t.peer);
        add_activity(s, mailbox(peer, rank_, channel)->put_async(&kToken, bytes(t.bytes)));
      }
      for (size_t i = 0; i < st.recvs.size(); ++i) {
        const int64_t peer = grid.group_member(rank_, op.group, st.recvs[i].peer);
        add_activity(s, mailbox(rank_, peer, channel)->get_async<void>(&f.payloads[i]));
      }
      sh_.result.flows += static_cast<int64_t>(st.sends.size());
      sh_.result.transfers += static_cast<int64_t>(st.sends.size());
      f.outstanding = static_cast<int>(st.sends.size() + st.recvs.size());
      return;
    }
    complete(s);
  }

  // The current step's transfers are done: add its skipped latencies (fast fidelity), or go on.
  void step_done(int s) {
    Flight& f = flights_[s];
    const Step& st = f.steps[f.step];
    double latency = 0;
    if (st.extra_latencies > 0) {
      const Transfer& first = st.sends.empty() ? st.recvs[0] : st.sends[0];
      latency = latency_to(sh_.program.grid.group_member(rank_, role_.ops[f.op].group, first.peer));
    }
    if (f.wake < 0) {  // the transfers just ended (not the step's added time)
      const Flight& compute = flights_[static_cast<int>(Stream::compute)];
      const double delay = sh_.step_costs.after_transfers(st, latency, role_.ops[f.op].kind,
                                                          s != static_cast<int>(Stream::compute) && compute.active);
      if (delay > 0) {
        f.wake = sg4::Engine::get_clock() + delay;
        return;
      }
    }
    f.wake = -1;
    ++f.step;
    post_step(s);
  }

  // Communication driven by the compute core (profile compute_slowdown_communicating): while a
  // collective of this rank is in flight on another stream, its compute op runs that much slower (the
  // polls between GEMM slices, the slices themselves). Called when a collective starts or ends.
  void compute_pace() {
    const double slowdown = sh_.cost.machine().profile.compute_slowdown_communicating;
    Flight& c = flights_[static_cast<int>(Stream::compute)];
    if (slowdown <= 0 || !c.active || !c.timed) return;  // machines without it keep their exact timers
    const double now = sg4::Engine::get_clock();
    compute_left_ = std::max(0.0, compute_left_ - (now - compute_mark_) * compute_rate_);
    compute_mark_ = now;
    bool communicating = false;
    for (int s = 0; s < kStreams; ++s)
      if (s != static_cast<int>(Stream::compute) && flights_[s].active &&
          workloads::is_collective(role_.ops[flights_[s].op].kind))
        communicating = true;
    compute_rate_ = communicating ? 1 - std::min(slowdown, 0.95) : 1.0;
    c.wake = now + compute_left_ / compute_rate_;
  }

  // Path latency to a peer rank; an actor talks to few peers, so it remembers them rather than route
  // at every step.
  double latency_to(int64_t peer) {
    auto [it, fresh] = latencies_.emplace(peer, 0.0);
    if (fresh) it->second = sh_.topology.path(sh_.placement.device_of(rank_), sh_.placement.device_of(peer)).latency;
    return it->second;
  }

  void complete(int s) {
    Flight& f = flights_[s];
    const Op& op = role_.ops[f.op];
    const double now = sg4::Engine::get_clock();
    f.active = false;
    if (workloads::is_collective(op.kind)) compute_pace();
    if (!f.batch.empty()) {
      // Share the execution's span among its ops in proportion to their costs.
      double total = 0;
      for (const auto& [j, seconds] : f.batch) total += seconds;
      double t = f.start;
      for (const auto& [j, seconds] : f.batch) {
        const double end = total > 0 ? t + (now - f.start) * seconds / total : now;
        done_[j] = 1;
        ++head_[s];
        if (sh_.traced[static_cast<size_t>(rank_)]) sh_.result.events.push_back({rank_, j, t, end});
        t = end;
      }
      if (op.stream == Stream::compute) sh_.result.ranks[static_cast<size_t>(rank_)].compute += now - f.start;
      sh_.op_done(static_cast<int64_t>(f.batch.size()));
      f.batch.clear();
      return;
    }
    done_[f.op] = 1;
    ++head_[s];
    sh_.op_done(1);
    if (sh_.traced[static_cast<size_t>(rank_)]) sh_.result.events.push_back({rank_, f.op, f.start, now});
    if (workloads::is_collective(op.kind)) {
      auto& c = sh_.collective_stats[{static_cast<int>(op.kind), op.group}];
      c.kind = op.kind;
      if (std::find(c.algorithms.begin(), c.algorithms.end(), f.algorithm) == c.algorithms.end())
        c.algorithms.push_back(f.algorithm);
      c.group = op.group;
      c.count += weight_;
      c.bytes += op.bytes * weight_;
      c.seconds += (now - f.start) * weight_;
    }
  }

  void add_activity(int s, sg4::ActivityPtr a) {
    activities_.push_back(std::move(a));
    owners_.push_back(s);
  }

  void wait_for_event() {
    double wake = std::numeric_limits<double>::infinity();
    for (int s = 0; s < kStreams; ++s)
      if (flights_[s].active && flights_[s].wake >= 0) wake = std::min(wake, flights_[s].wake);
    const double now = sg4::Engine::get_clock();
    if (activities_.empty()) {
      if (!std::isfinite(wake))
        throw std::logic_error("rank " + std::to_string(rank_) + " is stuck: nothing runs and nothing can start");
      sg4::this_actor::sleep_for(wake - now);
    } else {
      ssize_t k = -1;
      try {
        k = std::isfinite(wake) ? sg4::Activity::wait_any_for(activities_, std::max(0.0, wake - now))
                                : sg4::Activity::wait_any(activities_);
      } catch (const simgrid::TimeoutException&) {
        k = -1;  // the added latency of a step ran out first
      }
      if (k >= 0 && static_cast<size_t>(k) < activities_.size()) {
        const int s = owners_[static_cast<size_t>(k)];
        activities_.erase(activities_.begin() + k);
        owners_.erase(owners_.begin() + k);
        if (--flights_[s].outstanding == 0) transfers_done(s);
      }
    }
    const double after = sg4::Engine::get_clock();
    for (int s = 0; s < kStreams; ++s) {
      Flight& f = flights_[s];
      if (!f.active || f.wake < 0 || f.wake > after + 1e-15 || f.outstanding != 0) continue;
      if (f.timed)
        complete(s);
      else if (f.in_latency)
        transfers_done(s);  // the phase's latency ran out: now tell the others
      else
        step_done(s);
    }
  }

  // Why the compute stream is not running: the kind of the first unfinished dependency of its next op.
  // Sets blocking_op_ to the collective it waits for, if any.
  Blocked compute_blocked_on() {
    blocking_op_ = -1;
    const int c = static_cast<int>(Stream::compute);
    if (flights_[c].active) return Blocked::none;
    const auto& ops = streams_[static_cast<size_t>(c)];
    if (head_[c] >= ops.size()) {
      for (int s = 0; s < kStreams; ++s)
        if (flights_[s].active && workloads::is_collective(role_.ops[flights_[s].op].kind)) {
          blocking_op_ = flights_[s].op;
          return Blocked::comm;
        }
      return Blocked::other;
    }
    const Op& next = role_.ops[ops[head_[c]]];
    const uint32_t* d = role_.deps_of(next);
    for (uint32_t k = 0; k < next.dep_count; ++k) {
      if (done_[d[k]]) continue;
      const OpKind kind = role_.ops[d[k]].kind;
      if (kind == OpKind::recv || kind == OpKind::send) return Blocked::message;
      if (workloads::is_collective(kind)) {
        blocking_op_ = d[k];
        return Blocked::comm;
      }
      return Blocked::other;
    }
    return Blocked::other;
  }

  void charge(Blocked b, double seconds) {
    if (seconds <= 0) return;
    auto& t = sh_.result.ranks[static_cast<size_t>(rank_)];
    switch (b) {
      case Blocked::none:
        break;
      case Blocked::comm:
        t.exposed_comm += seconds;
        if (blocking_op_ >= 0) {
          const Op& op = role_.ops[static_cast<size_t>(blocking_op_)];
          auto& c = sh_.collective_stats[{static_cast<int>(op.kind), op.group}];
          c.kind = op.kind;
          c.group = op.group;
          c.exposed += seconds * weight_;
        }
        break;
      case Blocked::message:
        t.bubble += seconds;
        break;
      case Blocked::other:
        t.other_idle += seconds;
        break;
    }
  }

  Shared& sh_;
  int64_t rank_;
  const Role& role_;
  const std::array<std::vector<uint32_t>, kStreams>& streams_;
  const std::vector<uint8_t>& feeds_;
  size_t role_index_;
  int32_t weight_;  // ranks this actor stands for (folding)
  int32_t actor_;   // phased: this actor's number
  int64_t device_;
  // The timed compute op's work left at full speed, when it was last paced, and its pace now.
  double compute_left_ = 0, compute_mark_ = 0, compute_rate_ = 1;
  std::vector<uint8_t> done_;
  int64_t blocking_op_ = -1;  // the collective the compute stream waits for (exposed communication)
  size_t head_[kStreams] = {};
  Flight flights_[kStreams];
  std::vector<sg4::ActivityPtr> activities_;
  std::vector<int> owners_;
  std::vector<GroupInfo> groups_;
  std::unordered_map<uint64_t, sg4::Mailbox*> mailboxes_;
  std::unordered_map<int64_t, double> latencies_;
  std::map<std::pair<workloads::AxisMask, int>, int64_t> collectives_started_;  // phased, by (group, stream)
  std::map<std::pair<int32_t, int>, int64_t> messages_started_;  // phased, by (peer actor, channel and direction)
};

}  // namespace

void check_algorithms(const workloads::Program& program, const SimOptions& options) {
  for (const Role& role : program.roles)
    for (const Op& op : role.ops) {
      const auto it = options.algorithms.find(op.kind);
      if (it == options.algorithms.end() || !workloads::is_collective(op.kind)) continue;
      const int64_t p = program.grid.group_size(op.group);
      if (it->second == Algorithm::recursive && (p & (p - 1)) != 0)
        throw std::invalid_argument(std::string(workloads::to_string(op.kind)) +
                                    "=recursive needs power-of-two groups, but " + role.name + "'s op \"" + op.name +
                                    "\" runs over group \"" + program.grid.mask_name(op.group) + "\" of " +
                                    std::to_string(p) + " members");
    }
}

SimResult simulate(const workloads::Program& program, const topology::Topology& topology, const SimOptions& options) {
  check_algorithms(program, options);
  if (program.grid.size() > topology.devices())
    throw std::invalid_argument("the program has " + std::to_string(program.grid.size()) +
                                " ranks but the machine only " + std::to_string(topology.devices()) + " devices");
  Shared shared(program, topology, options);
  int64_t actors = 0;
  for (int64_t r = 0; r < program.grid.size(); ++r)
    if (!shared.fold.active || shared.fold.rep[static_cast<size_t>(r)] == r) {
      sg4::Actor::create("rank" + std::to_string(r), shared.actor_host_of(r), RankActor(shared, r));
      ++actors;
    }
  if (shared.fold.active)  // a represented rank's events are its representative's
    for (int64_t r : options.trace_ranks)
      if (r >= 0 && r < program.grid.size())
        shared.traced[static_cast<size_t>(shared.fold.rep[static_cast<size_t>(r)])] = true;
  sg4::Engine::get_instance()->run();
  SimResult out = std::move(shared.result);

  out.actors = actors;
  out.folded = shared.fold.active;
  out.fold_replicas = shared.fold.active && shared.fold.by == FoldBy::replica;
  out.fold_note = shared.fold.reason;
  if (shared.fold.active) {
    for (int64_t r = 0; r < program.grid.size(); ++r)
      out.ranks[static_cast<size_t>(r)] = out.ranks[static_cast<size_t>(shared.fold.rep[static_cast<size_t>(r)])];
    std::vector<int64_t> wanted;
    for (int64_t r : options.trace_ranks)
      if (r >= 0 && r < program.grid.size() && std::find(wanted.begin(), wanted.end(), r) == wanted.end())
        wanted.push_back(r);
    std::vector<OpEvent> events;
    for (const OpEvent& e : out.events)
      for (int64_t r : wanted)
        if (shared.fold.rep[static_cast<size_t>(r)] == e.rank) {
          OpEvent copy = e;
          copy.rank = r;
          events.push_back(copy);
        }
    out.events = std::move(events);
  }
  for (const auto& t : out.ranks) out.iteration_time = std::max(out.iteration_time, t.end);
  const double ranks = static_cast<double>(program.grid.size());
  for (auto& [key, c] : shared.collective_stats) {
    c.group_size = program.grid.group_size(c.group);
    // Per rank: every member counted the collective once.
    c.count = static_cast<int64_t>(static_cast<double>(c.count) / ranks + 0.5);
    c.bytes /= ranks;
    c.seconds /= ranks;
    c.exposed /= ranks;
    out.collectives.push_back(c);
  }
  return out;
}

}  // namespace paratwin::sim
