// `paratwin search`: rank every configuration of N GPUs with the analytical model, then simulate the best.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/simulation_report.hpp"
#include "common/input_error.hpp"
#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "sim/collectives.hpp"
#include "sim/search.hpp"
#include "workloads/embedded_examples.hpp"

namespace paratwin::cli {

namespace {

struct SearchArgs {
  std::string workload;
  std::string machine = "frontier";
  int64_t gpus = 0;
  std::string family = "all";
  int64_t top = 10;
  int64_t simulate = 3;
  std::string fidelity = "auto";
  bool fold = false;
  std::vector<std::string> algorithms;
  bool no_progress = false;
  std::string library;
  std::string json;
  bool placement_agnostic = false;
  bool show_rejected = false;
};

std::vector<sim::Family> families_of(const std::string& name) {
  if (name == "4d") return {sim::Family::four_d};
  if (name == "ptdp") return {sim::Family::ptdp};
  if (name == "ted") return {sim::Family::ted};
  return {};  // all
}

double gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

// The ranking, analytical columns first; `simulated` holds one cell per simulated configuration (empty
// until it is done).
void print_ranking(const sim::SearchResult& result, size_t top, const std::vector<std::string>& simulated) {
  std::printf("  %4s %-5s %-30s %14s %14s %12s %10s %9s\n", "rank", "family", "configuration", "analytical [s]",
              "simulated [s]", "exposed [s]", "GiB/GPU", "% peak");
  const size_t shown = std::min(top, result.ranked.size());
  for (size_t i = 0; i < std::max(shown, simulated.size()); ++i) {
    const auto& c = result.ranked[i];
    const std::string cell = i < simulated.size() ? (simulated[i].empty() ? "pending" : simulated[i]) : "";
    std::printf("  %4zu %-5s %-30s %14.4f %14s %12.4f %10.1f %9.1f\n", i + 1, sim::to_string(c.family), c.label.c_str(),
                c.estimate.iteration, cell.c_str(), c.estimate.exposed_comm, gib(c.estimate.memory.total()),
                c.estimate.percent_of_peak);
  }
  if (shown < result.ranked.size()) std::printf("  ... %zu more (--top)\n", result.ranked.size() - shown);
  // Before a long simulation starts, the ranking must be on the terminal (or in the pipe) already.
  std::fflush(stdout);
}

// The analytical ranking orders the table; which simulated configuration is fastest is said apart.
void print_best_simulated(const sim::SearchResult& result, const nlohmann::json& summaries) {
  size_t best = summaries.size();
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (!summaries[i].contains("iteration_seconds")) continue;
    if (best == summaries.size() ||
        summaries[i]["iteration_seconds"].get<double>() < summaries[best]["iteration_seconds"].get<double>())
      best = i;
  }
  if (best == summaries.size()) return;
  std::printf("  fastest simulated: rank %zu, %s %s, %.4f s per iteration\n", best + 1,
              sim::to_string(result.ranked[best].family), result.ranked[best].label.c_str(),
              summaries[best]["iteration_seconds"].get<double>());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Simulates the best candidates one by one, each in a child process (one SimGrid engine per process),
// telling stderr which one runs and how long each took. Fills `cells` and returns the predictions'
// documents ({"error": ...} for a failed one).
nlohmann::json simulate_best(const sim::SearchResult& result, const topology::Machine& machine,
                             const predict::PointOptions& options, std::vector<std::string>& cells) {
  nlohmann::json summaries = nlohmann::json::array();
  const auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& c = result.ranked[i];
    std::fprintf(stderr, "paratwin search: simulating %zu of %zu: %s %s (%.0f s elapsed)\n", i + 1, cells.size(),
                 sim::to_string(c.family), c.label.c_str(), seconds_since(started));
    const auto one = std::chrono::steady_clock::now();
    char cell[64];
    try {
      const auto p = predict::predict_in_child(c.workload, machine, options);
      std::snprintf(cell, sizeof cell, "%.4f", p.iteration_seconds);
      std::fprintf(stderr,
                   "paratwin search: simulated %zu of %zu in %.1f s: %.4g s per iteration (analytical %.4g s)\n", i + 1,
                   cells.size(), seconds_since(one), p.iteration_seconds, c.estimate.iteration);
      summaries.push_back(predict::to_json(p));
    } catch (const std::exception& e) {
      std::snprintf(cell, sizeof cell, "failed");
      std::fprintf(stderr, "paratwin search: simulating %s failed: %s\n", c.label.c_str(), e.what());
      summaries.push_back({{"error", e.what()}});
    }
    cells[i] = cell;
  }
  return summaries;
}

}  // namespace

