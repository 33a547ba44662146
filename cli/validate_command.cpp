// `paratwin validate`: predicts every published point of the seeds (results/reference) and reports the
// errors. `paratwin baseline check|update`: the regression baselines of predicted scaling.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "calibration/validation.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/report_text.hpp"
#include "predict/kernel_fit.hpp"
#include "predict/reference_points.hpp"
#include "workloads/workload.hpp"

namespace paratwin::cli {

namespace {

namespace fs = std::filesystem;
using calibration::ReferenceSuite;
using calibration::ValidationRow;

struct CommonArgs {
  std::string reference = "results/reference";
  std::vector<std::string> suites;
  std::string machines;
  int jobs = 2;
};

void add_common(CLI::App* cmd, CommonArgs& a) {
  cmd->add_option("--suite", a.suites, "only this reference suite (repeatable; default: every suite)");
  cmd->add_option("--reference", a.reference, "folder of reference suites (format: results/reference/README.md)");
  cmd->add_option("--machines", a.machines,
                  "folder of machine files that replace built-in machines of the same name (NAME.json): what-if "
                  "studies");
  cmd->add_option("--jobs,-j", a.jobs, "points predicted at once (child processes)")->check(CLI::Range(1, 4096));
}

std::vector<ReferenceSuite> selected_suites(const CommonArgs& a) {
  auto all = calibration::load_reference_dir(a.reference);
  if (!a.machines.empty() && !fs::is_directory(a.machines))
    throw InputError("--machines", "= " + a.machines + " is not a folder");
  if (a.suites.empty()) return all;
  std::vector<ReferenceSuite> out;
  for (const auto& name : a.suites) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == name; });
    if (it == all.end()) {
      std::string names;
      for (const auto& s : all) names += (names.empty() ? "" : ", ") + s.name;
      throw InputError("--suite", "= " + name + ": no such suite in " + a.reference + " (" + names + ")");
    }
    out.push_back(*it);
  }
  return out;
}

void print_rows(const std::vector<ReferenceSuite>& suites, const std::vector<ValidationRow>& rows) {
  for (const auto& suite : suites) {
    const auto set = calibration::suite_rows(rows, suite);
    std::printf("\n%s: %s\n  (%s, %s; %s)\n", suite.name.c_str(), suite.title.c_str(), suite.source_label().c_str(),
                suite.where.c_str(), calibration::to_string(suite.metric));
    std::printf("  %-44s %7s %-10s %12s %12s %9s %12s %9s\n", "point", "GPUs", "model", "published", "predicted",
                "error", "analytical", "vs anal.");
    for (const auto* r : set) {
      const auto& p = *r->point;
      const std::string published = p.range ? formatted((*p.range)[0], "%.4g") + "-" + formatted((*p.range)[1], "%.4g")
                                            : formatted(p.published, "%.4g");
      const std::string analytical = r->analytical ? formatted(*r->analytical, "%.4g") : "";
      const auto versus = r->versus_analytical();
      const std::string versus_text = versus ? formatted(100 * *versus, "%+.1f") + "%" : "";
      if (r->predicted)
        std::printf("  %-44s %7lld %-10s %12s %12s %8s%% %12s %9s%s%s\n", p.label.substr(0, 44).c_str(),
                    static_cast<long long>(r->gpus), r->model.c_str(), published.c_str(),
                    formatted(*r->predicted, "%.4g").c_str(), formatted(100 * r->relative_error(), "%+.1f").c_str(),
                    analytical.c_str(), versus_text.c_str(), r->fits ? "" : "  (does not fit in memory)",
                    r->predicted_range ? ("  assumed values give " + formatted((*r->predicted_range)[0], "%.4g") + "-" +
                                          formatted((*r->predicted_range)[1], "%.4g"))
                                             .c_str()
                                       : "");
      else
        std::printf("  %-44s %7lld %-10s %12s %12s %9s %12s %9s  %s\n", p.label.substr(0, 44).c_str(),
                    static_cast<long long>(r->gpus), r->model.c_str(), published.c_str(), "failed", "",
                    analytical.c_str(), "", r->error.c_str());
    }
    const auto s = calibration::error_stats(set);
    std::printf("  suite: %zu points, mean |error| %.1f %%, max %.1f %%%s\n", s.points, 100 * s.mean_abs,
                100 * s.max_abs, s.failed ? (", " + std::to_string(s.failed) + " failed").c_str() : "");
  }
  const auto [e2e, other] = calibration::split_end_to_end(rows);
  const auto a = calibration::error_stats(e2e), b = calibration::error_stats(other);
  std::printf(
      "\nend-to-end points (%% of peak, time or throughput per iteration): %zu, mean |error| %.1f %%, max %.1f %%\n",
      a.points, 100 * a.mean_abs, 100 * a.max_abs);
  if (const auto kept = calibration::held_out(e2e); kept.size() < e2e.size()) {
    const auto k = calibration::error_stats(kept);
    std::printf(
        "end-to-end points without those a profile parameter was fitted to: %zu, mean |error| %.1f %%, max %.1f %%\n",
        k.points, 100 * k.mean_abs, 100 * k.max_abs);
  }
  if (b.points + b.failed > 0)
    std::printf("phases and collective speedups: %zu, mean |error| %.1f %%, max %.1f %%\n", b.points, 100 * b.mean_abs,
                100 * b.max_abs);
}

