#pragma once
// Under mpirun, each rank of a sweep waits on the others: workers on rank 0 (which journals their rows
// and says when to finish), rank 0 on every worker's rows. A rank stopped (SIGSTOP) or stuck held the
// job forever. Every rank beats once a second from its loop (which never blocks: points run in
// children) and listens for the others; one silent for longer than the limit ends the job (MPI_Abort,
// exit status 4) with a message naming it. The journal keeps every row that arrived: a rerun resumes.
#include <chrono>
#include <map>

#include "exec/sweep_mpi.hpp"

namespace paratwin::exec {

class RankLiveness {
 public:
  // The limit for a `point_timeout` (--point-timeout, seconds; <= 0: the default): a rank's loop only
  // pauses to start a point or journal a row, so a silent rank is stopped or stuck well before its
  // points would time out.
  static double silence_limit(double point_timeout);

  // `exit_status`: the status every rank ends with when one is silent too long.
  RankLiveness(const SweepComm& comm, double silence_seconds, int exit_status);
  // Beats (once a second), hears the others, and ends the job when one has been silent too long.
  void tick();

 private:
  using Clock = std::chrono::steady_clock;
  const SweepComm& comm_;
  double silence_;
  int exit_status_;
  Clock::time_point last_beat_, last_tick_;
  std::map<int, Clock::time_point> heard_;  // a worker: rank 0; rank 0: every worker
};

}  // namespace paratwin::exec
