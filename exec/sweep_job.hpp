#pragma once
// `paratwin sweep` on every rank: the spec read, its points, and the sweep run where it is launched:
// alone, or under mpirun with rank 0 journaling every row and writing the outputs while each worker runs
// its share of the points (sweep_mpi.hpp), every rank watching the others (sweep_liveness.hpp).
#include <string>

namespace paratwin::exec {

struct SweepJob {
  std::string spec;
  std::string out;
  int jobs = 0;
  bool restart = false;
  bool retry_failed = false;
  std::string plots = "svg";
  double point_timeout = -1;  // negative: each point's default
  bool no_progress = false;
};

// The exit status (common/exit_codes.hpp): 0 every point succeeded, 3 some failed. Alone, or on rank 0,
// an input error is thrown (InputError); across ranks any other failure ends the whole job.
int run_sweep_job(const SweepJob& a);

}  // namespace paratwin::exec