// --simulate-up-to's default: every point is simulated.
constexpr int64_t kSimulateEveryPoint = std::numeric_limits<int64_t>::max();

struct ValidateArgs {
  CommonArgs common;
  std::string out = "results/validation";
  std::string model = "auto";
  int64_t simulate_up_to = kSimulateEveryPoint;
  std::string plots = "svg";
  std::string fit_machine;  // --fit --machine M
  std::string framework;    // --framework: only this profile
  bool fit = false;
  bool write = false;
};

std::string error_list(const std::vector<ValidationRow>& rows) {
  std::string out;
  for (const auto& r : rows) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * r.relative_error());
    out += "    " + r.suite->name + ": " + r.point->label + "  " + buf + "\n";
  }
  return out;
}

double mean_abs(const std::vector<ValidationRow>& rows) {
  double sum = 0;
  for (const auto& r : rows) sum += std::abs(r.relative_error());
  return rows.empty() ? 0 : 100 * sum / static_cast<double>(rows.size());
}

// Rewrites kernel_efficiency in the profile's file, naming the points it came from.
void write_profile(const std::string& framework, double value, const std::string& machine,
                   const std::vector<ValidationRow>& fitted) {
  const auto path = fs::path("workloads/frameworks") / (framework + ".json");
  if (!fs::exists(path))
    throw InputError("--write", path.string() + " not found: run from the repository's top folder");
  auto doc = nlohmann::ordered_json::parse(read_text_file<InputError>(path.string()));
  std::string names;
  for (const auto& r : fitted) names += (names.empty() ? "" : "; ") + r.suite->name + ": " + r.point->label;
  doc["kernel_efficiency"] = {{"value", value},
                              {"source", "fitted by `paratwin validate --fit --machine " + machine +
                                             "` (least squares on the relative error) to " + names}};
  write_file_atomically(path.string(), doc.dump(2) + "\n");
}

