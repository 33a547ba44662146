#include "predict/search_emit.hpp"

#include <filesystem>

#include "common/report_text.hpp"

namespace paratwin::predict {

namespace {

bool simulated(const nlohmann::json& simulations, size_t index) {
  return index < simulations.size() && simulations[index].contains("iteration_s");
}

// Letters, digits and dots kept; every other run of characters becomes one '-'.
std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.';
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string emitted_file_name(const sim::SearchResult& result, size_t index) {
  const int width = std::max<int>(2, static_cast<int>(std::to_string(result.ranked.size()).size()));
  const auto& c = result.ranked[index];
  return printed("%0*zu-%s-%s.json", width, index + 1, sim::to_string(c.family), slug(c.label).c_str());
}

workloads::Workload emitted_workload(const SearchSetting& s, const sim::SearchResult& result, size_t index,
                                     const std::optional<SearchSimulation>& simulation,
                                     const nlohmann::json& simulations) {
  const auto& c = result.ranked[index];
  workloads::Workload w = c.workload;
  const std::string file = emitted_file_name(result, index);
  w.name = s.workload + "-search-" + file.substr(0, file.size() - 5);
  std::string times = printed("analytical %.4f s per iteration", c.estimate.iteration);
  if (c.analytical_rank != index + 1) times = printed("analytical rank %zu, ", c.analytical_rank) + times;
  if (simulated(simulations, index))
    times += printed(", simulated %.4f s (%s fidelity%s)", simulations[index]["iteration_s"].get<double>(),
                     simulation ? simulation->choice.fidelity.c_str() : "?",
                     simulation && simulation->choice.fold ? ", folded" : "");
  w.description = printed(
      "Configuration %zu of %zu ranked by `paratwin search` of %s on %lld GPUs of %s (%s, %s model): "
      "%s %s; %s.",
      index + 1, result.ranked.size(), s.workload.c_str(), static_cast<long long>(s.gpus), s.machine.c_str(),
      s.library.c_str(), s.placement_aware ? "placement-aware" : "placement-agnostic", sim::to_string(c.family),
      c.label.c_str(), times.c_str());
  if (!c.workload.description.empty()) w.description += " Base workload: " + c.workload.description;
  if (s.devices_per_node > 0) w.placement.devices_per_node = s.devices_per_node;
  w.source.clear();
  return w;
}

std::vector<std::pair<std::string, std::string>> emitted_files(const std::string& dir, const SearchSetting& setting,
                                                               const sim::SearchResult& result, size_t count,
                                                               const std::optional<SearchSimulation>& simulation,
                                                               const nlohmann::json& simulations) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> files;
  std::string index =
      "rank,file,family,configuration,analytical_seconds,simulated_seconds,gib_per_gpu,analytical_rank\n";
  for (size_t i = 0; i < std::min(count, result.ranked.size()); ++i) {
    const auto& c = result.ranked[i];
    const std::string name = emitted_file_name(result, i);
    const auto w = emitted_workload(setting, result, i, simulation, simulations);
    files.emplace_back((fs::path(dir) / name).string(), workloads::to_json(w).dump(2) + "\n");
    index +=
        printed("%zu,%s,%s,%s,%.6g,%s,%.3f,%zu\n", i + 1, csv_field(name).c_str(), sim::to_string(c.family),
                csv_field(c.label).c_str(), c.estimate.iteration,
                simulated(simulations, i) ? printed("%.6g", simulations[i]["iteration_s"].get<double>()).c_str() : "",
                c.estimate.memory.total() / (1024.0 * 1024.0 * 1024.0), c.analytical_rank);
  }
  files.emplace_back((fs::path(dir) / "index.csv").string(), index);
  return files;
}

}  // namespace paratwin::predict
