#include "predict/predict.hpp"

#include <algorithm>
#include <memory>
#include <simgrid/s4u.hpp>

#include "calibration/profile.hpp"
#include "common/input_error.hpp"
#include "predict/child_pool.hpp"
#include "predict/fidelity.hpp"
#include "reports/trace.hpp"
#include "reports/trace_writer.hpp"
#include "sim/collectives.hpp"
#include "sim/engine.hpp"
#include "topology/platform.hpp"
#include "workloads/lower.hpp"

namespace paratwin::predict {

namespace {

std::string count(int64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// The nodes a simulation of `w` uses; throws InputError when the machine (or --nodes) cannot hold it.
int64_t nodes_to_simulate(const workloads::Workload& w, const topology::Machine& full, const PointOptions& options) {
  const int64_t needed = nodes_for(full, w.total_ranks());
  const int64_t nodes = options.nodes > 0 ? options.nodes : needed;
  if (needed > full.network.nodes)
    throw InputError("--machine", full.name + " has " + count(full.network.nodes, "node") + " but the workload needs " +
                                      count(w.total_ranks(), "device") + " (" + count(needed, "node") + " of " +
                                      count(full.devices_per_node(), "device") + ")");
  if (nodes > full.network.nodes)
    throw InputError("--nodes",
                     "= " + std::to_string(nodes) + " but " + full.name + " has " + count(full.network.nodes, "node"));
  if (needed > nodes)
    throw InputError("--nodes", "= " + std::to_string(nodes) + " gives " +
                                    count(nodes * full.devices_per_node(), "device") + " but the workload needs " +
                                    count(w.total_ranks(), "device") + " (" + count(needed, "node") + ")");
  return nodes;
}

// An fp8 run needs the device's fp8 rate: without one the cost model would time its GEMMs at the bf16
// rate and call that fp8 (an A100 has no fp8 tensor cores).
void require_fp8_rate(const workloads::Workload& w, const topology::Machine& machine) {
  if (w.training.fp8 == workloads::Fp8::none || machine.node.device.peak_flops.count("fp8")) return;
  throw InputError("--machine",
                   machine.name + "'s " + machine.node.device.kind +
                       " has no fp8 rate (node.device.peak_flops.fp8) for the workload's training.fp8 = \"" +
                       workloads::to_string(w.training.fp8) + "\"");
}

Prediction simulate(const workloads::Workload& w, const topology::Machine& full, const PointOptions& options) {
  require_fp8_rate(w, full);
  const int64_t nodes = nodes_to_simulate(w, full, options);
  const auto machine = full.slice(nodes);
  const auto choice = options.fidelity_choice ? *options.fidelity_choice
                                              : choose_fidelity(w.total_ranks(), options.fidelity, options.fold);
  const auto algorithms = parse_algorithms(options.algorithms);
  const auto step = [&](const std::string& what) {
    if (options.step) options.step(what);
  };
  step("lowering " + w.name + " to " + std::to_string(w.total_ranks()) + " ranks' op lists");
  workloads::LowerOptions lower_options;
  lower_options.devices_per_node = machine.devices_per_node();
  const auto program = workloads::lower(w, lower_options);
  const std::string library = library_for(machine, options.library);
  step("routing " + std::to_string(nodes) + " nodes of " + machine.name);
  const topology::Topology topology(machine, sim::topology_options(library));

  sim::SimOptions sim_options;
  sim_options.fidelity = choice.fidelity == "fast" ? sim::Fidelity::fast : sim::Fidelity::exact;
  sim_options.progress = options.progress;
  sim_options.fold = choice.fold;
  sim_options.library = library;
  sim_options.algorithms = algorithms;
  if (const auto why = sim::check_algorithms(program, sim_options); !why.empty()) throw InputError("--algorithm", why);
  std::vector<std::string> warnings;
  for (const auto& [kind, algorithm] : algorithms) {
    bool used = false;
    for (const auto& role : program.roles)
      // A copy: clang before 16 (the fuzz build's) cannot capture a structured binding.
      used = used || std::any_of(role.ops.begin(), role.ops.end(), [k = kind](const auto& op) { return op.kind == k; });
    if (used) continue;
    warnings.push_back(std::string("--algorithm ") + workloads::to_string(kind) + "=" + sim::to_string(algorithm) +
                       ": the workload has no " + workloads::to_string(kind) + " collectives");
    if (options.warn) options.warn(warnings.back());
  }
  for (int64_t r : options.trace_ranks)
    if (r < 0 || r >= program.grid.size())
      throw InputError("--trace-ranks", "= " + std::to_string(r) + " but the workload has ranks 0 to " +
                                            std::to_string(program.grid.size() - 1));
  std::unique_ptr<reports::ChromeTraceWriter> trace;
  if (options.trace) {
    sim_options.trace_ranks = options.trace_ranks;
    if (sim_options.trace_ranks.empty()) sim_options.trace_ranks = reports::default_trace_ranks(program);
    trace = std::make_unique<reports::ChromeTraceWriter>(
        program, *options.trace,
        "paratwin simulate: " + w.name + " on " + count(nodes, "node") + " of " + machine.name + ", " +
            choice.fidelity + " fidelity" + (choice.fold ? " (folded where the program allows)" : "") + ", " + library);
    sim_options.trace_sink = trace.get();
  }
  sim_options.before_run = [&](const sim::RunEstimate& estimate) {
    const std::string warning = check_estimate(estimate, choice, w.total_ranks(), options.max_seconds);
    if (warning.empty()) return;
    warnings.push_back(warning);
    if (options.warn) options.warn(warning);
  };
  step("building the SimGrid platform and starting the ranks' actors");
  const auto engine = topology::start_engine();
  const auto r = sim::simulate(program, topology, sim_options);
  if (trace) trace->finish();
  step("done: " + std::to_string(r.actors) + " actors, " + std::to_string(r.flows) + " SimGrid transfers");

  std::vector<reports::RankRow> rows;
  for (const auto& t : r.ranks) rows.push_back({t.compute, t.exposed_comm, t.bubble, t.other_idle});
  std::vector<reports::CollectiveRow> collectives;
  for (const auto& c : r.collectives) {
    std::string names;
    for (const auto a : c.algorithms) names += (names.empty() ? "" : "+") + std::string(sim::to_string(a));
    collectives.push_back({c.kind, c.group, names, c.count, c.bytes, c.seconds, c.exposed, c.waiting, c.call_seconds});
  }
  SimulationRecord record;
  record.nodes = nodes;
  record.fidelity = choice.fidelity;
  record.fidelity_chosen_by = choice.why;
  record.library = library;
  if (library == "pccl") record.vendor_library = sim::vendor_library(machine);
  record.profile = options.profile;
  record.flows = r.flows;
  record.transfers = r.transfers;
  record.actors = r.actors;
  record.folded = r.folded;
  if (r.folded) record.folded_by = r.fold_replicas ? "replica" : "node";
  if (!r.folded && sim_options.fold) record.not_folded_because = r.fold_note;
  auto p = prediction_of(summarize(w, program, machine, r.iteration_time, rows, collectives), std::move(record));
  p.warnings = std::move(warnings);
  return p;
}

Prediction estimate(const workloads::Workload& w, const topology::Machine& machine, const PointOptions& options) {
  require_fp8_rate(w, machine);
  const std::string library = library_for(machine, options.library);
  sim::AnalyticalOptions analytical;
  analytical.library = library;
  analytical.placement_aware = options.placement_aware;
  if (options.nodes > 0 && options.nodes != nodes_for(machine, w.total_ranks()))
    throw InputError("--nodes",
                     "= " + std::to_string(options.nodes) +
                         ", but the analytical model predicts a workload on the nodes that hold its ranks (" +
                         std::to_string(nodes_for(machine, w.total_ranks())) + ")");
  return prediction_of(sim::estimate(w, topology_for(machine, w.total_ranks(), library), analytical), w.total_ranks());
}

}  // namespace

topology::Machine load_machine(const std::string& reference, const std::string& profile) {
  auto machine = topology::resolve_machine(reference);
  if (!profile.empty()) calibration::apply_profile(machine, profile);
  return machine;
}

std::string library_for(const topology::Machine& machine, const std::string& requested) {
  return requested.empty() ? machine.profile.library : requested;
}

int64_t nodes_for(const topology::Machine& machine, int64_t devices) {
  const int64_t per_node = machine.devices_per_node();
  return (devices + per_node - 1) / per_node;
}

topology::Topology topology_for(const topology::Machine& machine, int64_t devices, const std::string& library) {
  const int64_t nodes = nodes_for(machine, devices);
  if (nodes > machine.network.nodes)
    throw InputError("--machine", machine.name + " has " + std::to_string(machine.total_devices()) +
                                      " devices, not the " + std::to_string(devices) + " GPUs asked for");
  return topology::Topology(machine.slice(nodes), sim::topology_options(library));
}

void check_point(const workloads::Workload& w, const topology::Machine& full, const PointOptions& options, bool lower) {
  if (options.model != Model::simulate) return;
  const int64_t nodes = nodes_to_simulate(w, full, options);
  // The checks simulate() makes as it starts, by the same functions, without starting: the fidelity and
  // folding options for this many ranks, and the --algorithm overrides.
  choose_fidelity(w.total_ranks(), options.fidelity, options.fold);
  sim::SimOptions sim_options;
  sim_options.library = library_for(full, options.library);
  sim_options.algorithms = parse_algorithms(options.algorithms);
  if (!lower) return;
  workloads::LowerOptions lower_options;
  lower_options.devices_per_node = full.slice(nodes).devices_per_node();
  const auto program = workloads::lower(w, lower_options);
  if (const auto why = sim::check_algorithms(program, sim_options); !why.empty()) throw InputError("--algorithm", why);
}

Prediction predict(const workloads::Workload& w, const topology::Machine& machine, const PointOptions& options) {
  return options.model == Model::simulate ? simulate(w, machine, options) : estimate(w, machine, options);
}

Prediction predict_in_child(const workloads::Workload& w, const topology::Machine& machine,
                            const PointOptions& options) {
  if (options.model == Model::analytical) return predict(w, machine, options);
  ChildPool pool(1);
  pool.start(0, [&] { return to_json(predict(w, machine, options)); });
  const auto r = pool.wait(-1);
  if (!r || !r->ok) throw std::runtime_error(r ? r->error : std::string("the prediction did not finish"));
  return prediction_from_json(r->value);
}

}  // namespace paratwin::predict
