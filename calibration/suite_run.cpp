#include "calibration/suite_run.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "calibration/comparison_text.hpp"
#include "calibration/suite.hpp"
#include "calibration/suite_report.hpp"
#include "common/child_process.hpp"
#include "common/text_file.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace paratwin::calibration {

namespace fs = std::filesystem;

namespace {

void print_no_plot(const std::string& why) {
  std::fprintf(stderr, "paratwin: %s\n", why.c_str());
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

}  // namespace

void compare_workload(CompareRun a) {
  a.launch.mpirun = installed_launcher(a.launcher);
  a.launch.paratwin = self_executable();
  if (a.job.ranks <= 0) {
    const auto program = workloads::lower(workloads::load_workload_file(a.job.workload));
    a.job.ranks = program.grid.size();
  }
  if (a.job.out.empty()) a.job.out = "calibration-" + fs::path(a.job.workload).stem().string();
  prepare_output_folder(a.job.out, "--out");
  std::printf("comparing %s on %lld ranks of %s (%s backend), profile %s\n", a.job.workload.c_str(),
              static_cast<long long>(a.job.ranks), a.launch.machine.c_str(), a.launch.backend.c_str(),
              a.job.profile.c_str());
  std::fflush(stdout);
  const auto c = run_comparison(a.launch, a.job, print_no_plot);
  std::printf("%s", comparison_text(c).c_str());
  std::printf("  report                %s/comparison.md, comparison.csv, bars.svg, timeline.png\n", a.job.out.c_str());
}

int run_suite(const SuiteRun& a) {
  Suite suite = load_suite(a.file);
  Launch launch;
  launch.mpirun = installed_launcher(a.launcher);
  launch.paratwin = self_executable();
  launch.machine = suite.machine;
  launch.backend = suite.backend;
  launch.timeout = a.timeout;
  const fs::path out = a.out.empty() ? fs::path("results/calibration") / suite.name : fs::path(a.out);
  const auto counts = suite.rank_counts();
  const size_t steps = counts.size() + suite.entries.size();
  size_t step = 0;
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::vector<SuiteResult> results;
  std::map<int64_t, std::string> profiles;
  try {
    prepare_output_folder(out.string(), "--out");
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
      const auto c = run_comparison(launch, job, print_no_plot);
      std::printf("measured %.4g s, predicted %.4g s, %+.1f %% (%.0f s elapsed)\n", c.measured_median, c.predicted,
                  100 * c.error(), elapsed());
      results.push_back({entry, c});
    }
  } catch (const std::exception&) {
    std::printf("\n");  // the progress line the run was on
    throw;
  }

  // The report: every file written whole, after every run succeeded.
  write_file_atomically((out / "suite.csv").string(), suite_csv(results));
  write_file_atomically((out / "classes.csv").string(), suite_classes_csv(results));
  write_file_atomically((out / "iteration.gp").string(), suite_bars_script(suite, results, "iteration.svg"));
  const std::string plot = run_gnuplot(out.string(), "iteration.gp");
  if (!plot.empty()) std::fprintf(stderr, "paratwin: no plot: %s\n", plot.c_str());
  write_file_atomically((out / "README.md").string(), suite_readme(suite, results, a.out, today()));
  const int outside = outside_tolerance(suite, results);
  std::printf("report %s/README.md: %zu workloads, %d outside %.0f %% (%.0f s)\n", out.c_str(), results.size(), outside,
              100 * suite.tolerance, elapsed());
  return outside;
}

}  // namespace paratwin::calibration
