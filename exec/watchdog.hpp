#pragma once
// Ends a job that stopped making progress. A rank frozen (stopped, swapped out, stuck in a driver)
// leaves every other rank waiting for it in a collective, a receive or a barrier, forever: MPI has no
// timeout of its own. Each rank runs a watchdog thread; the rank's driver tells it each step it takes
// and, while ops run, which ops it waits on. When `timeout` seconds pass with neither, the watchdog
// calls `expired` with what the rank was waiting on (the driver prints it and aborts the job).
//
// The rule is no progress, not a deadline for the whole run: a job of many iterations is never cut
// short, and the timeout only has to cover the longest single wait (one op; the barrier before an
// iteration, which waits for the slowest rank's previous iteration; the setup).
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::exec {

// The default --timeout: max(kMinTimeout, kTimeoutMargin x the predicted iteration time). One
// iteration bounds every single wait but the setup; the margin covers a model that is off (the CPU
// backend runs far below a machine's nominal peak) and a loaded host, the floor the setup and start-up.
constexpr double kMinTimeout = 60;
constexpr double kTimeoutMargin = 20;
// When the workload cannot be predicted on the machine (a machine too small for it, say).
constexpr double kUnpredictedTimeout = 600;
// `predicted_iteration_seconds` <= 0 (or not finite): not predicted.
double default_timeout(double predicted_iteration_seconds);

class Watchdog {
 public:
  using Expired = std::function<void(const std::string& message)>;
  // Watches `rank` running `program`. `timeout` <= 0: never expires. `expired` runs on the watchdog's
  // thread, at most once; its message names the rank, how long it waited and on what.
  Watchdog(const workloads::Program& program, int64_t rank, double timeout, Expired expired);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The rank starts a step ("prepare", "measured iteration 2 of 3"): progress, and what it waits on
  // until its next step or wait.
  void step(std::string what);
  // Within its current step the rank waits for one of these ops of its role to end (described only if
  // the watchdog expires): progress.
  void waiting(const std::vector<uint32_t>& ops);

  double timeout() const { return timeout_; }

 private:
  void watch();
  std::string message(double waited) const;  // with mutex_ held

  const workloads::Program& program_;
  const int64_t rank_;
  const double timeout_;
  Expired expired_;
  std::mutex mutex_;
  std::condition_variable wake_;  // ends the watchdog's nap early: stop
  bool stop_ = false;
  std::string step_ = "starting";
  std::vector<uint32_t> ops_;
  uint64_t progress_ = 0;
  std::thread thread_;
};

}  // namespace paratwin::exec
