#include "validation/baselines.hpp"

#include <algorithm>
#include <filesystem>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/report_text.hpp"

namespace paratwin::validation {

std::string baseline_file(const std::string& dir, const std::string& suite) {
  return (std::filesystem::path(dir) / (suite + ".json")).string();
}

std::map<std::string, Baseline> committed_baselines(const std::vector<ReferenceSuite>& suites, const std::string& dir) {
  std::map<std::string, Baseline> committed;
  for (const auto& suite : suites) {
    const auto path = baseline_file(dir, suite.name);
    if (!std::filesystem::exists(path)) continue;
    auto b = parse_baseline(read_text_file<InputError>(path), path);
    if (b.suite != suite.name)
      throw InputError(path + ": suite",
                       "= \"" + b.suite + "\" but this file holds the baseline of suite \"" + suite.name + "\"");
    if (b.metric != to_string(suite.metric))
      throw InputError(path + ": metric",
                       "= \"" + b.metric + "\" but suite " + suite.name + " measures " + to_string(suite.metric));
    committed[suite.name] = std::move(b);
  }
  return committed;
}

std::vector<ReferenceTask> baseline_tasks(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                          const std::map<std::string, Baseline>& committed,
                                          const BaselineOptions& options) {
  const auto simulated_before = [&](const std::string& suite, const std::string& label) {
    const auto it = committed.find(suite);
    if (it == committed.end()) return true;
    return std::any_of(it->second.points.begin(), it->second.points.end(),
                       [&](const auto& p) { return p.label == label && p.model == "simulate"; });
  };
  std::vector<ReferenceTask> tasks;
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      bool simulate = gpus[s][p] > 0 && gpus[s][p] <= options.simulate_up_to;
      if (!options.update && options.simulate_up_to == kSimulateEveryPoint)
        simulate = simulate && simulated_before(suites[s].name, suites[s].points[p].label);
      tasks.push_back({s, p, simulate ? "simulate" : "analytical"});
    }
  return tasks;
}

std::map<std::string, Baseline> baselines_of(const std::vector<ReferenceSuite>& suites,
                                             const std::vector<ValidationRow>& rows) {
  std::map<std::string, Baseline> now;
  for (const auto& suite : suites) now[suite.name] = {suite.name, to_string(suite.metric), {}};
  for (const auto& r : rows) {
    auto& points = now[r.suite->name].points;
    points.push_back({r.point->label, "analytical", r.gpus, r.analytical});
    if (r.model == "simulate") points.push_back({r.point->label, "simulate", r.gpus, r.predicted});
  }
  return now;
}

size_t BaselineComparison::moved() const {
  return static_cast<size_t>(std::count_if(changes.begin(), changes.end(), [](const auto& c) { return c.beyond; }));
}

BaselineComparison compare_with_committed(const std::vector<ReferenceSuite>& suites,
                                          const std::map<std::string, Baseline>& committed,
                                          const std::map<std::string, Baseline>& now, const BaselineOptions& options) {
  BaselineComparison out;
  out.suites = suites.size();
  for (const auto& suite : suites) {
    Baseline before{suite.name, to_string(suite.metric), {}};
    if (const auto it = committed.find(suite.name); it != committed.end()) {
      before = it->second;
      // A check told to simulate less leaves the larger simulated baselines unchecked rather than removed.
      if (!options.update && options.simulate_up_to != kSimulateEveryPoint)
        out.unchecked += std::erase_if(
            before.points, [&](const auto& p) { return p.model == "simulate" && p.gpus > options.simulate_up_to; });
    } else if (!options.update) {
      throw InputError(baseline_file(options.dir, suite.name),
                       "no baseline for suite " + suite.name + ": run `paratwin baseline update` and commit it");
    }
    for (auto& c : compare_baselines(before, now.at(suite.name), options.tolerance_percent / 100))
      out.changes.push_back(c);
  }
  return out;
}

std::string baseline_report(const BaselineComparison& c, const BaselineOptions& options) {
  const auto moved = static_cast<long long>(c.moved());
  const char* dir = options.dir.c_str();
  if (options.update) {
    std::vector<BaselineChange> changed;
    for (const auto& change : c.changes)
      if (change.beyond || change.change != 0) changed.push_back(change);
    if (changed.empty())
      return printed("baselines unchanged: %zu points of %zu suite(s) in %s\n", c.changes.size(), c.suites, dir);
    return printed("rewrote %s: %zu of %zu points changed (%lld beyond %.3g %%):\n", dir, changed.size(),
                   c.changes.size(), moved, options.tolerance_percent) +
           changes_table(changed, false);
  }
  std::string out;
  if (c.unchecked > 0)
    out += printed("not checked: %zu simulated baselines above --simulate-up-to %lld GPUs\n", c.unchecked,
                   static_cast<long long>(options.simulate_up_to));
  if (moved == 0)
    return out + printed("baselines hold: %zu points of %zu suite(s) within %.3g %% of %s\n", c.changes.size(),
                         c.suites, options.tolerance_percent, dir);
  return out +
         printed("baselines moved: %lld of %zu points beyond %.3g %% of %s\n", moved, c.changes.size(),
                 options.tolerance_percent, dir) +
         changes_table(c.changes, true) +
         (options.machines.empty()
              ? printed("If the change is intended, run `paratwin baseline update` and commit %s with it.\n", dir)
              : printed("These are what the machines of %s move (baseline: the built-in machines; now: %s's). For a "
                        "what-if study, `paratwin compare --machines %s -w WORKLOAD -m MACHINE` prints both runs side "
                        "by side.\n",
                        options.machines.c_str(), options.machines.c_str(), options.machines.c_str()));
}

}  // namespace paratwin::validation
