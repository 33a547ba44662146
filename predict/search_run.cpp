#include "predict/search_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "common/input_error.hpp"
#include "common/provisional_folder.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "predict/progress_log.hpp"
#include "predict/search_emit.hpp"
#include "predict/search_progress.hpp"
#include "predict/search_report.hpp"
#include "predict/search_rerank.hpp"
#include "sim/search.hpp"
#include "topology/machine.hpp"
#include "workloads/embedded_examples.hpp"

namespace paratwin::predict {

namespace {

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

// What the options name, each checked before the ranking: a bad simulation option fails now, not
// after minutes of ranking.
struct SearchInputs {
  sim::Vary vary;
  workloads::Workload base;
  topology::Machine machine;
  std::string library;
  FidelityChoice choice;
  topology::Topology topology;
};

SearchInputs read_inputs(const SearchRun& a) {
  RunFiles()
      .input("--workload", a.workload)
      .input("--machine", topology::machine_file(a.machine))
      .output("--emit", a.emit.empty() ? "" : (std::filesystem::path(a.emit) / "index.csv").string())
      .output("--json", a.json)
      .check();
  if (!a.json.empty()) check_output_file(a.json, "--json");
  const sim::Vary vary = vary_of(a.vary);
  auto base = workloads::load_workload_or_default(a.workload);
  auto machine = load_machine(a.machine);
  const int64_t nodes = nodes_for(machine, a.gpus);
  if (nodes > machine.network.nodes)
    throw InputError("--gpus", "= " + std::to_string(a.gpus) + " but " + machine.name + " has " +
                                   std::to_string(machine.total_devices()) + " devices");
  const std::string library = library_for(machine, a.library);
  const FidelityChoice choice = choose_search_fidelity(a.gpus, a.fidelity, a.fold);
  parse_algorithms(a.algorithms);
  auto topology = topology_for(machine, a.gpus, library);
  if (const auto why = sim::families_problem(base, families_of(a.family)); !why.empty())
    throw InputError("--family", why);
  return {vary, std::move(base), std::move(machine), library, choice, std::move(topology)};
}

// Every configuration ranked by the analytical model, with its progress on stderr.
sim::SearchResult rank_configurations(const SearchRun& a, const SearchInputs& in) {
  sim::SearchOptions options;
  options.vary = in.vary;
  options.exhaustive = a.exhaustive;
  options.gpus = a.gpus;
  options.families = families_of(a.family);
  options.model.placement_aware = !a.placement_agnostic;
  options.model.library = in.library;
  RankingProgress ranking(!a.no_progress);
  options.progress = [&ranking](const sim::SearchProgress& p) { ranking.update(p); };
  sim::SearchResult result = sim::search(in.base, in.topology, options);  // inputs checked in search_inputs
  ranking.finish(result);
  return result;
}

// A finished search whose one result, the best configuration, does not exist: as a sweep's "best"
// point without a fitting configuration, it fails (exit 3); every input on its own is valid.
void report_nothing_ranked(const SearchRun& a, const SearchSetting& setting, const SearchInputs& in,
                           const sim::SearchResult& result) {
  std::printf("%s\n%s", search_heading(setting, result, a.show_rejected).c_str(),
              nothing_ranked(setting, result, in.base.training.global_batch).c_str());
  if (!a.json.empty())
    write_file_atomically(a.json, search_json(setting, result, std::nullopt, nlohmann::json::array()).dump(2) + "\n");
  std::fprintf(stderr, "paratwin search: no configuration of %lld GPU%s ranked (see above)\n",
               static_cast<long long>(a.gpus), a.gpus == 1 ? "" : "s");
}

// The best `count` simulated with SimGrid, in children, and the ranking re-ranked by their times.
nlohmann::json simulate_best(const SearchRun& a, const SearchInputs& in, sim::SearchResult& result, size_t count) {
  std::fprintf(stderr, "paratwin search: simulating the best %zu with SimGrid: %s\n", count,
               describe(in.choice, a.gpus).c_str());
  PointOptions point;
  point.fidelity = a.fidelity;
  point.fold = a.fold;
  point.fidelity_choice = in.choice;  // the search's own (choose_search_fidelity), not simulate's
  point.library = a.library;
  point.algorithms = a.algorithms;
  point.progress = !a.no_progress && a.gpus > kProgressAboveRanks;
  if (point.progress) point.step = step_log();
  point.warn = print_warning;
  nlohmann::json simulations = simulate_candidates(result, count, in.machine, point, [](const std::string& line) {
    std::fprintf(stderr, "paratwin search: %s\n", line.c_str());
  });
  rerank_by_simulation(result, simulations);
  return simulations;
}

void print_ranking(const SearchRun& a, const SearchSetting& setting, const SearchInputs& in,
                   const sim::SearchResult& result, size_t simulated, const nlohmann::json& simulations) {
  std::printf("%s", search_heading(setting, result, a.show_rejected).c_str());
  if (simulated > 0)
    std::printf(
        "\n  ranked by the analytical model, the best %zu simulated with SimGrid (%s fidelity%s) and re-ranked "
        "by their simulated times:\n",
        simulated, in.choice.fidelity.c_str(), in.choice.fold ? ", folded" : "");
  else
    std::printf("\n  ranked by the analytical model:\n");
  std::printf("%s", ranking_table(result, static_cast<size_t>(a.top), simulations).c_str());
}

// --emit's workload files and index.csv, then --json; none of them may be the base workload. Returns
// how many workload files were emitted.
size_t write_outputs(const SearchRun& a, const SearchSetting& setting, const sim::SearchResult& result,
                     size_t simulated, const std::optional<SearchSimulation>& how, const nlohmann::json& simulations) {
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!a.emit.empty()) {
    // The rows the tables printed: the first --top and every one simulated.
    const auto top = static_cast<size_t>(a.top);
    const size_t rows = a.emit_all ? result.ranked.size() : std::max(std::min(top, result.ranked.size()), simulated);
    outputs = emitted_files(a.emit, setting, result, rows, how, simulations);
  }
  if (!a.json.empty()) outputs.emplace_back(a.json, search_json(setting, result, how, simulations).dump(2) + "\n");
  // The emitted files' names are known now: none may be the base workload.
  RunFiles files;
  files.input("--workload", a.workload);
  for (size_t i = 0; i < outputs.size(); ++i)
    files.output(a.json.empty() || i + 1 < outputs.size() ? "--emit" : "--json", outputs[i].first);
  files.check();
  write_files_atomically(outputs);
  return outputs.size() - (a.json.empty() ? 1 : 2);
}

}  // namespace

