#pragma once
// A thread that owns the non-blocking MPI operations of one rank: it starts what the compute thread
// hands it and calls MPI_Testsome until each completes, so collectives and messages progress while
// the compute thread runs BLAS (Open MPI makes no asynchronous progress of its own). Needs
// MPI_THREAD_MULTIPLE.
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <deque>
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
};

class MpiProgress {
 public:
  // `clock` gives the times reported (the backend's now()).
  explicit MpiProgress(std::function<double()> clock);
  ~MpiProgress();
  MpiProgress(const MpiProgress&) = delete;
  MpiProgress& operator=(const MpiProgress&) = delete;

  void submit(MpiWork work);
  // Moves the ops that completed into `out`; blocks until at least one did when `block` is set and
  // some are in flight. Throws std::runtime_error when an MPI call failed.
  void collect(std::vector<Finished>& out, bool block);
  size_t in_flight() const { return in_flight_.load(); }

 private:
  void run();

  std::function<double()> clock_;
  std::mutex mutex_;
  std::condition_variable work_ready_, done_ready_;
  std::deque<MpiWork> queued_;
  std::vector<Finished> done_;
  std::string error_;
  std::atomic<size_t> in_flight_{0};
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace paratwin::exec
