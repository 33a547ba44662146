#include "calibration/runs.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "calibration/suite.hpp"
#include "common/child_process.hpp"
#include "common/input_error.hpp"
#include "common/job_failed.hpp"
#include "common/json_file.hpp"
#include "common/text_file.hpp"

namespace paratwin::calibration {

namespace fs = std::filesystem;

namespace {

// Runs argv with its output in `log`; throws with the log's end when it fails.
void run_or_throw(const std::vector<std::string>& argv, const std::string& log, const std::string& what) {
  const int status = run_logged(argv, log);
  if (status == 0) return;
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  std::string why = what + " failed (exit status " + std::to_string(status) + "): " + command + "\n";
  if (status == 127 && find_on_path(argv[0]).empty())
    why += "  " + argv[0] + " is not on the PATH\n";
  else
    why += "  last lines of " + log + ":\n" + tail_of(log, 12);
  throw JobFailed(why);
}

nlohmann::json read_json(const std::string& path) {
  return parse_json<InputError>(read_text_file<InputError>(path), path);
}

std::vector<std::string> with_ranks(const Launch& launch, int64_t ranks) {
  auto argv = launch.mpirun;
  argv.insert(argv.end(), {"-np", std::to_string(ranks), launch.paratwin});
  return argv;
}

}  // namespace

std::vector<std::string> split_launcher(const std::string& text) {
  std::istringstream words(text);
  std::vector<std::string> out;
  for (std::string w; words >> w;) out.push_back(w);
  if (out.empty()) throw InputError("--mpirun", "is empty: give the launcher, e.g. \"mpirun --oversubscribe\"");
  return out;
}

std::vector<std::string> installed_launcher(const std::string& text) {
  auto out = split_launcher(text);
  if (find_on_path(out[0]).empty())
    throw InputError("--mpirun", "= \"" + text + "\": " + out[0] + " is not on the PATH");
  return out;
}

void run_micro_benchmarks(const Launch& launch, int64_t ranks, int repeats, const std::vector<std::string>& workloads,
                          const std::string& profile, const std::string& log) {
  auto argv = with_ranks(launch, ranks);
  argv.insert(argv.end(), {"calibrate", "micro", "--backend", launch.backend, "--machine", launch.machine, "--repeats",
                           std::to_string(repeats), "--out", profile});
  for (const auto& w : workloads) argv.insert(argv.end(), {"--workload", w});
  run_or_throw(argv, log, "the micro-benchmarks on " + std::to_string(ranks) + " ranks");
}

Comparison run_comparison(const Launch& launch, const CompareJob& job,
                          const std::function<void(const std::string&)>& no_plot) {
  const fs::path out(job.out), run = fs::path(job.out) / "run";
  fs::create_directories(run);
  const auto file = [&](const char* name) { return (run / name).string(); };

  // Measured: the workload rank by rank. Predicted: the same workload, simulated with the profile.
  auto exec = with_ranks(launch, job.ranks);
  exec.insert(exec.end(), {"exec", "--workload", job.workload, "--machine", launch.machine, "--backend", launch.backend,
                           "--iterations", std::to_string(job.iterations), "--warmup", std::to_string(job.warmup),
                           "--json", file("measured.json"), "--trace", file("measured-trace.json")});
  if (launch.timeout >= 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", launch.timeout);
    exec.insert(exec.end(), {"--timeout", seconds});
  }
  run_or_throw(exec, file("exec.log"), "executing " + job.workload + " on " + std::to_string(job.ranks) + " ranks");
  run_or_throw(
      {launch.paratwin, "simulate", "--workload", job.workload, "--machine", launch.machine, "--profile", job.profile,
       "--json", file("predicted.json"), "--trace", file("predicted-trace.json"), "--trace-ranks", "all"},
      file("simulate.log"), "simulating " + job.workload);

  const auto predicted_trace = read_json(file("predicted-trace.json"));
  const auto measured_trace = read_json(file("measured-trace.json"));
  auto c = compare_runs(read_json(file("predicted.json")), predicted_trace, read_json(file("measured.json")),
                        measured_trace, file("predicted.json"), file("measured.json"));
  write_file_atomically((out / "comparison.md").string(),
                        comparison_markdown(c) + "\nProfile: `" + job.profile + "`.\n");
  write_file_atomically((out / "comparison.csv").string(), comparison_csv(c));
  write_file_atomically((out / "bars.gp").string(), class_bars_script(c, "bars.svg"));
  // The timeline script carries every op of both runs: a run file, not part of the report.
  write_file_atomically((run / "timeline.gp").string(),
                        timeline_script(c, predicted_trace, measured_trace, "../timeline.png"));
  for (const auto& [dir, script] : {std::pair{out.string(), "bars.gp"}, std::pair{run.string(), "timeline.gp"}})
    if (const auto why = run_gnuplot(dir, script); !why.empty()) no_plot("no plot: " + why);
  return c;
}

}  // namespace paratwin::calibration
