#pragma once
// What the rank actors of one simulation share (the simulation runs all actors in one thread): the
// program and machine, the cost model and platform, the collective tuner and layouts, folding and
// phases, the phase board, the results being gathered, and progress.
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/cost_model.hpp"
#include "sim/engine.hpp"
#include "sim/folding.hpp"
#include "sim/group_layouts.hpp"
#include "sim/node_collectives.hpp"
#include "sim/phases.hpp"
#include "sim/tuner.hpp"
#include "topology/platform.hpp"
#include "workloads/op_walker.hpp"

namespace paratwin::sim::detail {

namespace sg4 = simgrid::s4u;
using workloads::Op;
using workloads::OpKind;
using workloads::Role;
using workloads::Stream;

constexpr int kStreams = workloads::kStreams;
constexpr int kChannelForward = 100, kChannelBackward = 101;
// SimGrid refuses null payloads; messages carry this token (only their simulated size matters).
inline int kToken = 0;
// A phase's transfers fall into a few size classes (sim/phases.hpp); each class is one flow to a sink.
constexpr int kFlowsPerPhase = static_cast<int>(kMaxFlows);

inline topology::PlatformOptions platform_options(const SimOptions& o) {
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

// One call of a collective as its group's members (actors) reach it: when the last so far arrived and
// the last so far finished, and how many arrived and finished (the entry goes when all have). A
// member's time before the last arrival is waiting for peers; the call's own time is from the last
// arrival to the last end.
struct CallKey {
  workloads::AxisMask group = 0;
  int64_t place = 0;  // which group of that mask: its phase component, or its first member rank
  int stream = 0;
  int64_t ordinal = 0;  // the call's place among the group's calls on that stream
  auto operator<=>(const CallKey&) const = default;
};
struct CallEntry {
  double last_arrival = 0, last_end = 0;
  int32_t arrived = 0, finished = 0, members = 0;
  int64_t ranks = 0;  // the ranks its arrived members stand for
};

// State shared by every rank actor (the simulation runs all actors in one thread).
struct EngineState {
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
  std::vector<std::vector<uint8_t>> feeds_other_stream;                     // per role, per op
  std::vector<std::shared_ptr<const workloads::StreamIndex>> stream_index;  // per role, for its actors' walkers
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
  std::map<CallKey, CallEntry> calls;                 // collective calls some members have not finished
  std::vector<sg4::Mailbox*> notices;                 // per actor and stream: "your phase is over"
  std::chrono::steady_clock::time_point last_report = started;

  EngineState(const workloads::Program& p, const topology::Topology& t, const SimOptions& o);

  // Reports at a 5 % mark of the ops if a second has passed since the last report (a short run
  // says little), and at least every 10 s.
  void op_done(int64_t count);

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

}  // namespace paratwin::sim::detail
