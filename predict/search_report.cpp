#include "predict/search_report.hpp"

#include <algorithm>
#include <chrono>

#include "common/report_text.hpp"
#include "predict/prediction.hpp"
#include "predict/search_emit.hpp"

namespace paratwin::predict {

namespace {

double gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

std::string dropped(const char* what, const std::vector<sim::Rejected>& list, bool all) {
  const size_t shown = all ? list.size() : std::min<size_t>(list.size(), 3);
  std::string out;
  for (size_t i = 0; i < shown; ++i)
    out += printed("    %s %-5s %-32s %s\n", what, sim::to_string(list[i].family), list[i].label.c_str(),
                   list[i].reason.c_str());
  if (shown < list.size()) out += printed("    ... %zu more (--show-rejected lists them)\n", list.size() - shown);
  return out;
}

}  // namespace

std::string search_heading(const SearchSetting& s, const sim::SearchResult& result, bool show_rejected) {
  std::string out =
      printed("%s on %lld GPUs of %s (%s, %s model)\n", s.workload.c_str(), static_cast<long long>(s.gpus),
              s.machine.c_str(), s.library.c_str(), s.placement_aware ? "placement-aware" : "placement-agnostic");
  out += printed("  %lld valid configurations, %zu do not fit in memory, %zu break a rule of the format\n",
                 static_cast<long long>(result.enumerated), result.rejected.size(), result.invalid.size());
  out += printed(
      "  each ranked by its fastest variant that fits: %lld variants, %lld estimated, %lld skipped as no "
      "faster than one that fits or no smaller than one that does not, %lld break a rule\n",
      static_cast<long long>(result.variants), static_cast<long long>(result.estimated),
      static_cast<long long>(result.skipped), static_cast<long long>(result.broken));
  return out + dropped("memory ", result.rejected, show_rejected) + dropped("invalid", result.invalid, show_rejected);
}

std::string ranking_table(const sim::SearchResult& result, size_t top, size_t simulated,
                          const nlohmann::json& simulations) {
  std::string out = printed("  %4s %-5s %-34s %14s %14s %12s %10s %9s\n", "rank", "family", "configuration",
                            "analytical [s]", "simulated [s]", "exposed [s]", "GiB/GPU", "% peak");
  const size_t shown = std::min(top, result.ranked.size());
  for (size_t i = 0; i < std::max(shown, simulated); ++i) {
    const auto& c = result.ranked[i];
    std::string cell;
    if (i < simulations.size())
      cell = simulations[i].contains("iteration_seconds")
                 ? printed("%.4f", simulations[i]["iteration_seconds"].get<double>())
                 : "failed";
    else if (i < simulated)
      cell = "pending";
    out += printed("  %4zu %-5s %-34s %14.4f %14s %12.4f %10.1f %9.1f\n", i + 1, sim::to_string(c.family),
                   c.label.c_str(), c.estimate.iteration, cell.c_str(), c.estimate.exposed_comm,
                   gib(c.estimate.memory.total()), c.estimate.percent_of_peak);
  }
  if (shown < result.ranked.size()) out += printed("  ... %zu more (--top)\n", result.ranked.size() - shown);
  return out;
}

std::string fastest_simulated(const sim::SearchResult& result, const nlohmann::json& simulations) {
  size_t best = simulations.size();
  for (size_t i = 0; i < simulations.size(); ++i) {
    if (!simulations[i].contains("iteration_seconds")) continue;
    if (best == simulations.size() ||
        simulations[i]["iteration_seconds"].get<double>() < simulations[best]["iteration_seconds"].get<double>())
      best = i;
  }
  if (best == simulations.size()) return "";
  return printed("  fastest simulated: rank %zu, %s %s, %.4f s per iteration\n", best + 1,
                 sim::to_string(result.ranked[best].family), result.ranked[best].label.c_str(),
                 simulations[best]["iteration_seconds"].get<double>());
}

nlohmann::json simulate_candidates(const sim::SearchResult& result, size_t count, const topology::Machine& machine,
                                   const PointOptions& options,
                                   const std::function<void(const std::string&)>& progress) {
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  nlohmann::json simulations = nlohmann::json::array();
  const auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < count; ++i) {
    const auto& c = result.ranked[i];
    progress(printed("simulating %zu of %zu: %s %s (%.0f s elapsed)", i + 1, count, sim::to_string(c.family),
                     c.label.c_str(), since(started)));
    const auto one = std::chrono::steady_clock::now();
    try {
      const auto p = predict_in_child(c.workload, machine, options);
      progress(printed("simulated %zu of %zu in %.1f s: %.4g s per iteration (analytical %.4g s)", i + 1, count,
                       since(one), p.iteration_seconds, c.estimate.iteration));
      simulations.push_back(to_json(p));
    } catch (const std::exception& e) {
      progress(printed("simulating %s failed: %s", c.label.c_str(), e.what()));
      simulations.push_back({{"error", e.what()}});
    }
  }
  return simulations;
}

nlohmann::json search_json(const SearchSetting& s, const sim::SearchResult& result,
                           const std::optional<SearchSimulation>& simulation, const nlohmann::json& simulations) {
  nlohmann::json j;
  j["workload"] = s.workload;
  j["machine"] = s.machine;
  j["gpus"] = s.gpus;
  j["library"] = s.library;
  j["placement_aware"] = s.placement_aware;
  if (simulation)
    j["simulation"] = {{"fidelity", simulation->choice.fidelity},
                       {"fold", simulation->choice.fold},
                       {"fidelity_chosen_by", simulation->choice.why},
                       {"algorithms", simulation->algorithms}};
  j["valid"] = result.enumerated;
  j["variants"] = {{"total", result.variants},
                   {"estimated", result.estimated},
                   {"skipped", result.skipped},
                   {"broken", result.broken}};
  j["ranked"] = nlohmann::json::array();
  for (size_t i = 0; i < result.ranked.size(); ++i) {
    const auto& c = result.ranked[i];
    auto workload = workloads::to_json(emitted_workload(s, result, i, simulation, simulations));
    nlohmann::json e = {{"rank", i + 1},
                        {"family", sim::to_string(c.family)},
                        {"configuration", c.label},
                        {"file", emitted_file_name(result, i)},
                        {"analytical", to_json(c.estimate)},
                        {"micro_batch", c.workload.training.micro_batch},
                        {"checkpointing", workloads::to_string(c.workload.training.checkpointing)},
                        {"parallelism", workload["parallelism"]},
                        {"workload", std::move(workload)}};
    if (i < simulations.size()) e["simulated"] = simulations[i];
    j["ranked"].push_back(std::move(e));
  }
  for (const auto* list : {&result.rejected, &result.invalid})
    for (const auto& r : *list)
      j[list == &result.rejected ? "out_of_memory" : "invalid"].push_back(
          {{"family", sim::to_string(r.family)}, {"configuration", r.label}, {"reason", r.reason}});
  return j;
}

}  // namespace paratwin::predict
