#pragma once
// What `calibrate compare` and `calibrate suite` run: micro-benchmarks and workloads under mpirun,
// simulations in child processes (SimGrid allows one engine per process), each with its own log.
#include <string>
#include <vector>

#include "calibration/compare.hpp"

namespace paratwin::cli {

struct Launch {
  std::vector<std::string> mpirun = {"mpirun", "--oversubscribe"};  // the launcher, before -np
  std::string machine = "localhost";
  std::string backend = "cpu";
};

// "mpirun --oversubscribe" → its words; throws InputError (naming --mpirun) when empty.
std::vector<std::string> split_launcher(const std::string& text);

// `mpirun -np R paratwin calibrate micro --workload W... --out PROFILE` (the workloads' GEMM shapes timed
// one by one); log next to it. Throws std::runtime_error
// with the log's last lines when it fails.
void run_micro_benchmarks(const Launch& launch, int64_t ranks, int repeats, const std::vector<std::string>& workloads,
                          const std::string& profile, const std::string& log);

struct CompareJob {
  std::string workload, profile;
  int64_t ranks = 2;
  int iterations = 10, warmup = 2;
  std::string out;  // folder of the report; the runs' files go to out/run/
};

// Executes the workload, simulates it with the profile, compares, and writes comparison.md,
// comparison.csv, bars.gp/.svg and timeline.gp/.png into job.out (plots when gnuplot is there).
// Throws std::runtime_error (with the failing run's log) or InputError.
calibration::Comparison run_comparison(const Launch& launch, const CompareJob& job);

}  // namespace paratwin::cli

namespace paratwin::cli {

struct CompareArgs {
  CompareJob job;
  Launch launch;
  std::string launcher = "mpirun --oversubscribe";
};
// `paratwin calibrate compare`: one workload, report in job.out. Returns the exit status.
int calibrate_compare(CompareArgs a);

struct SuiteArgs {
  std::string file;
  std::string out;  // default: results/calibration/<suite name>
  std::string launcher = "mpirun --oversubscribe";
};
// `paratwin calibrate suite`: profiles for every rank count, then every workload compared; the report
// (README.md, CSVs, plots) in `out`. Exit status 0 when every prediction is within the suite's
// tolerance, 1 when one is not or a run failed.
int calibrate_suite(const SuiteArgs& a);

}  // namespace paratwin::cli
