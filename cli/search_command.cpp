// `paratwin search`: rank every configuration of N GPUs with the analytical model, then simulate the best.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/simulation_report.hpp"
#include "common/input_error.hpp"
#include "common/text_file.hpp"
#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "predict/search_report.hpp"
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
    if (!a->json.empty()) check_output_file(a->json, "--json");
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

    const predict::SearchSetting setting{base.name, machine.name, library, a->gpus, !a->placement_agnostic};
    std::printf("%s", predict::search_heading(setting, result, a->show_rejected).c_str());
    if (result.ranked.empty()) {
      std::fprintf(stderr, "paratwin: error: no configuration of %lld GPUs fits in memory\n",
                   static_cast<long long>(a->gpus));
      return 1;
    }

    const size_t simulated = std::min<size_t>(static_cast<size_t>(a->simulate), result.ranked.size());
    const auto top = static_cast<size_t>(a->top);
    nlohmann::json sim_results = nlohmann::json::array();
    std::printf("\n  ranked by the analytical model:\n%s",
                predict::ranking_table(result, top, simulated, sim_results).c_str());
    // Before a long simulation starts, the ranking must be on the terminal (or in the pipe) already.
    std::fflush(stdout);
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
      sim_results = predict::simulate_candidates(result, simulated, machine, point, [](const std::string& line) {
        std::fprintf(stderr, "paratwin search: %s\n", line.c_str());
      });
      std::printf("\n  the best %zu simulated with SimGrid (%s fidelity%s):\n%s%s", simulated, choice.fidelity.c_str(),
                  choice.fold ? ", folded" : "", predict::ranking_table(result, top, simulated, sim_results).c_str(),
                  predict::fastest_simulated(result, sim_results).c_str());
    }

    if (!a->json.empty()) {
      std::optional<predict::SearchSimulation> how;
      if (simulated > 0) how = predict::SearchSimulation{choice, a->algorithms};
      write_file_atomically(a->json, predict::search_json(setting, result, how, sim_results).dump(2) + "\n");
    }
    return 0;
  };
}

}  // namespace paratwin::cli
