#pragma once
// The runs behind a comparison of predicted with measured times (`calibrate compare` and `calibrate
// suite`): the micro-benchmarks and the workload under mpirun, and its simulation, each a `paratwin`
// subcommand in a child process (SimGrid allows one engine per process) with its own log.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibration/compare.hpp"

namespace paratwin::calibration {

struct Launch {
  std::vector<std::string> mpirun = {"mpirun", "--oversubscribe"};  // the launcher, before -np
  std::string paratwin = "paratwin";  // the executable whose subcommands run (the CLI gives itself)
  std::string machine = "localhost";
  std::string backend = "cpu";
  double timeout = -1;  // exec's --timeout (seconds without progress); negative: exec's own default
};

// "mpirun --oversubscribe" → its words; throws InputError (naming --mpirun) when empty.
std::vector<std::string> split_launcher(const std::string& text);
// The same, also refused when its program is not on the PATH: said before anything runs.
std::vector<std::string> installed_launcher(const std::string& text);

// `mpirun -np R paratwin calibrate micro --workload W... --out PROFILE` (the workloads' GEMM shapes timed
// one by one), its output in `log`. Throws JobFailed (a std::runtime_error) with the log's last lines when it fails.
void run_micro_benchmarks(const Launch& launch, int64_t ranks, int repeats, const std::vector<std::string>& workloads,
                          const std::string& profile, const std::string& log);

struct CompareJob {
  std::string workload, profile;
  int64_t ranks = 2;
  int iterations = 10, warmup = 2;
  std::string out;  // folder of the report; the runs' files go to out/run/
};

// Executes the workload, simulates it with the profile, compares, and writes comparison.md,
// comparison.csv, bars.gp/.svg and timeline.gp/.png into job.out; a plot that gnuplot cannot draw is
// told to `no_plot` ("no plot: why"). Throws JobFailed (with the failing run's log) or
// InputError.
Comparison run_comparison(const Launch& launch, const CompareJob& job,
                          const std::function<void(const std::string&)>& no_plot);

}  // namespace paratwin::calibration