Action add_search_command(CLI::App& app) {
  auto a = std::make_shared<SearchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Rank every parallel configuration of a workload's model on N GPUs with the analytical model, drop those that "
      "do not fit in memory, and simulate the best few with SimGrid");
  cmd->add_option("--workload,-w", a->workload,
                  "base workload JSON (model, batch, training settings, optimisations; its own parallelism is "
                  "replaced; default: the built-in example)");
  cmd->add_option("--machine,-m", a->machine, "built-in machine name or machine file")->capture_default_str();
  cmd->add_option("--gpus,-n", a->gpus, "number of GPUs to configure")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 22));
  cmd->add_option("--family", a->family,
                  "configuration families: 4d (AxoNN x·y·z·data), ptdp (Megatron tensor·pipeline·data and "
                  "micro-batch size), ted (MoE tensor·expert·data), all (those that apply to the model)")
      ->check(CLI::IsMember({"4d", "ptdp", "ted", "all"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "configurations to print")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--simulate", a->simulate, "simulate this many of the best with SimGrid (0: none)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--fidelity", a->fidelity,
                  "fidelity of those simulations: exact, fast, or auto (by the GPU count, as `paratwin simulate`)")
      ->check(CLI::IsMember({"auto", "exact", "fast"}))
      ->capture_default_str();
  cmd->add_flag("--fold", a->fold,
                "those simulations run the ranks of a node as one actor (with --fidelity fast or auto; see "
                "`paratwin simulate --help`)");
  cmd->add_option("--algorithm", a->algorithms,
                  "KIND=ALGORITHM for those simulations, as `paratwin simulate --algorithm` (repeatable; the "
                  "analytical ranking keeps the library's choices)");
  cmd->add_flag("--no-progress", a->no_progress,
                "no engine progress from those simulations (shown by default above " +
                    std::to_string(predict::kProgressAboveRanks) + " GPUs)");
  cmd->add_option("--library", a->library, "communication library (default: the machine profile's)")
      ->check(CLI::IsMember({"nccl", "rccl", "cray-mpich", "mpi", "pccl"}));
  cmd->add_flag("--placement-agnostic", a->placement_agnostic,
                "give every collective one NIC's bandwidth wherever its group sits (the baseline seed 002 §5.1.2 "
                "improves on) instead of loading the machine's links with every group's rings");
  cmd->add_flag("--show-rejected", a->show_rejected, "list every configuration dropped, with the reason");
  cmd->add_option("--json", a->json, "write every ranked, rejected and invalid configuration as JSON to this file");
  return [a]() -> int {
    const auto base = workloads::load_workload_or_default(a->workload);
    const auto machine = predict::load_machine(a->machine);
    const int64_t nodes = predict::nodes_for(machine, a->gpus);
    if (nodes > machine.network.nodes)
      throw InputError("--gpus", "= " + std::to_string(a->gpus) + " but " + machine.name + " has " +
                                     std::to_string(machine.total_devices()) + " devices");
    const std::string library = predict::library_for(machine, a->library);
    // Bad simulation options fail now, not after the ranking.
    const auto choice = predict::choose_fidelity(a->gpus, a->fidelity, a->fold);
    predict::parse_algorithms(a->algorithms);
    const auto topology = predict::topology_for(machine, a->gpus, library);
    sim::SearchOptions options;
    options.gpus = a->gpus;
    options.families = families_of(a->family);
    options.model.placement_aware = !a->placement_agnostic;
    options.model.library = library;
    sim::SearchResult result;
    try {
      result = sim::search(base, topology, options);
    } catch (const std::invalid_argument& e) {
      throw InputError("--family", e.what());
    }

    std::printf("%s on %lld GPUs of %s (%s, %s model)\n", base.name.c_str(), static_cast<long long>(a->gpus),
                machine.name.c_str(), library.c_str(),
                a->placement_agnostic ? "placement-agnostic" : "placement-aware");
    std::printf("  %lld valid configurations, %zu do not fit in memory, %zu break a rule of the format\n",
                static_cast<long long>(result.enumerated), result.rejected.size(), result.invalid.size());
    const auto show = [&](const char* what, const std::vector<sim::Rejected>& list) {
      const size_t shown = a->show_rejected ? list.size() : std::min<size_t>(list.size(), 3);
      for (size_t i = 0; i < shown; ++i)
        std::printf("    %s %-5s %-28s %s\n", what, sim::to_string(list[i].family), list[i].label.c_str(),
                    list[i].reason.c_str());
      if (shown < list.size()) std::printf("    ... %zu more (--show-rejected lists them)\n", list.size() - shown);
    };
    show("memory ", result.rejected);
    show("invalid", result.invalid);
    if (result.ranked.empty()) {
      std::fprintf(stderr, "paratwin: error: no configuration of %lld GPUs fits in memory\n",
                   static_cast<long long>(a->gpus));
      return 1;
    }

    const size_t simulated = std::min<size_t>(static_cast<size_t>(a->simulate), result.ranked.size());
    std::vector<std::string> cells(simulated);
    std::printf("\n  ranked by the analytical model:\n");
    print_ranking(result, static_cast<size_t>(a->top), cells);
    nlohmann::json sim_results = nlohmann::json::array();
    if (simulated > 0) {
      std::fprintf(stderr, "paratwin search: simulating the best %zu with SimGrid: %s\n", simulated,
                   predict::describe(choice, a->gpus).c_str());
      predict::PointOptions point;
      point.fidelity = a->fidelity;
      point.fold = a->fold;
      point.library = a->library;
      point.algorithms = a->algorithms;
      point.progress = !a->no_progress && a->gpus > predict::kProgressAboveRanks;
      if (point.progress) point.step = step_log();
      point.warn = print_warning;
      sim_results = simulate_best(result, machine, point, cells);
      std::printf("\n  the best %zu simulated with SimGrid (%s fidelity%s):\n", simulated, choice.fidelity.c_str(),
                  choice.fold ? ", folded" : "");
      print_ranking(result, static_cast<size_t>(a->top), cells);
      print_best_simulated(result, sim_results);
    }

    if (!a->json.empty()) {
      nlohmann::json j;
      j["workload"] = base.name;
      j["machine"] = machine.name;
      j["gpus"] = a->gpus;
      j["library"] = library;
      j["placement_aware"] = !a->placement_agnostic;
      if (simulated > 0) {
        j["simulation"] = {{"fidelity", choice.fidelity},
                           {"fold", choice.fold},
                           {"fidelity_chosen_by", choice.why},
                           {"algorithms", a->algorithms}};
      }
      j["valid"] = result.enumerated;
      j["ranked"] = nlohmann::json::array();
      for (size_t i = 0; i < result.ranked.size(); ++i) {
        const auto& c = result.ranked[i];
        nlohmann::json e = {{"rank", i + 1},
                            {"family", sim::to_string(c.family)},
                            {"configuration", c.label},
                            {"analytical", predict::to_json(c.estimate)},
                            {"parallelism", workloads::to_json(c.workload)["parallelism"]}};
        if (i < simulated) e["simulated"] = sim_results[i];
        j["ranked"].push_back(std::move(e));
      }
      for (const auto* list : {&result.rejected, &result.invalid})
        for (const auto& r : *list)
          j[list == &result.rejected ? "out_of_memory" : "invalid"].push_back(
              {{"family", sim::to_string(r.family)}, {"configuration", r.label}, {"reason", r.reason}});
      write_file_atomically(a->json, j.dump(2) + "\n");
    }
    return 0;
  };
}

}  // namespace paratwin::cli
