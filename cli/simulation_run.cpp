// One SimGrid simulation of a workload on a machine, its summary JSON and its text report.
#include "cli/simulation_run.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <simgrid/s4u.hpp>

#include "common/input_error.hpp"
#include "sim/engine.hpp"
#include "sim/trace.hpp"
#include "topology/platform.hpp"
#include "workloads/lower.hpp"

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

double bus_factor(workloads::OpKind kind, double n) {
  switch (kind) {
    case workloads::OpKind::all_reduce:
      return 2 * (n - 1) / n;
    case workloads::OpKind::reduce_scatter:
    case workloads::OpKind::all_gather:
    case workloads::OpKind::all_to_all:
      return (n - 1) / n;
    default:
      return 1;
  }
}

}  // namespace

SimulationRun run_simulation(const workloads::Workload& w, const SimulationSetup& setup) {
  auto machine = topology::resolve_machine(setup.machine);
  const int64_t per_node = machine.devices_per_node();
  const int64_t needed = (w.total_ranks() + per_node - 1) / per_node;
  const int64_t nodes = setup.nodes > 0 ? setup.nodes : needed;
  if (nodes > machine.network.nodes || needed > nodes)
    throw InputError("--nodes", "the workload needs " + std::to_string(w.total_ranks()) + " devices (" +
                                    std::to_string(needed) + " nodes of " + machine.name + ", which has " +
                                    std::to_string(machine.network.nodes) + ")");
  machine = machine.slice(nodes);
  workloads::LowerOptions options;
  options.devices_per_node = per_node;
  const auto program = workloads::lower(w, options);
  const std::string library = setup.library.empty() ? machine.profile.library : setup.library;
  const auto algorithms = parse_algorithms(setup.algorithms);
  topology::TopologyOptions topo_options;
  topo_options.one_nic_per_node = library == "cray-mpich";
  const topology::Topology topology(machine, topo_options);

  sim::SimOptions sim_options;
  sim_options.fidelity = setup.fidelity == "fast" ? sim::Fidelity::fast : sim::Fidelity::exact;
  sim_options.progress = setup.progress;
  if (setup.fold && sim_options.fidelity != sim::Fidelity::fast)
    throw InputError("--fold", "folding is part of fast fidelity: add --fidelity fast");
  sim_options.fold = setup.fold;
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
  int sg_argc = 2;
  char arg0[] = "paratwin";
  char arg1[] = "--log=root.thresh:warning";
  char* sg_argv[] = {arg0, arg1, nullptr};
  simgrid::s4u::Engine engine(&sg_argc, sg_argv);
  topology::configure_engine(engine);
  const auto r = sim::simulate(program, topology, sim_options);

  // Throughput and efficiency (seed 003 eq. 3 style model FLOPs).
  const double T = r.iteration_time;
  const double ranks = static_cast<double>(program.grid.size());
  const double flops_per_device = program.model_flops / T / ranks;
  const auto& dev = machine.node.device;
  const std::string dtype = workloads::to_string(w.training.dtype);
  const double peak = dev.peak_flops.count(dtype) ? dev.peak_flops.at(dtype) : dev.peak_flops.begin()->second;
  nlohmann::json j;
  j["workload"] = w.name;
  j["machine"] = machine.name;
  j["nodes"] = nodes;
  j["ranks"] = program.grid.size();
  j["fidelity"] = setup.fidelity;
  j["library"] = library;
  j["iteration_seconds"] = T;
  j["tokens_per_second"] = static_cast<double>(program.tokens_per_iteration) / T;
  j["model_tflops_per_device"] = flops_per_device / 1e12;
  j["percent_of_peak"] = 100 * flops_per_device / peak;
  if (dev.empirical_flops.count(dtype))
    j["percent_of_empirical_peak"] = 100 * flops_per_device / dev.empirical_flops.at(dtype);
  // Pipeline bubble: measured from the timeline against (p-1)/m, or (p-1)/(v·m) interleaved.
  const auto& pp = w.parallel.pipeline;
  const double analytical = static_cast<double>(pp.stages - 1) /
                            (static_cast<double>(pp.chunks) * static_cast<double>(program.micro_batches));
  double bubble = 0, compute = 0;
  for (const auto& t : r.ranks) {
    bubble += t.bubble;
    compute += t.compute;
  }
  j["bubble_fraction"] = {{"measured", compute > 0 ? bubble / compute : 0}, {"analytical", analytical}};
  for (size_t s = 0; s < program.roles.size(); ++s) {
    double c = 0, e = 0, b = 0, o = 0, n = 0;
    for (int64_t rank = 0; rank < program.grid.size(); ++rank)
      if (program.role_of(rank) == static_cast<int64_t>(s)) {
        const auto& t = r.ranks[static_cast<size_t>(rank)];
        c += t.compute;
        e += t.exposed_comm;
        b += t.bubble;
        o += t.other_idle;
        ++n;
      }
    j["stages"].push_back(
        {{"stage", s}, {"compute", c / n}, {"exposed_comm", e / n}, {"bubble", b / n}, {"other_idle", o / n}});
  }
  // Per rank, in rank order: [compute, exposed communication, bubble, other idle] seconds.
  nlohmann::json per_rank = nlohmann::json::array();
  for (const auto& t : r.ranks) per_rank.push_back({t.compute, t.exposed_comm, t.bubble, t.other_idle});
  j["ranks_compute_exposed_bubble_other"] = std::move(per_rank);
  for (const auto& c : r.collectives) {
    const double algbw = c.seconds > 0 ? c.bytes / c.seconds : 0;
    j["collectives"].push_back({{"kind", workloads::to_string(c.kind)},
                                {"algorithm", sim::to_string(c.algorithm)},
                                {"group", program.grid.mask_name(c.group)},
                                {"group_size", c.group_size},
                                {"count", c.count},
                                {"bytes", c.bytes},
                                {"seconds", c.seconds},
                                {"exposed_seconds", c.exposed},
                                {"overlapped_seconds", std::max(0.0, c.seconds - c.exposed)},
                                {"algbw", algbw},
                                {"busbw", algbw * bus_factor(c.kind, static_cast<double>(c.group_size))}});
  }
  double worst_memory = 0;
  for (const auto& role : program.roles) worst_memory = std::max(worst_memory, role.memory.total());
  j["memory"] = {
      {"max_bytes_per_rank", worst_memory}, {"device_bytes", dev.memory}, {"fits", worst_memory <= dev.memory}};
  j["flows"] = r.flows;
  j["actors"] = r.actors;
  j["folded"] = r.folded;
  if (r.folded) j["folded_by"] = r.fold_whole_nodes ? "node" : "nic";
  if (!r.folded && sim_options.fold) j["not_folded_because"] = r.fold_note;

  SimulationRun run;
  run.summary = std::move(j);
  if (setup.trace) run.trace = sim::chrome_trace(program, r.events);
  return run;
}

