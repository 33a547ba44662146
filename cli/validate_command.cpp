// `paratwin validate`: predicts every published point of the seeds (results/reference) and reports the
// errors. `paratwin baseline check|update`: the regression baselines of predicted scaling.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "calibration/validation.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "cli/validate_predict.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/report_text.hpp"
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

// GPUs of every point, [suite][point]: the collective's, or the workload's ranks (0 when the workload
// cannot be read: its prediction then fails with the reader's message). Read once: they choose the
// model and label the rows.
using PointGpus = std::vector<std::vector<int64_t>>;
PointGpus point_gpus(const std::vector<ReferenceSuite>& suites) {
  PointGpus out;
  for (const auto& suite : suites) {
    auto& gpus = out.emplace_back();
    for (const auto& p : suite.points) {
      if (p.collective) {
        gpus.push_back(p.collective->gpus);
        continue;
      }
      try {
        gpus.push_back(workloads::load_workload_file(p.workload).total_ranks());
      } catch (const std::exception&) {
        gpus.push_back(0);
      }
    }
  }
  return out;
}

// The analytical model's prediction of a row's point: its own for an analytical row, the one made beside
// the simulation for a simulated row.
std::optional<double> analytical_value(const ValidationRow& r, const nlohmann::json& prediction) {
  if (r.model == "analytical") return r.predicted;
  const auto side = prediction.find("analytical");
  if (side == prediction.end() || !(*side)["value"].is_number()) return std::nullopt;
  return (*side)["value"].get<double>();
}

std::vector<ValidationRow> to_rows(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                   const std::vector<PredictionTask>& tasks,
                                   const std::vector<nlohmann::json>& predictions) {
  std::vector<ValidationRow> rows;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    const auto& p = predictions[i];
    ValidationRow r;
    r.suite = &suites[t.suite];
    r.point = &suites[t.suite].points[t.point];
    r.model = t.model;
    r.gpus = gpus[t.suite][t.point];
    r.configuration = p.value("configuration", "");
    r.fits = p.value("fits", true);
    if (p["status"] == "ok" && p["value"].is_number()) {
      r.predicted = p["value"].get<double>();
      r.iteration = p["iteration_s"].get<double>();
    } else {
      r.error = p.value("error", "failed");
    }
    r.analytical = analytical_value(r, p);
    rows.push_back(std::move(r));
  }
  return rows;
}

void print_rows(const std::vector<ReferenceSuite>& suites, const std::vector<ValidationRow>& rows) {
  for (const auto& suite : suites) {
    const auto set = calibration::suite_rows(rows, suite);
    std::printf("\n%s: %s\n  (%s, %s; %s)\n", suite.name.c_str(), suite.title.c_str(), suite.seed.c_str(),
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
        std::printf("  %-44s %7lld %-10s %12s %12s %8s%% %12s %9s%s\n", p.label.substr(0, 44).c_str(),
                    static_cast<long long>(r->gpus), r->model.c_str(), published.c_str(),
                    formatted(*r->predicted, "%.4g").c_str(), formatted(100 * r->relative_error(), "%+.1f").c_str(),
                    analytical.c_str(), versus_text.c_str(), r->fits ? "" : "  (does not fit in memory)");
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
};

int run_validate(const ValidateArgs& a) {
  const auto suites = selected_suites(a.common);
  const auto gpus = point_gpus(suites);
  std::vector<PredictionTask> tasks;
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      std::string model = a.model;
      if (model == "auto") model = gpus[s][p] <= a.simulate_up_to ? "simulate" : "analytical";
      tasks.push_back({s, p, model});
    }
  PredictOptions options;
  options.machines = a.common.machines;
  options.jobs = a.common.jobs;
  options.progress = isatty(STDERR_FILENO) != 0;
  std::fprintf(stderr, "paratwin validate: %zu points of %zu suite(s)\n", tasks.size(), suites.size());
  const auto rows = to_rows(suites, gpus, tasks, predict_points(suites, tasks, options));
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
  const auto gpus = point_gpus(suites);
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
  std::vector<PredictionTask> tasks;
  // A simulated point is predicted analytically beside the simulation, in the same child.
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p) {
      bool simulate = gpus[s][p] > 0 && gpus[s][p] <= a.simulate_up_to;
      if (!a.update && a.simulate_up_to == kSimulateEveryPoint)
        simulate = simulate && simulated_before(suites[s].name, suites[s].points[p].label);
      tasks.push_back({s, p, simulate ? "simulate" : "analytical"});
    }
  PredictOptions options;
  options.machines = a.common.machines;
  options.jobs = a.common.jobs;
  options.progress = isatty(STDERR_FILENO) != 0;
  std::fprintf(stderr, "paratwin baseline: predicting %zu points of %zu suite(s)\n", tasks.size(), suites.size());
  const auto rows = to_rows(suites, gpus, tasks, predict_points(suites, tasks, options));

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
