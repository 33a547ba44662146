#pragma once
// The non-blocking MPI operations of one rank and what makes them progress (Open MPI makes no
// asynchronous progress of its own). Needs MPI_THREAD_MULTIPLE.
//
// Who polls: the compute thread starts operations itself and polls at every op boundary and between
// the slices of a GEMM while something is in flight (a few microseconds, no context switch), and when
// it must wait it polls without pause — its core has nothing else to do. During a long BLAS call a helper thread polls
// now and then: every wake of a second thread on a rank's core costs the GEMM far more than the poll itself (measured
// here: naps of at most 160 us slowed a pipeline's GEMMs by 20 %, of at most 2 ms by 5 %). So the helper polls often
// (naps backing off from kMinSleepUs to kCollectiveSleepUs) only while a collective is in flight — its
// schedule advances round by round, only when polled, and a gradient all-reduce must move during the
// backward pass — and otherwise rarely (kMessageSleepUs): a point-to-point message needs one poll at
// each end, which op boundaries give.
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec/backend.hpp"

namespace paratwin::exec {

struct MpiWork {
  uint32_t op = 0;
  std::string what;                         // for error messages: the op's name and kind
  double start = 0;                         // when the executor handed it over
  std::function<int(MPI_Request*)> launch;  // starts the operation (MPI_I...), returns an MPI error code
  bool collective = false;                  // polled often by the helper while in flight
};

class MpiProgress {
 public:
  // `clock` gives the times reported (the backend's now()).
  explicit MpiProgress(std::function<double()> clock);
  ~MpiProgress();
  MpiProgress(const MpiProgress&) = delete;
  MpiProgress& operator=(const MpiProgress&) = delete;

  // Starts the operation now. Throws std::runtime_error when MPI refuses it.
  void submit(MpiWork work);
  // Polls, then moves the ops that completed into `out`; with `block`, polls until at least one did
  // (when some are in flight). Throws std::runtime_error when an MPI call failed.
  void collect(std::vector<Finished>& out, bool block);
  size_t in_flight() const { return in_flight_.load(); }
  size_t collectives_in_flight() const { return collectives_.load(); }
  // One poll from the compute thread between pieces of its work: moves what completed to the list
  // collect() returns. Errors wait for collect().
  void poll();

 private:
  // With mutex_ held: one MPI_Testsome over the active operations. False when MPI failed (error_ set).
  bool poll_locked();
  void helper();

  std::function<double()> clock_;
  std::mutex mutex_;
  std::condition_variable wake_;  // ends the helper's nap: new work or stop
  std::vector<MpiWork> active_;
  std::vector<MPI_Request> requests_;
  std::vector<int> indices_;
  std::vector<Finished> done_;
  std::string error_;
  std::atomic<size_t> in_flight_{0};
  std::atomic<size_t> collectives_{0};  // of in_flight_
  std::atomic<bool> spinning_{false};   // the compute thread polls in collect(block)
  bool stop_ = false;
  bool fresh_ = false;  // a collective was started since the helper's last poll
  std::thread thread_;
};

}  // namespace paratwin::exec
