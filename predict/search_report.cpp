#include "predict/search_report.hpp"

#include <algorithm>
#include <chrono>

#include "common/report_text.hpp"
#include "common/schema_version.hpp"
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
  std::string out = printed("%s on %lld GPUs of %s (%s, %s model, framework %s)\n", s.workload.c_str(),
                            static_cast<long long>(s.gpus), s.machine.c_str(), s.library.c_str(),
                            s.placement_aware ? "placement-aware" : "placement-agnostic", s.stack.c_str());
  out += printed("  %lld valid configurations, %zu do not fit in memory, %zu break a rule of the format",
                 static_cast<long long>(result.enumerated), result.rejected.size(), result.invalid.size());
  if (!result.lacking.empty())
    out += printed(", %zu use what framework %s lacks (not proposed; another framework.profile may run them)",
                   result.lacking.size(), s.stack.c_str());
  out += printed(
      "\n  each ranked by its fastest variant that fits: %lld variants, %lld estimated, %lld skipped as no "
      "faster than one that fits or no smaller than one that does not, %lld break a rule or need what the stack "
      "lacks\n",
      static_cast<long long>(result.variants), static_cast<long long>(result.estimated),
      static_cast<long long>(result.skipped), static_cast<long long>(result.broken));
  return out + dropped("memory ", result.rejected, show_rejected) + dropped("invalid", result.invalid, show_rejected) +
         dropped("stack  ", result.lacking, show_rejected);
}

std::string ranking_table(const sim::SearchResult& result, size_t top, const nlohmann::json& simulations) {
  const size_t simulated = std::min(simulations.size(), result.ranked.size());
  std::string out =
      printed("  %4s %-5s %-34s %14s %14s %12s %10s %9s%s\n", "rank", "family", "configuration", "analytical [s]",
              "simulated [s]", "exposed [s]", "GiB/GPU", "% peak", simulated > 0 ? "  analytical rank" : "");
  const size_t shown = std::min(top, result.ranked.size());
  size_t moved = 0;
  for (size_t i = 0; i < std::max(shown, simulated); ++i) {
    const auto& c = result.ranked[i];
    std::string cell, was;
    double exposed = c.estimate.exposed_comm, peak = c.estimate.percent_of_peak;
    if (i < simulated) {
      const auto& one = simulations[i];
      cell = "failed";
      if (one.contains("iteration_s")) {
        cell = printed("%.4f", one["iteration_s"].get<double>());
        try {
          const Prediction p = prediction_from_json(one);
          exposed = p.exposed_comm_seconds;
          peak = p.percent_of_peak;
        } catch (const std::invalid_argument&) {  // a time alone (tests): the analytical figures stay
        }
      }
      if (c.analytical_rank != i + 1) {
        was = printed("  %zu (moved)", c.analytical_rank);
        ++moved;
      }
    }
    out += printed("  %4zu %-5s %-34s %14.4f %14s %12.4f %10.1f %9.1f%s\n", i + 1, sim::to_string(c.family),
                   c.label.c_str(), c.estimate.iteration, cell.c_str(), exposed, gib(c.estimate.memory.total()), peak,
                   was.c_str());
  }
  if (shown < result.ranked.size()) out += printed("  ... %zu more (--top)\n", result.ranked.size() - shown);
  if (simulated > 0)
    out += printed(
        "  rows 1-%zu were simulated and are ranked by their simulated times (%s); their exposed and %% peak are "
        "the simulation's, the other rows' the analytical model's\n",
        simulated,
        moved == 0 ? "the analytical order held"
                   : printed("%zu moved from the analytical order: see the analytical rank", moved).c_str());
  return out;
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
  j["schema_version"] = kSchemaVersion;  // schemas/search.schema.json
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
                        {"analytical_rank", c.analytical_rank},
                        {"file", emitted_file_name(result, i)},
                        {"analytical", to_json(c.estimate)},
                        {"micro_batch", c.workload.training.micro_batch},
                        {"checkpointing", workloads::to_string(c.workload.training.checkpointing)},
                        {"parallelism", workload["parallelism"]},
                        {"workload", std::move(workload)}};
    if (i < simulations.size()) e["simulated"] = simulations[i];
    j["ranked"].push_back(std::move(e));
  }
  for (const auto* list : {&result.rejected, &result.invalid, &result.lacking})
    for (const auto& r : *list)
      j[list == &result.rejected  ? "out_of_memory"
        : list == &result.invalid ? "invalid"
                                  : "lacking_in_stack"]
          .push_back({{"family", sim::to_string(r.family)}, {"configuration", r.label}, {"reason", r.reason}});
  return j;
}

}  // namespace paratwin::predict