void print_simulation_report(const workloads::Workload& w, const SimulationSetup& setup, const nlohmann::json& j) {
  const auto ranks = j["ranks"].get<long long>();
  const std::string dtype = workloads::to_string(w.training.dtype);
  std::printf("%s on %s (%lld nodes, %lld ranks), %s fidelity, %s\n", w.name.c_str(),
              j["machine"].get<std::string>().c_str(), j["nodes"].get<long long>(), ranks, setup.fidelity.c_str(),
              j["library"].get<std::string>().c_str());
  if (j["folded"].get<bool>())
    std::printf(
        "  simulated as          %lld actors for %lld ranks (%s; collectives inside a node timed analytically)\n",
        j["actors"].get<long long>(), ranks,
        j["folded_by"] == "node" ? "one per node, its transfers NIC by NIC" : "ranks sharing a NIC folded into one");
  else if (j.contains("not_folded_because"))
    std::printf("  simulated as          one actor per rank (not folded: %s)\n",
                j["not_folded_because"].get<std::string>().c_str());
  std::printf("  iteration time        %.6g s\n", j["iteration_seconds"].get<double>());
  std::printf("  throughput            %.4g tokens/s, %.4g model TFLOP/s per device = %.3g%% of %s peak",
              j["tokens_per_second"].get<double>(), j["model_tflops_per_device"].get<double>(),
              j["percent_of_peak"].get<double>(), dtype.c_str());
  if (j.contains("percent_of_empirical_peak"))
    std::printf(" (%.3g%% of measured GEMM peak)", j["percent_of_empirical_peak"].get<double>());
  std::printf("\n  pipeline bubble       measured %.4f of compute, analytical (p-1)/(v·m) = %.4f\n",
              j["bubble_fraction"]["measured"].get<double>(), j["bubble_fraction"]["analytical"].get<double>());
  std::printf("\n  %-6s %12s %14s %12s %12s   (seconds, mean over the stage's ranks)\n", "stage", "compute",
              "exposed comm", "bubble", "other idle");
  for (const auto& s : j["stages"])
    std::printf("  %-6d %12.6g %14.6g %12.6g %12.6g\n", s["stage"].get<int>(), s["compute"].get<double>(),
                s["exposed_comm"].get<double>(), s["bubble"].get<double>(), s["other_idle"].get<double>());
  if (j.contains("collectives")) {
    std::printf("\n  %-15s %-13s %-12s %5s %7s %12s %12s %12s %10s %10s  (per rank)\n", "collective", "algorithm",
                "group", "size", "count", "bytes", "time [s]", "exposed [s]", "algbw GB/s", "busbw GB/s");
    for (const auto& c : j["collectives"])
      std::printf("  %-15s %-13s %-12s %5lld %7lld %12.4g %12.6g %12.6g %10.4g %10.4g\n",
                  c["kind"].get<std::string>().c_str(), c["algorithm"].get<std::string>().c_str(),
                  c["group"].get<std::string>().c_str(), static_cast<long long>(c["group_size"].get<int64_t>()),
                  static_cast<long long>(c["count"].get<int64_t>()), c["bytes"].get<double>(),
                  c["seconds"].get<double>(), c["exposed_seconds"].get<double>(), c["algbw"].get<double>() / 1e9,
                  c["busbw"].get<double>() / 1e9);
  }
  const double worst_memory = j["memory"]["max_bytes_per_rank"].get<double>();
  const double device_memory = j["memory"]["device_bytes"].get<double>();
  std::printf("\n  memory per rank       %.3g GiB of %.3g GiB", worst_memory / (1 << 30), device_memory / (1 << 30));
  if (worst_memory > device_memory)
    std::printf("  — OUT OF MEMORY: this configuration does not fit (simulated anyway)");
  std::printf("\n");
}

}  // namespace paratwin::cli
