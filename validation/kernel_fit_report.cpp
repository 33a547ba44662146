#include "validation/kernel_fit_report.hpp"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/input_error.hpp"
#include "common/report_text.hpp"
#include "workloads/workload.hpp"

namespace paratwin::validation {

namespace {

std::string error_list(const std::vector<ValidationRow>& rows) {
  std::string out;
  for (const auto& r : rows)
    out += "    " + r.suite->name + ": " + r.point->label + "  " + printed("%+.1f %%", 100 * r.relative_error()) + "\n";
  return out;
}

double mean_abs(const std::vector<ValidationRow>& rows) {
  double sum = 0;
  for (const auto& r : rows) sum += std::abs(r.relative_error());
  return rows.empty() ? 0 : 100 * sum / static_cast<double>(rows.size());
}

}  // namespace

std::map<std::string, std::vector<FitPoint>> fit_points(const std::vector<ReferenceSuite>& suites,
                                                        const std::string& machine, const std::string& framework) {
  std::map<std::string, std::vector<FitPoint>> by_framework;
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      const auto& point = suites[s].points[p];
      // A built-in machine by name, a machine file by its path or by its file's name without .json.
      const bool on_it = point.machine == machine || (point.machine.size() > 5 && point.machine.ends_with(".json") &&
                                                      std::filesystem::path(point.machine).stem().string() == machine);
      if (!suites[s].end_to_end || point.collective || !on_it) continue;
      const auto w = workloads::load_workload_file(point.workload);
      if (!framework.empty() && w.framework.profile != framework) continue;
      by_framework[w.framework.profile].push_back({s, p, point.calibration});
    }
  if (by_framework.empty())
    throw InputError("--machine", "= " + machine + ": no end-to-end point of the selected suites runs on it" +
                                      (framework.empty() ? "" : " with framework " + framework));
  return by_framework;
}

FrameworkFit plan_fit(const std::string& framework, const std::string& machine, const std::vector<FitPoint>& points) {
  FrameworkFit fit;
  fit.framework = framework;
  fit.machine = machine;
  fit.before = workloads::builtin_framework(framework).kernel_efficiency;
  fit.points = points;
  for (const auto& p : points) (p.calibration ? fit.fit_set : fit.held).push_back(p);
  fit.declared = !fit.fit_set.empty();
  if (!fit.declared) fit.fit_set = points;
  return fit;
}

std::string fit_heading(const FrameworkFit& fit) {
  std::string out = printed("\nframework %s on %s: kernel_efficiency %.3f in workloads/frameworks/%s.json\n",
                            fit.framework.c_str(), fit.machine.c_str(), fit.before, fit.framework.c_str());
  if (!fit.declared)
    out += printed(
        "  no declared calibration point (points[].calibration): fitted to all %zu points; the "
        "leave-one-suite-out figure is the transfer test\n",
        fit.fit_set.size());
  return out;
}

FitOutcome run_fit(const std::vector<ReferenceSuite>& suites, KernelEfficiencyFit& fitter, const FrameworkFit& fit,
                   const std::string& model, const std::function<void(const std::string&)>& say) {
  FitOutcome out;
  out.after = fitter.fit(fit.fit_set, model);
  const auto fitted_before = fitter.predict(fit.fit_set, fit.before, model);
  out.fitted_after = fitter.predict(fit.fit_set, out.after, model);
  say(printed("  fitted: %.3f -> %.3f (least squares on the relative error of %zu point(s))\n", fit.before, out.after,
              fit.fit_set.size()) +
      printed("  the points fitted to, before (mean |error| %.1f %%):\n", mean_abs(fitted_before)) +
      error_list(fitted_before) + printed("  after (mean |error| %.1f %%):\n", mean_abs(out.fitted_after)) +
      error_list(out.fitted_after));
  if (fit.declared && !fit.held.empty()) {
    const auto held_before = fitter.predict(fit.held, fit.before, model);
    const auto held_after = fitter.predict(fit.held, out.after, model);
    say(printed("  the %zu points not used: mean |error| %.1f %% -> %.1f %%\n", fit.held.size(), mean_abs(held_before),
                mean_abs(held_after)) +
        error_list(held_after));
  }
  std::map<size_t, std::vector<FitPoint>> by_suite;
  for (const auto& p : fit.points) by_suite[p.suite].push_back(p);
  double sum = 0;
  size_t counted = 0;
  for (const auto& [suite, left_out] : by_suite) {
    std::vector<FitPoint> rest;
    for (const auto& p : fit.points)
      if (p.suite != suite) rest.push_back(p);
    const char* name = suites[suite].name.c_str();
    if (rest.empty()) {
      say(printed("  leave-one-suite-out: %s: no other suite to fit to\n", name));
      continue;
    }
    const double value = fitter.fit(rest, "analytical");
    const double error = mean_abs(fitter.predict(left_out, value, "analytical"));
    say(
        printed("  leave-one-suite-out: %s predicted with %.3f fitted to the %zu other point(s): mean |error| "
                "%.1f %% (analytical model)\n",
                name, value, rest.size(), error));
    sum += error, ++counted;
  }
  if (counted > 0)
    say(printed("  leave-one-suite-out mean over %zu suite(s): %.1f %%\n", counted,
                sum / static_cast<double>(counted)));
  return out;
}

std::string profile_with_kernel_efficiency(const std::string& profile_text, double value, const std::string& machine,
                                           const std::vector<ValidationRow>& fitted) {
  auto doc = nlohmann::ordered_json::parse(profile_text);
  std::string names;
  for (const auto& r : fitted) names += (names.empty() ? "" : "; ") + r.suite->name + ": " + r.point->label;
  doc["kernel_efficiency"] = {{"value", value},
                              {"source", "fitted by `paratwin validate --fit --machine " + machine +
                                             "` (least squares on the relative error) to " + names}};
  return doc.dump(2) + "\n";
}

}  // namespace paratwin::validation
