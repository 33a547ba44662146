#pragma once
// `paratwin calibrate compare` and `paratwin calibrate suite`: their arguments and what they run, the
// runs themselves in calibration/runs.hpp.
#include <string>

#include "calibration/runs.hpp"

namespace paratwin::cli {

struct CompareArgs {
  calibration::CompareJob job;
  calibration::Launch launch;
  std::string launcher = "mpirun --oversubscribe";
};
// `paratwin calibrate compare`: one workload, report in job.out. Returns the exit status.
int calibrate_compare(CompareArgs a);

struct SuiteArgs {
  std::string file;
  std::string out;  // default: results/calibration/<suite name>
  std::string launcher = "mpirun --oversubscribe";
  double timeout = -1;  // exec's --timeout; negative: its default
};
// `paratwin calibrate suite`: profiles for every rank count, then every workload compared; the report
// (README.md, CSVs, plots) in `out`. Exit status 0 when every prediction is within the suite's
// tolerance, 1 when one is not or a run failed.
int calibrate_suite(const SuiteArgs& a);

}  // namespace paratwin::cli
