#include "sim/engine.hpp"

#include <algorithm>
#include <simgrid/s4u.hpp>

#include "sim/rank_actor.hpp"
#include "sim/run_estimate.hpp"

namespace paratwin::sim {

using workloads::Op;
using workloads::Role;
namespace sg4 = simgrid::s4u;

namespace {
constexpr int64_t kGuardedActors = 16384;
}  // namespace

std::string check_algorithms(const workloads::Program& program, const SimOptions& options) {
  for (const Role& role : program.roles)
    for (const Op& op : role.ops) {
      const auto it = options.algorithms.find(op.kind);
      if (it == options.algorithms.end() || !workloads::is_collective(op.kind)) continue;
      const int64_t p = program.grid.group_size(op.group);
      if (spec(it->second).power_of_two_groups && (p & (p - 1)) != 0)
        return std::string(workloads::to_string(op.kind)) + "=" + to_string(it->second) +
               " needs power-of-two groups, but " + role.name + "'s op \"" + op.name + "\" runs over group \"" +
               program.grid.mask_name(op.group) + "\" of " + std::to_string(p) + " members";
    }
  return "";
}

SimResult simulate(const workloads::Program& program, const topology::Topology& topology, const SimOptions& options) {
  // Preconditions checked where the user gives the workload, machine and algorithms (predict).
  if (program.grid.size() > topology.devices())
    throw std::logic_error("simulate: the program has " + std::to_string(program.grid.size()) +
                           " ranks but the machine only " + std::to_string(topology.devices()) + " devices");
  detail::EngineState shared(program, topology, options);
  const RunEstimate estimate = estimate_run(shared);
  if (options.before_run) options.before_run(estimate);
  // Guard pages below each actor's stack turn an overflow of its small stack (topology::kActorStackKiB)
  // into a fault instead of silent corruption. Each costs two memory mappings (SimGrid 3.32,
  // src/kernel/context/ContextSwapped.cpp: the stack's allocation and its mprotect-ed page) of the
  // process's 65,530: up to 16,384 actors.
  sg4::Engine::set_config(estimate.actors <= kGuardedActors ? "contexts/guard-size:1" : "contexts/guard-size:0");
  int64_t actors = 0;
  for (int64_t r = 0; r < program.grid.size(); ++r)
    if (!shared.fold.active || shared.fold.rep[static_cast<size_t>(r)] == r) {
      sg4::Actor::create("rank" + std::to_string(r), shared.actor_host_of(r), detail::RankActor(shared, r));
      ++actors;
    }
  if (shared.fold.active)  // a represented rank's events are its representative's
    for (int64_t r : options.trace_ranks)
      if (r >= 0 && r < program.grid.size())
        shared.traced[static_cast<size_t>(shared.fold.rep[static_cast<size_t>(r)])] = true;
  if (options.trace_sink) {
    std::map<int64_t, std::vector<int64_t>> stands_for;  // traced actor -> its ranks
    for (int64_t r : options.trace_ranks)
      if (r >= 0 && r < program.grid.size())
        stands_for[shared.fold.active ? shared.fold.rep[static_cast<size_t>(r)] : r];
    for (auto& [actor, ranks] : stands_for) {
      if (!shared.fold.active) {
        ranks.push_back(actor);
        continue;
      }
      for (int64_t r = 0; r < program.grid.size(); ++r)
        if (shared.fold.rep[static_cast<size_t>(r)] == actor) ranks.push_back(r);
    }
    std::fill(shared.traced.begin(), shared.traced.end(), false);
    for (const auto& [actor, ranks] : stands_for) {
      shared.traced[static_cast<size_t>(actor)] = true;
      options.trace_sink->traced(actor, ranks);
    }
  }
  sg4::Engine::get_instance()->run();
  SimResult out = std::move(shared.result);

  out.actors = actors;
  out.folded = shared.fold.active;
  out.fold_replicas = shared.fold.active && shared.fold.by == FoldBy::replica;
  out.fold_note = shared.fold.reason;
  if (shared.fold.active) {
    for (int64_t r = 0; r < program.grid.size(); ++r)
      out.ranks[static_cast<size_t>(r)] = out.ranks[static_cast<size_t>(shared.fold.rep[static_cast<size_t>(r)])];
  }
  if (shared.fold.active && !options.trace_sink) {
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
    c.waiting /= ranks;
    c.call_seconds /= ranks;
    c.exposed /= ranks;
    out.collectives.push_back(c);
  }
  return out;
}

}  // namespace paratwin::sim
