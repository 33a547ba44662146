#pragma once
// `mpirun -np R paratwin exec` on every rank: MPI started, the inputs read and checked (every rank the
// same way, so that all stop together), the watchdog, the backend every rank agrees it can run, the
// measured iterations (or verify mode's checks), the measurements gathered on rank 0, which writes the
// outputs and prints the summary.
#include <string>
#include <utility>
#include <vector>

namespace paratwin::exec {

struct JobOptions {
  std::string workload;
  std::string backend = "cpu";
  std::string machine = "localhost";
  int iterations = 3;
  int warmup = 1;
  std::string trace;
  std::string json;
  std::string fail_at;
  double timeout = -1;  // seconds without progress; negative: exec::default_timeout
  bool verify = false;
  // Options given with --verify that verify mode cannot honour (the option and why), refused as bad input.
  std::vector<std::pair<std::string, std::string>> not_with_verify;
};

// The job's exit status on this rank (common/exit_codes.hpp): 0; 2 bad input; 3 a verify check failed;
// 4 the job failed (a rank that fails while the others wait ends the whole job with MPI_Abort).
int run_job(const JobOptions& a);

}  // namespace paratwin::exec
