#include "sim/rank_actor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace paratwin::sim::detail {

using workloads::Op;
using workloads::OpKind;
using workloads::Stream;

const RankActor::GroupInfo& RankActor::group_info(workloads::AxisMask mask) {
  for (const GroupInfo& g : groups_)
    if (g.mask == mask) return g;
  GroupInfo g;
  g.mask = mask;
  g.layout = &st_.layouts.of(rank_, mask);
  g.vendor_layout = &st_.layouts.of(rank_, mask, OpKind::all_reduce);
  g.on_node = st_.node_collectives && st_.node_collectives->on_node(rank_, mask);
  if (st_.phases) {
    g.component = st_.phases->component(actor_, mask);
    g.component_size = st_.phases->component_size(g.component, mask);
  }
  groups_.push_back(g);
  return groups_.back();
}

void RankActor::start(int s, uint32_t i) {
  const Op& op = role_.ops[i];
  Flight& f = flights_[s];
  f = Flight{};
  f.active = true;
  f.op = i;
  f.start = sg4::Engine::get_clock();
  const auto& waits = walker_.started(i, f.start);
  if (st_.options.trace_sink && st_.traced[static_cast<size_t>(rank_)]) {
    if (!waits.empty()) st_.options.trace_sink->idle(rank_, waits, f.start);
    st_.options.trace_sink->started(rank_, i, f.start);
  }
  if (workloads::is_compute(op.kind))
    start_compute(s, i);
  else if (workloads::is_p2p(op.kind))
    start_message(s, op);
  else if (workloads::is_collective(op.kind))
    start_collective(s, op);
  else
    complete(s);  // memory events
}

void RankActor::start_compute(int s, uint32_t i) {
  Flight& f = flights_[s];
  const double seconds = batch_compute(s, i);
  if (seconds > 0 && st_.one_compute_stream[role_index_]) {
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
    add_activity(s, sg4::this_actor::exec_async(seconds * st_.cost.host_speed()));
    f.outstanding = 1;
    return;
  }
  complete(s);
}

void RankActor::start_message(int s, const Op& op) {
  Flight& f = flights_[s];
  const bool backward = op.stream == Stream::send_bwd || op.stream == Stream::recv_bwd;
  const int channel = backward ? kChannelBackward : kChannelForward;
  const int64_t peer = st_.program.grid.with_coord(rank_, st_.pipe_axis, op.peer_stage);
  if (st_.phased) {
    message_phase(s, op, channel, peer);
    return;
  }
  f.payloads.assign(1, nullptr);
  if (op.kind == OpKind::send) {
    const uint64_t size = st_.options.free_communication ? 0 : bytes(op.bytes);
    add_activity(s, mailbox(peer, rank_, channel)->put_async(&kToken, size));
    ++st_.result.flows;
    ++st_.result.transfers;
  } else {
    add_activity(s, mailbox(rank_, peer, channel)->get_async<void>(&f.payloads[0]));
  }
  f.outstanding = 1;
}

void RankActor::start_collective(int s, const Op& op) {
  Flight& f = flights_[s];
  const GroupInfo& group = group_info(op.group);
  const GroupLayout& layout = st_.layouts.vendor_runs(op.kind) ? *group.vendor_layout : *group.layout;
  f.algorithm = st_.tuner.choose(op.kind, layout, op.bytes);
  f.ordinal = collectives_started_[{op.group, s}]++;
  // The members meeting at this call: the actors of its phase component, else every rank of the group.
  // An on-node folded collective is timed alone, with no peers to wait for.
  f.call_tracked = !group.on_node;
  if (f.call_tracked) {
    const auto& grid = st_.program.grid;
    f.call = {op.group, st_.phased ? group.component : grid.group_member(rank_, op.group, 0), s, f.ordinal};
    CallEntry& call = st_.calls[f.call];
    call.members = st_.phased ? group.component_size : static_cast<int32_t>(grid.group_size(op.group));
    call.last_arrival = std::max(call.last_arrival, f.start);
    ++call.arrived;
    call.ranks += weight_;
  }
  if (st_.options.free_communication) {
    complete(s);
    return;
  }
  if (group.on_node) {
    // Timed, but in flight like any other: the compute beside it slows as it would (compute_pace).
    f.timed = true;
    f.wake = f.start + st_.node_collectives->seconds(rank_, op, f.algorithm);
    compute_pace();
    return;
  }
  const int32_t me = static_cast<int32_t>(st_.program.grid.index_in_group(rank_, op.group));
  f.steps = st_.step_costs.plan(op.kind, f.algorithm, layout, me, op.bytes, op.root, st_.options.fidelity);
  post_step(s);
  compute_pace();
}

