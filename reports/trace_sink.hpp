#pragma once
// What a run tells a trace while it runs, so that a trace is written as the run goes instead of being
// gathered whole at the end: which ranks are traced, each op's start and end, and the compute stream's
// waits as the op walker's ledger charges them (so a trace's idle slices and a report's breakdown are
// the same numbers). The simulator calls it in simulated-time order; chrome_trace() replays a
// measured run's events through it in time order too.
#include <cstdint>
#include <vector>

#include "reports/trace.hpp"
#include "workloads/op_walker.hpp"

namespace paratwin::reports {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Before any op: `rank` is traced, and its actor stands for `stands_for` (the ranks, itself among
  // them, whose timelines are its own: folded simulations; {rank} otherwise).
  virtual void traced(int64_t rank, const std::vector<int64_t>& stands_for) = 0;
  // A traced rank's op started at `at` (seconds).
  virtual void started(int64_t rank, uint32_t op, double at) = 0;
  // ... and ended.
  virtual void finished(const workloads::OpEvent& e) = 0;
  // The compute stream's wait that ended at `until`: the walker's pieces, latest first, each ending
  // where the one before it (in the list) began.
  virtual void idle(int64_t rank, const std::vector<workloads::IdleCharge>& pieces, double until) = 0;
};

}  // namespace paratwin::reports
