// `paratwin validate`: predicts every published point of results/reference (the papers of BIBLIOGRAPHY.md
// and other published runs) and reports the errors. `paratwin baseline check|update`: the regression
// baselines of predicted scaling.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "common/child_process.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/source_tree.hpp"
#include "common/text_file.hpp"
#include "predict/report_guard.hpp"
#include "validation/accuracy_ratchet.hpp"
#include "validation/baselines.hpp"
#include "validation/kernel_fit_report.hpp"
#include "validation/reference_points.hpp"
#include "validation/report.hpp"

namespace paratwin::cli {

namespace {

namespace fs = std::filesystem;
using validation::ReferenceSuite;

struct CommonArgs {
  std::string reference;  // empty: results/reference of paratwin's sources (common/source_tree.hpp)
  std::vector<std::string> suites;
  std::string machines;
  int jobs = 2;
};

void add_common(CLI::App* cmd, CommonArgs& a) {
  cmd->add_option("--suite", a.suites, "only this reference suite (repeatable; default: every suite)");
  cmd->add_option("--reference", a.reference,
                  "folder of reference suites (format: results/reference/README.md; default: results/reference of "
                  "the sources paratwin was built from, found from any folder)");
  cmd->add_option("--machines", a.machines,
                  "folder of machine files that replace built-in machines of the same name (NAME.json): how far "
                  "an edited machine moves every reference point (for one workload's what-if, `paratwin compare "
                  "--machines DIR` prints both runs side by side)");
  cmd->add_option("--jobs,-j", a.jobs, "points predicted at once (child processes)")->check(CLI::Range(1, 4096));
}

std::vector<ReferenceSuite> selected_suites(const CommonArgs& a) {
  const std::string reference = a.reference.empty() ? source_path("results/reference") : a.reference;
  auto all = validation::load_reference_dir(reference);
  if (!a.machines.empty()) validation::check_machine_folder(a.machines);
  return validation::select_reference_suites(std::move(all), a.suites, reference);
}

validation::ReferenceOptions reference_options(const CommonArgs& a) {
  validation::ReferenceOptions options;
  options.machines = a.machines;
  options.jobs = a.jobs;
  return options;
}

using validation::kSimulateEveryPoint;

struct ValidateArgs {
  CommonArgs common;
  // In the current folder: the committed report (results/validation) is rewritten only when asked for.
  std::string out = "validation";
  std::string model = "auto";
  int64_t simulate_up_to = kSimulateEveryPoint;
  std::string plots = "svg";
  std::string fit_machine;  // --fit --machine M
  std::string framework;    // --framework: only this profile
  bool fit = false;
  bool write = false;
};

int run_fit(const ValidateArgs& a) {
  const auto suites = selected_suites(a.common);
  const auto gpus = validation::point_gpus(suites);
  for (const auto& [framework, points] : validation::fit_points(suites, a.fit_machine, a.framework)) {
    const auto fit = validation::plan_fit(framework, a.fit_machine, points);
    std::printf("%s", validation::fit_heading(fit).c_str());
    std::fprintf(stderr, "paratwin validate --fit: %s: fitting to %zu point(s)\n", framework.c_str(),
                 fit.fit_set.size());
    validation::KernelEfficiencyFit fitter(suites, gpus, framework, reference_options(a.common), a.simulate_up_to);
    const auto outcome = validation::run_fit(suites, fitter, fit, a.model,
                                             [](const std::string& text) { std::printf("%s", text.c_str()); });
    if (a.write && !fit.declared) {
      // Fitted to every point, the profile would then be judged on the points it was fitted to.
      std::printf(
          "  not written: no point of this framework on %s is a declared calibration point "
          "(points[].calibration); its kernel_efficiency stays sourced\n",
          a.fit_machine.c_str());
    } else if (a.write && framework == "generic") {
      std::printf(
          "  not written: generic stands for no particular stack on every machine; declare the workloads' "
          "framework profile to fit one\n");
    } else if (a.write) {
      const auto path = source_path("workloads/frameworks/" + framework + ".json");
      if (!fs::exists(path))
        throw InputError("--write", path + " not found: the sources paratwin was built from are needed");
      write_file_atomically(path,
                            validation::profile_with_kernel_efficiency(read_text_file<InputError>(path), outcome.after,
                                                                       a.fit_machine, outcome.fitted_after));
      std::printf("  wrote %s\n", path.c_str());
    } else {
      std::printf("  (--write puts %.3f into workloads/frameworks/%s.json)\n", outcome.after, framework.c_str());
    }
  }
  return 0;
}

int run_validate(const ValidateArgs& a) {
  if (a.fit) return run_fit(a);
  const auto suites = selected_suites(a.common);
  std::vector<std::string> names;
  for (const auto& suite : suites) names.push_back(suite.name);
  predict::refuse_partial_report(a.out, names, "--out");
  prepare_output_folder(a.out, "--out");  // inputs first: a bad one leaves no folder behind
  const auto gpus = validation::point_gpus(suites);
  const auto tasks = validation::reference_tasks(suites, gpus, a.model, a.simulate_up_to);
  auto options = reference_options(a.common);
  options.progress = isatty(STDERR_FILENO) != 0;
  options.sensitivity = true;
  std::fprintf(stderr, "paratwin validate: %zu points of %zu suite(s)\n", tasks.size(), suites.size());
  const auto rows = validation::to_rows(suites, gpus, tasks, validation::predict_points(suites, tasks, options));
  std::printf("%s", validation::validation_text(suites, rows).c_str());

  std::string command = "paratwin validate";
  for (const auto& s : a.common.suites) command += " --suite " + s;
  if (a.model != "auto") command += " --model " + a.model;
  if (a.model == "auto" && a.simulate_up_to != kSimulateEveryPoint)
    command += " --simulate-up-to " + std::to_string(a.simulate_up_to);
  if (a.out != "validation") command += " --out " + a.out;
  std::vector<std::pair<std::string, std::string>> outputs{
      {(fs::path(a.out) / "validation.csv").string(), validation::validation_csv(rows)},
      {(fs::path(a.out) / "README.md").string(), validation::validation_markdown(suites, rows, command)}};
  if (a.plots == "svg")
    for (const auto& suite : suites)
      outputs.emplace_back(
          (fs::path(a.out) / (suite.name + ".gp")).string(),
          validation::suite_plot_script(suite, validation::suite_rows(rows, suite), suite.name + ".svg"));
  write_files_atomically(outputs);
  if (a.plots == "svg") {
    for (const auto& suite : suites) {
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
    if (!r.predicted) return kExitSomeFailed;
  return 0;
}

struct BaselineArgs {
  CommonArgs common;
  validation::BaselineOptions options;
  bool accept_worse_accuracy = false;
};

int run_baseline(const BaselineArgs& a) {
  const auto suites = selected_suites(a.common);
  if (a.options.update) prepare_output_folder(a.options.dir, "--baselines");
  if (a.options.update)
    for (const auto& suite : suites) check_output_file(validation::baseline_file(a.options.dir, suite.name));
  if (a.options.update) check_output_file(validation::accuracy_file(a.options.dir));
  const auto gpus = validation::point_gpus(suites);
  const auto committed = validation::committed_baselines(suites, a.options.dir);
  const auto tasks = validation::baseline_tasks(suites, gpus, committed, a.options);
  auto options = reference_options(a.common);
  options.progress = isatty(STDERR_FILENO) != 0;
  std::fprintf(stderr, "paratwin baseline: predicting %zu points of %zu suite(s)\n", tasks.size(), suites.size());
  const auto rows = validation::to_rows(suites, gpus, tasks, validation::predict_points(suites, tasks, options));
  const auto now = validation::baselines_of(suites, rows);
  const auto comparison = validation::compare_with_committed(suites, committed, now, a.options);
  auto report_options = a.options;
  report_options.machines = a.common.machines;
  if (a.options.update) {
    // The accuracy ratchet: an update may not make a suite worse against the published values unless told.
    const auto bar = validation::committed_accuracy(a.options.dir);
    const auto accuracy = validation::accuracy_of(suites, now);
    std::vector<validation::RatchetBreach> worse;
    for (const auto& b : validation::ratchet_breaches(bar, accuracy))
      if (b.figure != "missing") worse.push_back(b);
    const auto ratchet = validation::accuracy_file(a.options.dir);
    if (!worse.empty() && !a.accept_worse_accuracy) {
      std::printf("%s", validation::ratchet_report(worse, accuracy.size(), ratchet).c_str());
      std::printf("Nothing was written.\n");
      return kExitSomeFailed;
    }
    // Every suite's file and the ratchet, or none: a failure on one leaves the folder as it was.
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& suite : suites)
      files.emplace_back(validation::baseline_file(a.options.dir, suite.name),
                         validation::baseline_json(now.at(suite.name)));
    files.emplace_back(ratchet,
                       validation::accuracy_json(validation::lowered_bar(bar, accuracy, a.accept_worse_accuracy)));
    write_files_atomically(files);
    std::printf("%s", validation::baseline_report(comparison, report_options).c_str());
    if (!worse.empty())
      std::printf("accepted worse accuracy (--accept-worse-accuracy): %zu figure(s) raised in %s\n", worse.size(),
                  ratchet.c_str());
    return 0;
  }
  std::printf("%s", validation::baseline_report(comparison, report_options).c_str());
  return comparison.moved() == 0 ? 0 : kExitSomeFailed;
}

}  // namespace

Action add_validate_command(CLI::App& app) {
  auto a = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Predict every published measurement of results/reference (each suite cites its paper, a BIBLIOGRAPHY.md key, "
      "or names its publication) and compare: per point and per suite the "
      "published and predicted values and the error, then the mean and max absolute error. Writes validation.csv, "
      "README.md and one plot per suite to --out. Exit status 3 when a point could not be predicted.");
  add_common(cmd, a->common);
  cmd->add_option("--out,-o", a->out,
                  "output folder (default: validation in the current folder; the committed report is "
                  "results/validation). A folder holding a report of suites this run does not validate is refused");
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
      "when given). `check` fails (exit 3) with "
      "a table of the points that moved beyond the tolerance; `update` rewrites the files and prints what changed.");
  cmd->require_subcommand(1);
  for (const char* name : {"check", "update"}) {
    CLI::App* sub = cmd->add_subcommand(name, std::string(name) == std::string("check")
                                                  ? "re-predict and compare with the committed baselines"
                                                  : "re-predict and rewrite the baselines, printing the changes");
    add_common(sub, a->common);
    sub->add_option("--baselines", a->options.dir, "baseline folder (default: results/baselines)");
    sub->add_option("--tolerance", a->options.tolerance_percent, "relative change allowed, percent (default 1)")
        ->check(CLI::Range(0.0, 1000.0));
    sub->add_option("--simulate-up-to", a->options.simulate_up_to,
                    "the largest point also simulated with SimGrid (default: every point for update; for check, the "
                    "points the committed baselines simulated)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 22));
    if (std::string(name) == "update") {
      sub->add_flag("--accept-worse-accuracy", a->accept_worse_accuracy,
                    "write the baselines even if a suite's error against the published values grew beyond its "
                    "figure in BASELINES/accuracy.json, and raise that figure (without it such an update writes "
                    "nothing, exit 3)");
      sub->callback([a] { a->options.update = true; });
    }
  }
  return [a] { return run_baseline(*a); };
}

}  // namespace paratwin::cli