double RankActor::seconds_of(const Op& op) const {
  if (!workloads::is_compute(op.kind)) return 0;  // memory events
  return st_.options.compute_seconds ? st_.options.compute_seconds(op) : st_.cost.compute_seconds(op);
}

double RankActor::batch_compute(int s, uint32_t i) {
  constexpr size_t kMaxBatch = 256;
  Flight& f = flights_[s];
  f.batch.clear();
  f.batch.emplace_back(i, seconds_of(role_.ops[i]));
  double total = f.batch.back().second;
  const auto& ops = walker_.stream(s);
  for (size_t h = walker_.head(s) + 1; h < ops.size() && f.batch.size() < kMaxBatch; ++h) {
    if (feeds_[f.batch.back().first]) break;
    const uint32_t j = ops[h];
    const Op& next = role_.ops[j];
    if (!workloads::is_compute(next.kind) && next.kind != OpKind::alloc && next.kind != OpKind::free) break;
    const uint32_t* d = role_.deps_of(next);
    bool ready = true;
    for (uint32_t k = 0; k < next.dep_count && ready; ++k)
      ready = walker_.done(d[k]) ||
              std::any_of(f.batch.begin(), f.batch.end(), [&](const auto& b) { return b.first == d[k]; });
    if (!ready) break;
    f.batch.emplace_back(j, seconds_of(next));
    total += f.batch.back().second;
  }
  return total;
}

sg4::Mailbox* RankActor::mailbox(int64_t to, int64_t from, int channel) {
  const uint64_t key =
      (static_cast<uint64_t>(to) << 30) | (static_cast<uint64_t>(from) << 8) | static_cast<uint64_t>(channel & 0xff);
  auto [it, fresh] = mailboxes_.emplace(key, nullptr);
  if (fresh)
    it->second =
        sg4::Mailbox::by_name("m" + std::to_string(to) + "." + std::to_string(from) + "." + std::to_string(channel));
  return it->second;
}

template <class Flows>
void RankActor::arrive(int s, const PhaseKey& key, int32_t expected, Flows&& flows) {
  Flight& f = flights_[s];
  f.outstanding = 0;
  if (expected > 1) {
    PhaseEntry& entry = st_.board[key];
    if (++entry.arrived < expected) {
      entry.waiting.push_back({actor_, s});
      f.payloads.assign(1, nullptr);
      add_activity(s, st_.notice(actor_, s)->get_async<void>(&f.payloads[0]));
      f.outstanding = 1;
      return;
    }
    f.waiters = std::move(entry.waiting);
    st_.board.erase(key);
  }
  if (!st_.options.free_communication) {
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
      st_.platform.phase_routes->set(device_, sink, flow.resources);
      f.phase_latency = std::max(f.phase_latency, flow.latency);
      add_activity(s, sg4::Comm::sendto_async(st_.platform.hosts[static_cast<size_t>(device_)],
                                              st_.platform.sinks[static_cast<size_t>(sink)], bytes(flow.bytes)));
      ++f.outstanding;
      st_.result.route_entries += static_cast<int64_t>(flow.resources.size());
    }
    st_.result.flows += static_cast<int64_t>(phase.flows.size());
    st_.result.transfers += phase.transfers();
  }
  if (f.outstanding == 0) transfers_done(s);
}

