#include "exec/executor.hpp"

#include <mpi.h>

#include <algorithm>

#include "exec/op_text.hpp"
#include "workloads/op_walker.hpp"

namespace paratwin::exec {

namespace {

using workloads::Op;

constexpr int kStreams = workloads::kStreams;

std::string describe(const workloads::Program& program, int64_t rank, const Op& op, uint32_t index) {
  return "rank " + std::to_string(rank) + ", " + describe_op(program, op, index);
}

class Iteration {
 public:
  Iteration(const workloads::Program& program, int64_t rank, Backend& backend, const ExecOptions& options,
            bool measured, bool inject, Watchdog* watchdog)
      : program_(program),
        rank_(rank),
        role_(program.roles[static_cast<size_t>(program.role_of(rank))]),
        backend_(backend),
        options_(options),
        measured_(measured),
        inject_(inject),
        watchdog_(watchdog),
        t0_(backend.now()),
        walker_(role_, t0_) {}

  // Returns the iteration's span on this rank.
  double run(RankResult& out) {
    while (!walker_.finished()) {
      walker_.start_ready(workloads::kCommunicationFirst, [this](int, uint32_t i) { start(i); });
      if (!skipped_.empty()) {  // ended as they started: no backend op to wait for
        std::vector<Finished> done;
        done.swap(skipped_);
        for (const Finished& f : done) finish(f);
        continue;
      }
      bool any = false;
      for (int s = 0; s < kStreams; ++s) any = any || walker_.busy(s);
      if (!any) throw ExecError("rank " + std::to_string(rank_) + " is stuck: no op can start");
      if (watchdog_) tell_watchdog();
      for (const Finished& f : backend_.wait()) finish(f);
    }
    double last = t0_;
    for (uint32_t i = 0; i < role_.ops.size(); ++i) last = std::max(last, walker_.end_of(i));
    walker_.close(last);
    if (measured_) {
      const workloads::IdleLedger& l = walker_.ledger();
      out.breakdown = l;
      for (const auto& [key, seconds] : l.exposed) collectives_[key].exposed = seconds;
      out.events = std::move(events_);
      out.collectives = std::move(collectives_);
    }
    return last - t0_;
  }

 private:
  // The ops this rank now waits on: those running at the head of each stream.
  void tell_watchdog() {
    in_flight_.clear();
    for (int s = 0; s < kStreams; ++s)
      if (walker_.busy(s)) in_flight_.push_back(walker_.stream(s)[walker_.head(s)]);
    watchdog_->waiting(in_flight_);
  }

  void start(uint32_t i) {
    const Op& op = role_.ops[i];
    if (inject_ && rank_ == options_.fail_rank && op.name == options_.fail_op)
      throw ExecError(describe(program_, rank_, op, i) + ": failed (injected by --fail-at)");
    walker_.started(i, backend_.now());
    // The modelled stack's host work (Python hooks, pipeline-engine instructions: Op::host_seconds) is
    // not a kernel this executor runs: it ends as it starts.
    if (op.host_seconds > 0) {
      const double now = backend_.now();
      skipped_.push_back({i, now, now});
      return;
    }
    try {
      backend_.start(op, i);
    } catch (const std::exception& e) {
      throw ExecError(describe(program_, rank_, op, i) + ": " + e.what());
    }
  }

  void finish(const Finished& f) {
    const int s = f.op < role_.ops.size() ? static_cast<int>(role_.ops[f.op].stream) : 0;
    if (f.op >= role_.ops.size() || !walker_.busy(s) || walker_.stream(s)[walker_.head(s)] != f.op)
      throw ExecError("rank " + std::to_string(rank_) + ": backend reported op " + std::to_string(f.op) +
                      " twice, out of range or not started");
    const Op& op = role_.ops[f.op];
    walker_.finished(f.op, f.start, f.end);
    if (!measured_) return;
    events_.push_back({rank_, f.op, f.start - t0_, f.end - t0_});
    if (workloads::is_collective(op.kind)) {
      auto& c = collectives_[{static_cast<int>(op.kind), op.group}];
      ++c.count;
      c.bytes += op.bytes;
      c.seconds += f.end - f.start;
    }
  }

  const workloads::Program& program_;
  int64_t rank_;
  const workloads::Role& role_;
  Backend& backend_;
  const ExecOptions& options_;
  bool measured_, inject_;
  Watchdog* watchdog_;
  std::vector<uint32_t> in_flight_;
  std::vector<Finished> skipped_;  // host-work ops started and ended at once
  double t0_;
  workloads::OpWalker walker_;
  std::vector<workloads::OpEvent> events_;
  std::map<std::pair<int, workloads::AxisMask>, CollectiveTime> collectives_;
};

}  // namespace

RankResult run_rank(const workloads::Program& program, int64_t rank, Backend& backend, const ExecOptions& options,
                    Watchdog* watchdog) {
  RankResult out;
  for (int k = 0; k < options.warmup + options.iterations; ++k) {
    const bool measured = k >= options.warmup;
    const std::string name =
        measured ? "measured iteration " + std::to_string(k - options.warmup + 1) + " of " +
                       std::to_string(options.iterations)
                 : "warm-up iteration " + std::to_string(k + 1) + " of " + std::to_string(options.warmup);
    if (watchdog) watchdog->step("the barrier that starts " + name);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank starts the iteration together: the trace's common origin
    if (watchdog) watchdog->step(name);
    Iteration it(program, rank, backend, options, measured, k == options.warmup, watchdog);
    const double span = it.run(out);
    backend.drain();
    if (measured) out.iterations.push_back(span);
  }
  return out;
}

}  // namespace paratwin::exec
