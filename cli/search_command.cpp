// `paratwin search`: rank every configuration of N GPUs with the analytical model, then simulate the best.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/provisional_folder.hpp"
#include "cli/search_progress.hpp"
#include "cli/simulation_report.hpp"
#include "common/input_error.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "predict/search_emit.hpp"
#include "predict/search_report.hpp"
#include "predict/search_rerank.hpp"
#include "sim/collectives.hpp"
#include "sim/search.hpp"
#include "topology/machine.hpp"
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
  std::string emit;
  bool emit_all = false;
  std::vector<std::string> vary{"all"};
  bool exhaustive = false;
};

// --vary's words: the dimensions searched beyond the family's axes.
sim::Vary vary_of(const std::vector<std::string>& words) {
  static const std::pair<const char*, bool sim::Vary::*> kDimensions[] = {
      {"micro_batch", &sim::Vary::micro_batch},
      {"chunks", &sim::Vary::chunks},
      {"sp", &sim::Vary::sequence_parallel},
      {"checkpointing", &sim::Vary::checkpointing},
      {"zero", &sim::Vary::zero},
      {"context", &sim::Vary::context},
      {"uneven", &sim::Vary::uneven_stages},
      {"expert_folding", &sim::Vary::expert_folding}};
  sim::Vary v = sim::Vary::nothing();
  for (const auto& word : words) {
    if (word == "all") {
      v = {};
    } else if (word == "none") {
      v = sim::Vary::nothing();
    } else {
      const auto* d = std::find_if(std::begin(kDimensions), std::end(kDimensions),
                                   [&](const auto& dimension) { return word == dimension.first; });
      if (d == std::end(kDimensions)) {
        std::string names;
        for (const auto& [name, member] : kDimensions) names += std::string(name) + ", ";
        throw InputError("--vary", "\"" + word + "\" is not a dimension: use " + names + "all or none");
      }
      v.*(d->second) = true;
    }
  }
  return v;
}

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
      "do not fit in memory, and simulate the best few with SimGrid.\n"
      "Each configuration (the family's axes; with a pipeline also the micro-batch and the chunks v) is ranked by its "
      "fastest variant that fits in memory, over the settings that trade memory for time: recomputation (none, sel, "
      "full), ZeRO stage (zeroN), sequence parallelism (sp) and, without a pipeline, the micro-batch. Variants taken "
      "to be no faster than one that fits (more recomputation, a higher ZeRO stage among 1-3, a smaller micro-batch "
      "without a pipeline) or no smaller than one that does not fit are skipped unless --exhaustive. Labels: x, y, z "
      "AxoNN "
      "axes, t tensor, c context, p stages, e experts (ef: whole experts over t·e ranks), d data, mb micro-batch, v "
      "chunks, firstN/lastN an uneven split, +emb+loss the embedding and loss counted as layers.");
  cmd->add_option("--workload,-w", a->workload,
                  "base workload JSON (model, batch, training settings, optimisations; its own parallelism is "
                  "replaced; default: the built-in example)");
  cmd->add_option("--machine,-m", a->machine, "built-in machine name or machine file")->capture_default_str();
  cmd->add_option("--gpus,-n", a->gpus, "number of GPUs to configure")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 22));
  cmd->add_option(
         "--family", a->family,
         "configuration families: 4d (AxoNN x·y·z·data), ptdp (Megatron tensor·context·pipeline·data), ted (MoE "
         "tensor·expert·data), all (those that apply to the model)")
      ->check(CLI::IsMember({"4d", "ptdp", "ted", "all"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "configurations to print")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--simulate", a->simulate,
                  "simulate this many of the best with SimGrid (0: none) and re-rank them by their simulated "
                  "times")
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
                "no progress on stderr: neither the ranking's (a line every few seconds while it lasts) nor the "
                "engine's in those simulations (shown by default above " +
                    std::to_string(predict::kProgressAboveRanks) + " GPUs)");
  cmd->add_option("--library", a->library, "communication library (default: the machine profile's)")
      ->check(CLI::IsMember(topology::communication_libraries()));
  cmd->add_flag("--placement-agnostic", a->placement_agnostic,
                "give every collective one NIC's bandwidth wherever its group sits (the baseline seed 002 §5.1.2 "
                "improves on) instead of loading the machine's links with every group's rings");
  cmd->add_flag("--show-rejected", a->show_rejected, "list every configuration dropped, with the reason");
  cmd->add_option("--vary", a->vary,
                  "what to search beyond the family's axes, comma-separated: micro_batch (powers of two up to "
                  "max(8, the base's)), chunks (PTD-P with p > 1: interleaved with v chunks, p·v dividing the "
                  "layers), sp (sequence parallelism, Megatron t > 1), checkpointing (none, selective, full), zero "
                  "(ZeRO stage 0-3 with data parallelism; 4d up to 2), context (PTD-P context parallelism c where "
                  "the stack runs it and each rank keeps at least 4,096 tokens of the sequence), uneven (PTD-P "
                  "stages that do not divide the layers, split as Megatron-Core does), expert_folding (MoE: whole "
                  "experts over tensor × expert ranks beside TED's split ones), all or none; what is not varied "
                  "keeps the base's value")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--exhaustive", a->exhaustive,
                "estimate every recomputation / ZeRO / sequence-parallel / micro-batch variant of a configuration "
                "instead of skipping those taken to be no faster than one that fits or no smaller than one that "
                "does not");
  cmd->add_option("--json", a->json,
                  "write every ranked (with its whole workload), rejected and invalid configuration as JSON to this "
                  "file");
  auto* emit = cmd->add_option("--emit", a->emit,
                               "write the configurations of the table (the rows printed and simulated) as workload "
                               "files DIR/RANK-FAMILY-LABEL.json (e.g. 001-ptdp-t8-p16-d8-mb1-v3-sp-sel-zero1.json: "
                               "the table's rank, zero-padded to the digits of the number ranked, at least two) that "
                               "`paratwin simulate -w` and `paratwin exec -w` run as they are, and DIR/index.csv "
                               "listing them; a search that ranks nothing makes no folder")
                   ->type_name("DIR");
  cmd->add_flag("--emit-all", a->emit_all, "with --emit: every ranked configuration, not only the table's")
      ->needs(emit);
  return [a]() -> int {
    RunFiles()
        .input("--workload", a->workload)
        .input("--machine", topology::machine_file(a->machine))
        .output("--emit", a->emit.empty() ? "" : (std::filesystem::path(a->emit) / "index.csv").string())
        .output("--json", a->json)
        .check();
    if (!a->json.empty()) check_output_file(a->json, "--json");
    const sim::Vary vary = vary_of(a->vary);
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
    try {
      sim::families_for(base, families_of(a->family));
    } catch (const std::invalid_argument& e) {
      throw InputError("--family", e.what());
    }
    // Inputs first: a bad one leaves no folder, and neither does a search that ranks nothing.
    std::optional<ProvisionalFolder> emit_folder;
    if (!a->emit.empty()) emit_folder.emplace(a->emit, "--emit");
    sim::SearchOptions options;
    options.vary = vary;
    options.exhaustive = a->exhaustive;
    options.gpus = a->gpus;
    options.families = families_of(a->family);
    options.model.placement_aware = !a->placement_agnostic;
    options.model.library = library;
    RankingProgress ranking(!a->no_progress);
    options.progress = [&ranking](const sim::SearchProgress& p) { ranking.update(p); };
    sim::SearchResult result;
    try {
      result = sim::search(base, topology, options);
    } catch (const std::invalid_argument& e) {
      throw InputError("--family", e.what());
    }

    ranking.finish(result);
    const predict::SearchSetting setting{base.name,
                                         machine.name,
                                         library,
                                         a->gpus,
                                         !a->placement_agnostic,
                                         machine.devices_per_node(),
                                         base.framework.profile};
    std::optional<predict::SearchSimulation> how;
    if (result.ranked.empty()) {
      // A finished search whose one result, the best configuration, does not exist: exit 3 as a sweep's
      // "best" point without a fitting configuration fails; every input on its own is valid.
      std::printf("%s\n%s", predict::search_heading(setting, result, a->show_rejected).c_str(),
                  predict::nothing_ranked(setting, result, base.training.global_batch).c_str());
      emit_folder.reset();
      if (!a->json.empty())
        write_file_atomically(a->json,
                              predict::search_json(setting, result, how, nlohmann::json::array()).dump(2) + "\n");
      std::fprintf(stderr, "paratwin search: no configuration of %lld GPU%s ranked (see above)\n",
                   static_cast<long long>(a->gpus), a->gpus == 1 ? "" : "s");
      return kExitSomeFailed;
    }

    const size_t simulated = std::min<size_t>(static_cast<size_t>(a->simulate), result.ranked.size());
    const auto top = static_cast<size_t>(a->top);
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
      sim_results = predict::simulate_candidates(result, simulated, machine, point, [](const std::string& line) {
        std::fprintf(stderr, "paratwin search: %s\n", line.c_str());
      });
      predict::rerank_by_simulation(result, sim_results);
      how = predict::SearchSimulation{choice, a->algorithms};
    }
    std::printf("%s", predict::search_heading(setting, result, a->show_rejected).c_str());
    if (simulated > 0)
      std::printf(
          "\n  ranked by the analytical model, the best %zu simulated with SimGrid (%s fidelity%s) and re-ranked "
          "by their simulated times:\n",
          simulated, choice.fidelity.c_str(), choice.fold ? ", folded" : "");
    else
      std::printf("\n  ranked by the analytical model:\n");
    std::printf("%s", predict::ranking_table(result, top, sim_results).c_str());
    std::vector<std::pair<std::string, std::string>> outputs;
    if (!a->emit.empty()) {
      // The rows the tables printed: the first --top and every one simulated.
      const size_t rows = a->emit_all ? result.ranked.size() : std::max(std::min(top, result.ranked.size()), simulated);
      outputs = predict::emitted_files(a->emit, setting, result, rows, how, sim_results);
    }
    if (!a->json.empty())
      outputs.emplace_back(a->json, predict::search_json(setting, result, how, sim_results).dump(2) + "\n");
    // The emitted files' names are known now: none may be the base workload.
    RunFiles files;
    files.input("--workload", a->workload);
    for (size_t i = 0; i < outputs.size(); ++i)
      files.output(a->json.empty() || i + 1 < outputs.size() ? "--emit" : "--json", outputs[i].first);
    files.check();
    write_files_atomically(outputs);
    if (emit_folder) emit_folder->keep();
    if (!a->emit.empty())
      std::printf("\n  wrote %zu workload files and index.csv to %s\n", outputs.size() - (a->json.empty() ? 1 : 2),
                  a->emit.c_str());
    return 0;
  };
}

}  // namespace paratwin::cli
