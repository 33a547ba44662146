// `paratwin calibrate compare` and `paratwin calibrate suite` (issue 7): predicted versus measured.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "calibration/suite.hpp"
#include "cli/calibrate_runs.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace paratwin::cli {

namespace fs = std::filesystem;

namespace {

void print_comparison(const calibration::Comparison& c) {
  std::printf("  iteration             predicted %.4g s, measured %.4g s (median of %zu), error %+.1f %%\n",
              c.predicted, c.measured_median, c.measured.size(), 100 * c.error());
  std::printf("  %-22s %13s %13s %9s\n", "op class (per rank)", "predicted [s]", "measured [s]", "error");
  for (const auto& r : c.classes)
    if (std::isfinite(r.error()))
      std::printf("  %-22s %13.4g %13.4g %+8.1f%%\n", r.name.c_str(), r.predicted, r.measured, 100 * r.error());
    else
      std::printf("  %-22s %13.4g %13.4g %9s\n", r.name.c_str(), r.predicted, r.measured, "-");
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

}  // namespace

int calibrate_compare(CompareArgs a) {
  try {
    a.launch.mpirun = split_launcher(a.launcher);
    if (a.job.ranks <= 0) {
      const auto program = workloads::lower(workloads::load_workload_file(a.job.workload));
      a.job.ranks = program.grid.size();
    }
    if (a.job.out.empty()) a.job.out = "calibration-" + fs::path(a.job.workload).stem().string();
    std::printf("comparing %s on %lld ranks of %s (%s backend), profile %s\n", a.job.workload.c_str(),
                static_cast<long long>(a.job.ranks), a.launch.machine.c_str(), a.launch.backend.c_str(),
                a.job.profile.c_str());
    std::fflush(stdout);
    const auto c = run_comparison(a.launch, a.job);
    print_comparison(c);
    std::printf("  report                %s/comparison.md, comparison.csv, bars.svg, timeline.png\n",
                a.job.out.c_str());
  } catch (const InputError& e) {
    std::cerr << "paratwin: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "paratwin: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int calibrate_suite(const SuiteArgs& a) {
  calibration::Suite suite;
  Launch launch;
  try {
    suite = calibration::load_suite(a.file);
    launch.mpirun = split_launcher(a.launcher);
  } catch (const InputError& e) {
    std::cerr << "paratwin: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  launch.machine = suite.machine;
  launch.backend = suite.backend;
  const fs::path out = a.out.empty() ? fs::path("results/calibration") / suite.name : fs::path(a.out);
  const auto counts = suite.rank_counts();
  const size_t steps = counts.size() + suite.entries.size();
  size_t step = 0;
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::vector<calibration::SuiteResult> results;
  std::map<int64_t, std::string> profiles;
  try {
    fs::create_directories(out / "profiles");
    for (int64_t ranks : counts) {
      const std::string name = "profile-" + std::to_string(ranks) + "ranks";
      profiles[ranks] = (out / "profiles" / (name + ".json")).string();
      std::printf("[%zu/%zu] micro-benchmarks on %lld ranks -> %s\n", ++step, steps, static_cast<long long>(ranks),
                  profiles[ranks].c_str());
      std::fflush(stdout);
      std::vector<std::string> workloads;
      for (const auto& e : suite.entries)
        if (e.ranks == ranks) workloads.push_back(e.workload);
      run_micro_benchmarks(launch, ranks, suite.repeats, workloads, profiles[ranks],
                           (out / "profiles" / (name + ".log")).string());
    }
    for (const auto& entry : suite.entries) {
      CompareJob job;
      job.workload = entry.workload;
      job.profile = profiles[entry.ranks];
      job.ranks = entry.ranks;
      job.iterations = suite.iterations;
      job.warmup = suite.warmup;
      job.out = (out / fs::path(entry.workload).stem()).string();
      std::printf("[%zu/%zu] %s (%s, %lld ranks): ", ++step, steps, fs::path(entry.workload).stem().c_str(),
                  entry.label.c_str(), static_cast<long long>(entry.ranks));
      std::fflush(stdout);
      const auto c = run_comparison(launch, job);
      std::printf("measured %.4g s, predicted %.4g s, %+.1f %% (%.0f s elapsed)\n", c.measured_median, c.predicted,
                  100 * c.error(), elapsed());
      results.push_back({entry, c});
    }
  } catch (const InputError& e) {
    std::printf("\n");
    std::cerr << "paratwin: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::printf("\n");
    std::cerr << "paratwin: error: " << e.what() << "\n";
    return 1;
  }

  // The report: every file written whole, after every run succeeded.
  std::string classes = "workload,ranks,class,predicted_seconds,measured_seconds,relative_error\n";
  for (const auto& r : results) {
    const std::string csv = calibration::comparison_csv(r.comparison);
    classes += csv.substr(csv.find('\n') + 1);
  }
  write_file_atomically((out / "suite.csv").string(), calibration::suite_csv(results));
  write_file_atomically((out / "classes.csv").string(), classes);
  write_file_atomically((out / "iteration.gp").string(),
                        calibration::suite_bars_script(suite, results, "iteration.svg"));
  const std::string plot = run_gnuplot(out.string(), "iteration.gp");
  if (!plot.empty()) std::fprintf(stderr, "paratwin: no plot: %s\n", plot.c_str());

  int outside = 0;
  for (const auto& r : results) outside += std::fabs(r.comparison.error()) > suite.tolerance ? 1 : 0;
  std::ostringstream md;
  md << "# Calibration suite `" << suite.name << "`: predicted versus measured\n\n";
  if (!suite.description.empty()) md << suite.description << "\n\n";
  md << "Regenerate (this folder, profiles included) with one command from the repository root:\n\n```\n"
     << "paratwin calibrate suite " << suite.file << (a.out.empty() ? "" : " --out " + a.out) << "\n```\n\n";
  md << "Measured " << today() << " on " << suite.machine << " with the " << suite.backend
     << " backend: " << suite.iterations << " iterations after " << suite.warmup
     << " warm-up per workload. Profiles were fitted on the micro-benchmarks only (`calibrate micro`, " << suite.repeats
     << " repeats, one profile per rank count, in `profiles/`); no parameter was fitted on the workload runs "
        "compared here.\n\n";
  md << "![predicted versus measured](iteration.svg)\n\n";
  md << calibration::suite_markdown_table(suite, results) << "\n";
  if (outside == 0)
    md << "Every prediction is within " << 100 * suite.tolerance << " % of the measured median.\n\n";
  else
    md << "Predictions outside " << 100 * suite.tolerance << " % of the measured median: " << outside << " of "
       << results.size() << ".\n\n";
  md << "Files: `suite.csv` (this table), `classes.csv` (per op class), `iteration.gp` (the plot's script, data "
        "inline); per workload a folder with `comparison.md`, `comparison.csv`, `bars.svg` (per op class) and "
        "`timeline.png` (measured above predicted); its `run/` subfolder (not committed) holds the runs' summaries, "
        "traces and logs.\n\n## Per workload\n\n";
  for (const auto& r : results) {
    const std::string name = fs::path(r.entry.workload).stem().string();
    md << calibration::comparison_markdown(r.comparison) << "\n![" << name << " per op class](" << name
       << "/bars.svg)\n![" << name << " timelines](" << name << "/timeline.png)\n\n";
  }
  write_file_atomically((out / "README.md").string(), md.str());
  std::printf("report %s/README.md: %zu workloads, %d outside %.0f %% (%.0f s)\n", out.c_str(), results.size(), outside,
              100 * suite.tolerance, elapsed());
  return outside == 0 ? 0 : 1;
}

}  // namespace paratwin::cli