int run_fit(const ValidateArgs& a) {
  const auto suites = selected_suites(a.common);
  const auto gpus = predict::point_gpus(suites);
  std::map<std::string, std::vector<predict::FitPoint>> by_framework;
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      const auto& point = suites[s].points[p];
      if (!suites[s].end_to_end || point.collective || point.machine != a.fit_machine) continue;
      const auto w = workloads::load_workload_file(point.workload);
      if (!a.framework.empty() && w.framework.profile != a.framework) continue;
      by_framework[w.framework.profile].push_back({s, p, point.calibration});
    }
  if (by_framework.empty())
    throw InputError("--machine", "= " + a.fit_machine + ": no end-to-end point of the selected suites runs on it" +
                                      (a.framework.empty() ? "" : " with framework " + a.framework));
  for (const auto& [framework, points] : by_framework) {
    const double before = workloads::builtin_framework(framework).kernel_efficiency;
    std::vector<predict::FitPoint> fit_set, held;
    for (const auto& p : points) (p.calibration ? fit_set : held).push_back(p);
    const bool declared = !fit_set.empty();
    if (!declared) fit_set = points;
    std::printf("\nframework %s on %s: kernel_efficiency %.3f in workloads/frameworks/%s.json\n", framework.c_str(),
                a.fit_machine.c_str(), before, framework.c_str());
    if (!declared)
      std::printf(
          "  no declared calibration point (points[].calibration): fitted to all %zu points; the "
          "leave-one-suite-out figure is the transfer test\n",
          fit_set.size());
    std::fprintf(stderr, "paratwin validate --fit: %s: fitting to %zu point(s)\n", framework.c_str(), fit_set.size());
    predict::ReferenceOptions fit_options;
    fit_options.machines = a.common.machines;
    fit_options.jobs = a.common.jobs;
    predict::KernelEfficiencyFit fitter(suites, gpus, framework, fit_options, a.simulate_up_to);
    const double after = fitter.fit(fit_set, a.model);
    const auto fitted_before = fitter.predict(fit_set, before, a.model);
    const auto fitted_after = fitter.predict(fit_set, after, a.model);
    std::printf("  fitted: %.3f -> %.3f (least squares on the relative error of %zu point(s))\n", before, after,
                fit_set.size());
    std::printf("  the points fitted to, before (mean |error| %.1f %%):\n%s", mean_abs(fitted_before),
                error_list(fitted_before).c_str());
    std::printf("  after (mean |error| %.1f %%):\n%s", mean_abs(fitted_after), error_list(fitted_after).c_str());
    if (declared && !held.empty()) {
      const auto held_before = fitter.predict(held, before, a.model);
      const auto held_after = fitter.predict(held, after, a.model);
      std::printf("  the %zu points not used: mean |error| %.1f %% -> %.1f %%\n%s", held.size(), mean_abs(held_before),
                  mean_abs(held_after), error_list(held_after).c_str());
    }
    // Leave one suite out, with the analytical model (fast): fit to the other suites' points, predict the suite.
    std::map<size_t, std::vector<predict::FitPoint>> by_suite;
    for (const auto& p : points) by_suite[p.suite].push_back(p);
    double loso_sum = 0;
    size_t loso_suites = 0;
    for (const auto& [suite, left_out] : by_suite) {
      std::vector<predict::FitPoint> rest;
      for (const auto& p : points)
        if (p.suite != suite) rest.push_back(p);
      if (rest.empty()) {
        std::printf("  leave-one-suite-out: %s: no other suite to fit to\n", suites[suite].name.c_str());
        continue;
      }
      const double value = fitter.fit(rest, "analytical");
      const double err = mean_abs(fitter.predict(left_out, value, "analytical"));
      std::printf(
          "  leave-one-suite-out: %s predicted with %.3f fitted to the %zu other point(s): mean |error| "
          "%.1f %% (analytical model)\n",
          suites[suite].name.c_str(), value, rest.size(), err);
      loso_sum += err, ++loso_suites;
    }
    if (loso_suites > 0)
      std::printf("  leave-one-suite-out mean over %zu suite(s): %.1f %%\n", loso_suites,
                  loso_sum / static_cast<double>(loso_suites));
    if (a.write && framework == "generic") {
      std::printf(
          "  not written: generic stands for no particular stack on every machine; declare the workloads' "
          "framework profile to fit one\n");
    } else if (a.write) {
      write_profile(framework, after, a.fit_machine, fitted_after);
      std::printf("  wrote workloads/frameworks/%s.json\n", framework.c_str());
    } else {
      std::printf("  (--write puts %.3f into workloads/frameworks/%s.json)\n", after, framework.c_str());
    }
  }
  return 0;
}

int run_validate(const ValidateArgs& a) {
  if (a.fit) return run_fit(a);
  const auto suites = selected_suites(a.common);
  const auto gpus = predict::point_gpus(suites);
  std::vector<predict::ReferenceTask> tasks;
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      std::string model = a.model;
      if (model == "auto") model = gpus[s][p] <= a.simulate_up_to ? "simulate" : "analytical";
      tasks.push_back({s, p, model});
    }
  predict::ReferenceOptions options;
  options.machines = a.common.machines;
  options.jobs = a.common.jobs;
  options.progress = isatty(STDERR_FILENO) != 0;
  options.sensitivity = true;
  std::fprintf(stderr, "paratwin validate: %zu points of %zu suite(s)\n", tasks.size(), suites.size());
  const auto rows = predict::to_rows(suites, gpus, tasks, predict::predict_points(suites, tasks, options));
  print_rows(suites, rows);

  fs::create_directories(a.out);
  std::string command = "paratwin validate";
  for (const auto& s : a.common.suites) command += " --suite " + s;
  if (a.model != "auto") command += " --model " + a.model;
  if (a.model == "auto" && a.simulate_up_to != kSimulateEveryPoint)
    command += " --simulate-up-to " + std::to_string(a.simulate_up_to);
  if (a.out != "results/validation") command += " --out " + a.out;
  write_file_atomically((fs::path(a.out) / "validation.csv").string(), calibration::validation_csv(rows));
  write_file_atomically((fs::path(a.out) / "README.md").string(),
                        calibration::validation_markdown(suites, rows, command));
  if (a.plots == "svg") {
    for (const auto& suite : suites) {
      write_file_atomically(
          (fs::path(a.out) / (suite.name + ".gp")).string(),
          calibration::suite_plot_script(suite, calibration::suite_rows(rows, suite), suite.name + ".svg"));
      const std::string why = run_gnuplot(a.out, suite.name + ".gp");
      if (!why.empty()) {
        std::fprintf(stderr, "paratwin: no plots: %s\n", why.c_str());
        break;
      }
    }
  }
  std::printf("\nwrote %s/validation.csv and README.md%s\n", a.out.c_str(),
              a.plots == "svg" ? " and one plot per suite" : "");
  for (const auto& r : rows)
    if (!r.predicted) return 1;
  return 0;
}