bool run_search(const SearchRun& a) {
  const SearchInputs in = read_inputs(a);
  // Inputs first: a bad one leaves no folder, and neither does a search that ranks nothing.
  std::optional<ProvisionalFolder> emit_folder;
  if (!a.emit.empty()) emit_folder.emplace(a.emit, "--emit");
  sim::SearchResult result = rank_configurations(a, in);
  const SearchSetting setting{in.base.name,
                              in.machine.name,
                              in.library,
                              a.gpus,
                              !a.placement_agnostic,
                              in.machine.devices_per_node(),
                              in.base.framework.profile};
  if (result.ranked.empty()) {
    emit_folder.reset();
    report_nothing_ranked(a, setting, in, result);
    return false;
  }
  const size_t simulated = std::min<size_t>(static_cast<size_t>(a.simulate), result.ranked.size());
  nlohmann::json simulations = nlohmann::json::array();
  std::optional<SearchSimulation> how;
  if (simulated > 0) {
    simulations = simulate_best(a, in, result, simulated);
    how = SearchSimulation{in.choice, a.algorithms};
  }
  print_ranking(a, setting, in, result, simulated, simulations);
  const size_t emitted = write_outputs(a, setting, result, simulated, how, simulations);
  if (emit_folder) emit_folder->keep();
  if (!a.emit.empty()) std::printf("\n  wrote %zu workload files and index.csv to %s\n", emitted, a.emit.c_str());
  return true;
}

}  // namespace paratwin::predict