void RankActor::message_phase(int s, const Op& op, int channel, int64_t peer_rank) {
  const int32_t peer = st_.phases->actor_of(peer_rank);
  const bool sending = op.kind == OpKind::send;
  const int32_t from = sending ? actor_ : peer, to = sending ? peer : actor_;
  PhaseKey key;
  key.kind = 1;
  key.a = static_cast<uint64_t>(from);
  key.b = static_cast<uint64_t>(to);
  key.channel = channel;
  key.ordinal = messages_started_[{peer, channel * 2 + (sending ? 1 : 0)}]++;
  const int64_t to_stage = sending ? op.peer_stage : st_.program.grid.coord(rank_, st_.pipe_axis);
  const double size = op.bytes;
  arrive(s, key, from == to ? 1 : 2, [&]() -> const PhaseFlows& { return st_.phases->message(from, to_stage, size); });
}

void RankActor::transfers_done(int s) {
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
  for (const Waiter& w : f.waiters) st_.notice(w.actor, w.stream)->put_init(&kToken, 0)->detach();
  f.waiters.clear();
  if (workloads::is_collective(role_.ops[f.op].kind)) {
    step_done(s);
    return;
  }
  // A library's own cost per message (a calibrated profile), at both ends.
  const Op& op = role_.ops[f.op];
  const auto& cost = st_.cost.machine().profile.message_cost;
  const double extra = st_.options.free_communication ? 0 : cost.step + cost.per_byte * op.bytes;
  if (extra > 0) {
    f.timed = true;
    f.wake = sg4::Engine::get_clock() + extra;
  } else {
    complete(s);
  }
}

void RankActor::post_step(int s) {
  Flight& f = flights_[s];
  const Op& op = role_.ops[f.op];
  const int channel = static_cast<int>(op.stream);
  if (st_.phased) {  // every member meets at every step, even one where it moves nothing
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
      const auto& steps = st_.phases->collective(group.component, op.group, op.kind, algorithm, op.bytes, op.root);
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
    const auto& grid = st_.program.grid;
    f.payloads.assign(st.recvs.size(), nullptr);
    for (const auto& t : st.sends) {
      const int64_t peer = grid.group_member(rank_, op.group, t.peer);
      add_activity(s, mailbox(peer, rank_, channel)->put_async(&kToken, bytes(t.bytes)));
    }
    for (size_t i = 0; i < st.recvs.size(); ++i) {
      const int64_t peer = grid.group_member(rank_, op.group, st.recvs[i].peer);
      add_activity(s, mailbox(rank_, peer, channel)->get_async<void>(&f.payloads[i]));
    }
    st_.result.flows += static_cast<int64_t>(st.sends.size());
    st_.result.transfers += static_cast<int64_t>(st.sends.size());
    f.outstanding = static_cast<int>(st.sends.size() + st.recvs.size());
    return;
  }
  complete(s);
}