struct BaselineArgs {
  CommonArgs common;
  std::string baselines = "results/baselines";
  double tolerance_percent = 1.0;
  int64_t simulate_up_to = kSimulateEveryPoint;
  bool update = false;
};

int run_baseline(const BaselineArgs& a) {
  const auto suites = selected_suites(a.common);
  const auto gpus = predict::point_gpus(suites);
  // `check` without --simulate-up-to simulates the points whose committed baseline holds a simulation
  // (the committed files may leave the largest points to the analytical model, for CI's time).
  std::map<std::string, calibration::Baseline> committed;
  for (const auto& suite : suites) {
    const auto path = (fs::path(a.baselines) / (suite.name + ".json")).string();
    if (fs::exists(path)) committed[suite.name] = calibration::parse_baseline(read_text_file<InputError>(path), path);
  }
  const auto simulated_before = [&](const std::string& suite, const std::string& label) {
    const auto it = committed.find(suite);
    if (it == committed.end()) return true;
    return std::any_of(it->second.points.begin(), it->second.points.end(),
                       [&](const auto& p) { return p.label == label && p.model == "simulate"; });
  };
  std::vector<predict::ReferenceTask> tasks;
  // A simulated point is predicted analytically beside the simulation, in the same child.
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      bool simulate = gpus[s][p] > 0 && gpus[s][p] <= a.simulate_up_to;
      if (!a.update && a.simulate_up_to == kSimulateEveryPoint)
        simulate = simulate && simulated_before(suites[s].name, suites[s].points[p].label);
      tasks.push_back({s, p, simulate ? "simulate" : "analytical"});
    }
  predict::ReferenceOptions options;
  options.machines = a.common.machines;
  options.jobs = a.common.jobs;
  options.progress = isatty(STDERR_FILENO) != 0;
  std::fprintf(stderr, "paratwin baseline: predicting %zu points of %zu suite(s)\n", tasks.size(), suites.size());
  const auto rows = predict::to_rows(suites, gpus, tasks, predict::predict_points(suites, tasks, options));

  const double tolerance = a.tolerance_percent / 100;
  std::vector<calibration::BaselineChange> all;
  std::map<std::string, calibration::Baseline> now;
  for (const auto& suite : suites) now[suite.name] = {suite.name, calibration::to_string(suite.metric), {}};
  for (const auto& r : rows) {
    auto& points = now[r.suite->name].points;
    points.push_back({r.point->label, "analytical", r.gpus, r.analytical});
    if (r.model == "simulate") points.push_back({r.point->label, "simulate", r.gpus, r.predicted});
  }
  if (a.update) fs::create_directories(a.baselines);
  size_t unchecked = 0;
  for (const auto& suite : suites) {
    const auto path = (fs::path(a.baselines) / (suite.name + ".json")).string();
    calibration::Baseline before{suite.name, calibration::to_string(suite.metric), {}};
    if (const auto it = committed.find(suite.name); it != committed.end()) {
      before = it->second;
      // A check told to simulate less leaves the larger simulated baselines unchecked rather than removed.
      if (!a.update && a.simulate_up_to != kSimulateEveryPoint)
        unchecked += std::erase_if(before.points,
                                   [&](const auto& p) { return p.model == "simulate" && p.gpus > a.simulate_up_to; });
    } else if (!a.update) {
      throw InputError(path, "no baseline for suite " + suite.name + ": run `paratwin baseline update` and commit it");
    }
    for (auto& c : calibration::compare_baselines(before, now[suite.name], tolerance)) all.push_back(c);
    if (a.update) write_file_atomically(path, calibration::baseline_json(now[suite.name]));
  }
  const auto moved = std::count_if(all.begin(), all.end(), [](const auto& c) { return c.beyond; });
  if (a.update) {
    std::vector<calibration::BaselineChange> changed;
    for (const auto& c : all)
      if (c.beyond || c.change != 0) changed.push_back(c);
    if (changed.empty())
      std::printf("baselines unchanged: %zu points of %zu suite(s) in %s\n", all.size(), suites.size(),
                  a.baselines.c_str());
    else
      std::printf("rewrote %s: %zu of %zu points changed (%lld beyond %.3g %%):\n%s", a.baselines.c_str(),
                  changed.size(), all.size(), static_cast<long long>(moved), a.tolerance_percent,
                  calibration::changes_table(changed, false).c_str());
    return 0;
  }
  if (unchecked > 0)
    std::printf("not checked: %zu simulated baselines above --simulate-up-to %lld GPUs\n", unchecked,
                static_cast<long long>(a.simulate_up_to));
  if (moved == 0) {
    std::printf("baselines hold: %zu points of %zu suite(s) within %.3g %% of %s\n", all.size(), suites.size(),
                a.tolerance_percent, a.baselines.c_str());
    return 0;
  }
  std::printf(
      "baselines moved: %lld of %zu points beyond %.3g %% of %s\n%s"
      "If the change is intended, run `paratwin baseline update` and commit %s with it.\n",
      static_cast<long long>(moved), all.size(), a.tolerance_percent, a.baselines.c_str(),
      calibration::changes_table(all, true).c_str(), a.baselines.c_str());
  return 1;
}

}  // namespace

