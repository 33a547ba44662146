#include "sim/engine_state.hpp"

#include <algorithm>

namespace paratwin::sim::detail {

EngineState::EngineState(const workloads::Program& p, const topology::Topology& t, const SimOptions& o)
    : program(p),
      topology(t),
      options(o),
      phased(o.fidelity == Fidelity::fast),
      cost(t.machine(), p.framework),
      platform(topology::build_platform(t, platform_options(o))),
      placement(p.placement()),
      library(o.library.empty() ? t.machine().profile.library : o.library),
      layouts(p, placement, t, library),
      tuner(t, library, o.algorithms),
      pipe_axis(p.grid.axis_index("pipe")),
      step_costs(StepCosts::of(t.machine(), library)) {
  for (const Role& role : p.roles) {
    stream_index.push_back(std::make_shared<const workloads::StreamIndex>(role));
    const auto& per = stream_index.back()->streams;
    int computing = 0;
    for (int st = 0; st < kStreams; ++st)
      computing += std::any_of(per[static_cast<size_t>(st)].begin(), per[static_cast<size_t>(st)].end(),
                               [&](uint32_t i) { return workloads::is_compute(role.ops[i].kind); });
    one_compute_stream.push_back(computing <= 1);
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

void EngineState::op_done(int64_t count) {
  ops_done += count;
  if (!options.progress || ops_total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  const auto since = now - last_report;
  if (!(ops_done >= next_report && since >= std::chrono::seconds(1)) && since < std::chrono::seconds(10)) return;
  last_report = now;
  const double elapsed = std::chrono::duration<double>(now - started).count();
  const double fraction = static_cast<double>(ops_done) / static_cast<double>(ops_total);
  std::fprintf(stderr, "paratwin simulate: %3.0f%% of %lld ops (simulated %.4g s), %.0f s elapsed, about %.0f s left\n",
               100 * fraction, static_cast<long long>(ops_total), sg4::Engine::get_clock(), elapsed,
               elapsed * (1 - fraction) / fraction);
  while (next_report <= ops_done) next_report += std::max<int64_t>(1, ops_total / 20);
}

}  // namespace paratwin::sim::detail
