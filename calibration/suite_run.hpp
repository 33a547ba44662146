#pragma once
// `paratwin calibrate compare` and `paratwin calibrate suite` from start to end: the runs of runs.hpp in
// order, a line as each starts and ends, and a suite's report written once every run has succeeded.
#include <string>

#include "calibration/runs.hpp"

namespace paratwin::calibration {

struct CompareRun {
  CompareJob job;
  Launch launch;
  std::string launcher = "mpirun --oversubscribe";
};
// One workload executed and simulated, the report in job.out (default: calibration-WORKLOAD). Throws
// when a run fails or an input is bad.
void compare_workload(CompareRun a);

struct SuiteRun {
  std::string file;
  std::string out;  // default: results/calibration/<suite name>
  std::string launcher = "mpirun --oversubscribe";
  double timeout = -1;  // exec's --timeout; negative: its default
};
// Profiles for every rank count, then every workload compared; the report (README.md, CSVs, plots) in
// `out`. Returns how many predictions are outside the suite's tolerance; throws when a run fails (after
// ending the progress line it was on) or an input is bad.
int run_suite(const SuiteRun& a);

}  // namespace paratwin::calibration
