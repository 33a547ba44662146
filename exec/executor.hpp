#pragma once
// Runs one rank's op list for real, iteration after iteration, on a Backend, driving the op walker
// the simulator drives (workloads/op_walker.hpp): the same schedule rules and the same idle ledger, so
// that measured and predicted breakdowns mean the same thing.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/backend.hpp"
#include "exec/watchdog.hpp"
#include "workloads/op_walker.hpp"

namespace paratwin::exec {

struct ExecOptions {
  int iterations = 3;  // measured
  int warmup = 1;      // run first, not measured
  // Fault injection (tests): rank `fail_rank` fails when it starts the op named `fail_op` in the first
  // measured iteration.
  int64_t fail_rank = -1;
  std::string fail_op;
};

// A failure of one rank, naming it and the op; the driver turns it into a job-wide abort.
class ExecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where the compute stream's time went in one iteration: the op walker's ledger.
using Breakdown = workloads::IdleTimes;

struct CollectiveTime {
  int64_t count = 0;
  double bytes = 0;
  double seconds = 0;  // start to end, summed
  double exposed = 0;  // compute-stream waits charged to these collectives
};

struct RankResult {
  std::vector<double> iterations;  // seconds from the iteration's start (after a barrier) to this rank's last op
  // Of the last measured iteration:
  Breakdown breakdown;
  std::vector<workloads::OpEvent> events;  // every op, times from the iteration's start
  std::map<std::pair<int, workloads::AxisMask>, CollectiveTime> collectives;  // by (OpKind, group)
};

// Runs `rank`'s role of `program` (MPI_COMM_WORLD rank == Program rank; MPI initialised with
// MPI_THREAD_MULTIPLE; backend.prepare already called). Collective over MPI_COMM_WORLD (a barrier
// starts each iteration). Throws ExecError naming the rank and op when one fails. A watchdog, when
// given, is told each iteration and barrier and, before each wait, the ops in flight.
RankResult run_rank(const workloads::Program& program, int64_t rank, Backend& backend, const ExecOptions& options,
                    Watchdog* watchdog = nullptr);

}  // namespace paratwin::exec