Action add_validate_command(CLI::App& app) {
  auto a = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Predict every measurement the seeds publish (results/reference) and compare: per point and per suite the "
      "published and predicted values and the error, then the mean and max absolute error. Writes validation.csv, "
      "README.md and one plot per suite to --out. Exit status 1 when a point could not be predicted.");
  add_common(cmd, a->common);
  cmd->add_option("--out,-o", a->out, "output folder (default: results/validation)");
  cmd->add_option("--model", a->model,
                  "analytical (closed form), simulate (SimGrid at `paratwin simulate`'s automatic fidelity, with "
                  "the analytical prediction beside it) or auto: simulate up to --simulate-up-to GPUs, analytical "
                  "beyond (default)")
      ->check(CLI::IsMember({"analytical", "simulate", "auto"}));
  cmd->add_option("--simulate-up-to", a->simulate_up_to,
                  "auto: the largest point simulated with SimGrid (default: every point)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 22));
  cmd->add_option("--plots", a->plots, "svg or none")->check(CLI::IsMember({"svg", "none"}));
  auto* fit = cmd->add_flag("--fit", a->fit,
                            "instead of validating: fit the kernel_efficiency of the framework profile(s) used on "
                            "--machine to its declared calibration points (least squares on the relative error; all "
                            "its points when none is declared), print before/after, the error on the points not "
                            "used and a leave-one-suite-out figure (analytical model)");
  cmd->add_option("--machine", a->fit_machine, "--fit: the machine whose points are fitted")->needs(fit);
  cmd->add_option("--framework", a->framework, "--fit: only this framework profile")->needs(fit);
  cmd->add_flag("--write", a->write, "--fit: write the fitted value into workloads/frameworks/PROFILE.json")
      ->needs(fit);
  fit->needs("--machine");
  return [a] { return run_validate(*a); };
}

Action add_baseline_command(CLI::App& app) {
  auto a = std::make_shared<BaselineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "baseline",
      "Regression baselines of predicted scaling (results/baselines): every reference point predicted by the "
      "analytical model and by SimGrid (at `paratwin simulate`'s automatic fidelity; up to --simulate-up-to GPUs "
      "when given). `check` fails (exit 1) with "
      "a table of the points that moved beyond the tolerance; `update` rewrites the files and prints what changed.");
  cmd->require_subcommand(1);
  for (const char* name : {"check", "update"}) {
    CLI::App* sub = cmd->add_subcommand(name, std::string(name) == std::string("check")
                                                  ? "re-predict and compare with the committed baselines"
                                                  : "re-predict and rewrite the baselines, printing the changes");
    add_common(sub, a->common);
    sub->add_option("--baselines", a->baselines, "baseline folder (default: results/baselines)");
    sub->add_option("--tolerance", a->tolerance_percent, "relative change allowed, percent (default 1)")
        ->check(CLI::Range(0.0, 1000.0));
    sub->add_option("--simulate-up-to", a->simulate_up_to,
                    "the largest point also simulated with SimGrid (default: every point for update; for check, the "
                    "points the committed baselines simulated)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 22));
    if (std::string(name) == "update") sub->callback([a] { a->update = true; });
  }
  return [a] { return run_baseline(*a); };
}

}  // namespace paratwin::cli
