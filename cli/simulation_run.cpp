// One SimGrid simulation of a workload on a machine, its summary JSON and its text report.
#include "cli/simulation_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <simgrid/s4u.hpp>

#include "calibration/profile.hpp"
#include "cli/run_summary.hpp"
#include "common/input_error.hpp"
#include "sim/collectives.hpp"
#include "sim/engine.hpp"
#include "topology/platform.hpp"
#include "workloads/lower.hpp"
#include "workloads/trace.hpp"

namespace paratwin::cli {

namespace {

// "--algorithm KIND=ALGORITHM", e.g. all_reduce=tree.
std::map<workloads::OpKind, sim::Algorithm> parse_algorithms(const std::vector<std::string>& specs) {
  using workloads::OpKind;
  std::map<OpKind, sim::Algorithm> out;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    const std::string kind_name = spec.substr(0, eq), algo_name = eq == std::string::npos ? "" : spec.substr(eq + 1);
    std::optional<OpKind> kind;
    for (OpKind k : {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather, OpKind::all_to_all,
                     OpKind::broadcast, OpKind::reduce})
      if (kind_name == workloads::to_string(k)) kind = k;
    if (!kind)
      throw InputError("--algorithm", "\"" + spec +
                                          "\": expected KIND=ALGORITHM with KIND one of all_reduce, reduce_scatter, "
                                          "all_gather, all_to_all, broadcast, reduce");
    const auto algorithm = sim::parse_algorithm(algo_name);
    if (!algorithm)
      throw InputError("--algorithm", "\"" + spec + "\": unknown algorithm \"" + algo_name +
                                          "\" (ring, recursive, tree, hierarchical, binomial_tree, pairwise, direct)");
    if (!sim::supports(*algorithm, *kind))
      throw InputError("--algorithm", "\"" + spec + "\": " + algo_name + " cannot run " + kind_name);
    out[*kind] = *algorithm;
  }
  return out;
}

// Announces a long step on stderr with the seconds since the run started, so that a large run shows signs of
// life before the engine's own progress begins.
class StepLog {
 public:
  explicit StepLog(bool on) : on_(on), start_(std::chrono::steady_clock::now()) {}
  void operator()(const std::string& what) const {
    if (!on_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "paratwin simulate: [%.1f s] %s\n", s, what.c_str());
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

FidelityChoice automatic_choice(int64_t ranks) {
  if (ranks <= kAutoExactUpToRanks)
    return {"exact", false, "auto: up to " + std::to_string(kAutoExactUpToRanks) + " ranks", true};
  if (ranks <= kAutoFoldAboveRanks)
    return {
        "fast", false,
        "auto: " + std::to_string(kAutoExactUpToRanks + 1) + " to " + std::to_string(kAutoFoldAboveRanks) + " ranks",
        true};
  return {"fast", true, "auto: above " + std::to_string(kAutoFoldAboveRanks) + " ranks", true};
}

}  // namespace

FidelityChoice choose_fidelity(int64_t ranks, const std::string& requested, bool fold) {
  if (requested == "auto") return fold ? FidelityChoice{"fast", true, "--fold", false} : automatic_choice(ranks);
  if (requested != "exact" && requested != "fast")
    throw InputError("--fidelity", "= " + requested + ": expected auto, exact or fast");
  if (fold && requested == "exact")
    throw InputError("--fold", "folding is part of fast fidelity: use --fidelity fast or auto");
  return {requested, fold, "--fidelity " + requested + (fold ? " --fold" : ""), false};
}

std::string describe(const FidelityChoice& c, int64_t ranks) {
  std::string line =
      std::to_string(ranks) + " ranks: " + c.fidelity + " fidelity" + (c.fold ? ", folded" : "") + " (" + c.why + ")";
  if (!c.automatic) return line;
  if (c.fidelity == "exact") return line + "; --fidelity fast for aggregated phases (faster)";
  if (c.fold)
    line += "; --fidelity fast for one actor per rank,";
  else
    line += ";";
  return line + " --fidelity exact for one phase per algorithm step";
}

void check_algorithm_specs(const std::vector<std::string>& specs) {
  parse_algorithms(specs);
}

SimulationRun run_simulation(const workloads::Workload& w, const SimulationSetup& setup) {
  auto machine = topology::resolve_machine(setup.machine);
  if (!setup.profile.empty()) calibration::apply_profile(machine, setup.profile);
  const int64_t per_node = machine.devices_per_node();
  const int64_t needed = (w.total_ranks() + per_node - 1) / per_node;
  const int64_t nodes = setup.nodes > 0 ? setup.nodes : needed;
  if (nodes > machine.network.nodes || needed > nodes)
    throw InputError("--nodes", "the workload needs " + std::to_string(w.total_ranks()) + " devices (" +
                                    std::to_string(needed) + " nodes of " + machine.name + ", which has " +
                                    std::to_string(machine.network.nodes) + ")");
  machine = machine.slice(nodes);
  const auto choice = choose_fidelity(w.total_ranks(), setup.fidelity, setup.fold);
  const auto algorithms = parse_algorithms(setup.algorithms);
  const StepLog step(setup.progress);
  step("lowering " + w.name + " to " + std::to_string(w.total_ranks()) + " ranks' op lists");
  workloads::LowerOptions options;
  options.devices_per_node = per_node;
  const auto program = workloads::lower(w, options);
  const std::string library = setup.library.empty() ? machine.profile.library : setup.library;
  step("routing " + std::to_string(nodes) + " nodes of " + machine.name);
  const topology::Topology topology(machine, sim::topology_options(library));

  sim::SimOptions sim_options;
  sim_options.fidelity = choice.fidelity == "fast" ? sim::Fidelity::fast : sim::Fidelity::exact;
  sim_options.progress = setup.progress;
  sim_options.fold = choice.fold;
  sim_options.library = library;
  sim_options.algorithms = algorithms;
  try {
    sim::check_algorithms(program, sim_options);
  } catch (const std::invalid_argument& e) {
    throw InputError("--algorithm", e.what());
  }
  for (const auto& [kind, algorithm] : algorithms) {
    bool used = false;
    for (const auto& role : program.roles)
      used = used || std::any_of(role.ops.begin(), role.ops.end(), [&](const auto& op) { return op.kind == kind; });
    if (!used)
      std::fprintf(stderr, "paratwin: warning: --algorithm %s=%s: the workload has no %s collectives\n",
                   workloads::to_string(kind), sim::to_string(algorithm), workloads::to_string(kind));
  }
  if (setup.trace) {
    sim_options.trace_ranks = setup.trace_ranks;
    if (sim_options.trace_ranks.empty())
      for (int64_t r = 0; r < std::min<int64_t>(program.grid.size(), program.grid.size() <= 64 ? 64 : 1); ++r)
        sim_options.trace_ranks.push_back(r);
  }
  step("building the SimGrid platform and starting the ranks' actors");
  const auto engine = topology::start_engine();
  const auto r = sim::simulate(program, topology, sim_options);
  step("done: " + std::to_string(r.actors) + " actors, " + std::to_string(r.flows) + " SimGrid transfers");

  std::vector<RankRow> rows;
  for (const auto& t : r.ranks) rows.push_back({t.compute, t.exposed_comm, t.bubble, t.other_idle});
  std::vector<CollectiveRow> collectives;
  for (const auto& c : r.collectives) {
    std::string algorithms;
    for (const auto a : c.algorithms) algorithms += (algorithms.empty() ? "" : "+") + std::string(sim::to_string(a));
    collectives.push_back({c.kind, c.group, algorithms, c.count, c.bytes, c.seconds, c.exposed});
  }
  nlohmann::json j = run_summary(w, program, machine, r.iteration_time, rows, collectives);
  j["nodes"] = nodes;
  j["fidelity"] = choice.fidelity;
  j["fidelity_chosen_by"] = choice.why;
  j["library"] = library;
  if (!setup.profile.empty()) j["profile"] = setup.profile;
  j["flows"] = r.flows;
  j["transfers"] = r.transfers;
  j["actors"] = r.actors;
  j["folded"] = r.folded;
  if (r.folded) j["folded_by"] = r.fold_replicas ? "replica" : "node";
  if (!r.folded && sim_options.fold) j["not_folded_because"] = r.fold_note;

  SimulationRun run;
  run.summary = std::move(j);
  if (setup.trace) run.trace = workloads::chrome_trace(program, r.events);
  return run;
}

void print_simulation_report(const workloads::Workload& w, const nlohmann::json& j) {
  const auto ranks = j["ranks"].get<long long>();
  std::printf("%s on %s (%lld nodes, %lld ranks), %s fidelity, %s\n", w.name.c_str(),
              j["machine"].get<std::string>().c_str(), j["nodes"].get<long long>(), ranks,
              j["fidelity"].get<std::string>().c_str(), j["library"].get<std::string>().c_str());
  if (j.contains("profile")) std::printf("  calibrated by         %s\n", j["profile"].get<std::string>().c_str());
  if (j["folded"].get<bool>())
    std::printf(
        "  simulated as          %lld actors for %lld ranks (%s; collectives inside a node timed analytically)\n",
        j["actors"].get<long long>(), ranks,
        j["folded_by"] == "node" ? "one per node"
                                 : "one per node of a data-parallel replica, standing for it in every replica");
  else if (j.contains("not_folded_because"))
    std::printf("  simulated as          one actor per rank (not folded: %s)\n",
                j["not_folded_because"].get<std::string>().c_str());
  print_summary(w, j, "simulated anyway");
}

}  // namespace paratwin::cli