void RankActor::step_done(int s) {
  Flight& f = flights_[s];
  const Step& st = f.steps[f.step];
  double latency = 0;
  if (st.extra_latencies > 0) {
    const Transfer& first = st.sends.empty() ? st.recvs[0] : st.sends[0];
    latency = latency_to(st_.program.grid.group_member(rank_, role_.ops[f.op].group, first.peer));
  }
  if (f.wake < 0) {  // the transfers just ended (not the step's added time)
    const Flight& compute = flights_[static_cast<int>(Stream::compute)];
    const double delay = st_.step_costs.after_transfers(st, latency, role_.ops[f.op].kind,
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

void RankActor::compute_pace() {
  const double slowdown = st_.cost.machine().profile.compute_slowdown_communicating;
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
  compute_rate_ = communicating ? 1 - slowdown : 1.0;
  c.wake = now + compute_left_ / compute_rate_;
}

double RankActor::latency_to(int64_t peer) {
  auto [it, fresh] = latencies_.emplace(peer, 0.0);
  if (fresh) it->second = st_.topology.path(st_.placement.device_of(rank_), st_.placement.device_of(peer)).latency;
  return it->second;
}

void RankActor::complete(int s) {
  Flight& f = flights_[s];
  const Op& op = role_.ops[f.op];
  const double now = sg4::Engine::get_clock();
  f.active = false;
  if (workloads::is_collective(op.kind)) compute_pace();
  if (!f.batch.empty()) {
    // Share the execution's span among its ops in proportion to their costs; the first op started
    // with the execution, each of the others when the one before it ends.
    double total = 0;
    for (const auto& [j, seconds] : f.batch) total += seconds;
    double t = f.start;
    for (const auto& [j, seconds] : f.batch) {
      const bool last = j == f.batch.back().first;
      const double end = total > 0 && !last ? t + (now - f.start) * seconds / total : now;
      if (j != f.batch.front().first) {
        const auto& waits = walker_.started(j, t);
        if (st_.options.trace_sink && st_.traced[static_cast<size_t>(rank_)] && !waits.empty())
          st_.options.trace_sink->idle(rank_, waits, t);
      }
      walker_.finished(j, t, end);
      if (st_.traced[static_cast<size_t>(rank_)]) record({rank_, j, t, end});
      t = end;
    }
    st_.op_done(static_cast<int64_t>(f.batch.size()));
    f.batch.clear();
    return;
  }
  walker_.finished(f.op, f.start, now);
  st_.op_done(1);
  if (st_.traced[static_cast<size_t>(rank_)]) record({rank_, f.op, f.start, now});
  if (workloads::is_collective(op.kind)) {
    auto& c = st_.collective_stats[{static_cast<int>(op.kind), op.group}];
    // Before the last member arrived this rank waited for its peers (a member that leaves before the
    // last arrives, as a broadcast's root can, waited only for those that came before it). The call's
    // own time runs from that arrival to its last member's end, whatever the members did before it
    // (exact fidelity lets the first ones start the ring steps between themselves): counted once per
    // call, for every rank it had.
    const auto it = f.call_tracked ? st_.calls.find(f.call) : st_.calls.end();
    double waiting = 0;
    if (it != st_.calls.end()) {
      CallEntry& call = it->second;
      waiting = std::clamp(call.last_arrival - f.start, 0.0, now - f.start);
      call.last_end = std::max(call.last_end, now);
      if (++call.finished >= call.members && call.finished >= call.arrived) {
        c.call_seconds += (call.last_end - call.last_arrival) * call.ranks;
        st_.calls.erase(it);
      }
    } else {
      c.call_seconds += (now - f.start) * weight_;  // timed alone
    }
    c.kind = op.kind;
    if (std::find(c.algorithms.begin(), c.algorithms.end(), f.algorithm) == c.algorithms.end())
      c.algorithms.push_back(f.algorithm);
    c.group = op.group;
    c.count += weight_;
    c.bytes += op.bytes * weight_;
    c.seconds += (now - f.start) * weight_;
    c.waiting += waiting * weight_;
  }
}

void RankActor::record(const workloads::OpEvent& e) {
  if (st_.options.trace_sink)
    st_.options.trace_sink->finished(e);
  else
    st_.result.events.push_back(e);
}

void RankActor::add_activity(int s, sg4::ActivityPtr a) {
  activities_.push_back(std::move(a));
  owners_.push_back(s);
}

void RankActor::wait_for_event() {
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

void RankActor::report() {
  const workloads::IdleLedger& l = walker_.ledger();
  auto& t = st_.result.ranks[static_cast<size_t>(rank_)];
  static_cast<workloads::IdleTimes&>(t) = l;
  t.end = sg4::Engine::get_clock();
  for (const auto& [key, seconds] : l.exposed) {
    auto& c = st_.collective_stats[key];
    c.kind = static_cast<OpKind>(key.first);
    c.group = key.second;
    c.exposed += seconds * weight_;
  }
}

}  // namespace paratwin::sim::detail
