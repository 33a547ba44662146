#include "exec/executor.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>

namespace paratwin::exec {

namespace {

using workloads::Op;
using workloads::OpKind;
using workloads::Stream;

constexpr int kStreams = workloads::kStreams;
constexpr int kCompute = static_cast<int>(Stream::compute);

std::string describe(const workloads::Program& program, int64_t rank, const Op& op, uint32_t index) {
  std::string s = "rank " + std::to_string(rank) + ", op " + std::to_string(index) + " \"" + op.name + "\" (" +
                  workloads::to_string(op.kind) + ", " + workloads::to_string(op.phase);
  if (op.layer >= 0) s += ", layer " + std::to_string(op.layer);
  if (op.micro_batch >= 0) s += ", micro-batch " + std::to_string(op.micro_batch);
  if (workloads::is_collective(op.kind)) s += ", group " + program.grid.mask_name(op.group);
  return s + ")";
}

class Iteration {
 public:
  Iteration(const workloads::Program& program, int64_t rank, Backend& backend, const ExecOptions& options,
            bool measured, bool inject)
      : program_(program),
        rank_(rank),
        role_(program.roles[static_cast<size_t>(program.role_of(rank))]),
        backend_(backend),
        options_(options),
        measured_(measured),
        inject_(inject),
        done_(role_.ops.size(), 0),
        end_(role_.ops.size(), 0) {
    for (uint32_t i = 0; i < role_.ops.size(); ++i) streams_[static_cast<size_t>(role_.ops[i].stream)].push_back(i);
  }

  // Returns the iteration's span on this rank.
  double run(RankResult& out) {
    t0_ = backend_.now();
    compute_free_ = t0_;
    size_t left = role_.ops.size();
    while (left > 0) {
      start_ready();
      bool any = false;
      for (int s = 0; s < kStreams; ++s) any = any || inflight_[s] >= 0;
      if (!any) throw ExecError("rank " + std::to_string(rank_) + " is stuck: no op can start");
      for (const Finished& f : backend_.wait()) {
        finish(f);
        --left;
      }
    }
    double last = t0_;
    for (double e : end_) last = std::max(last, e);
    if (measured_) {
      charge_tail(last);
      out.breakdown = breakdown_;
      out.events = std::move(events_);
      out.collectives = std::move(collectives_);
    }
    return last - t0_;
  }

 private:
  bool ready(uint32_t i) const {
    const Op& op = role_.ops[i];
    const uint32_t* d = role_.deps_of(op);
    for (uint32_t k = 0; k < op.dep_count; ++k)
      if (!done_[d[k]]) return false;
    return true;
  }

  // Communication first: a GEMM on the CPU runs to completion inside start(), and the collectives
  // that became ready must already be in flight to overlap it.
  void start_ready() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (int k = 1; k <= kStreams; ++k) {
        const int s = k % kStreams;  // compute (0) last
        const auto& list = streams_[static_cast<size_t>(s)];
        if (inflight_[s] >= 0 || head_[s] >= list.size()) continue;
        const uint32_t i = list[head_[s]];
        if (!ready(i)) continue;
        const Op& op = role_.ops[i];
        if (inject_ && rank_ == options_.fail_rank && op.name == options_.fail_op)
          throw ExecError(describe(program_, rank_, op, i) + ": failed (injected by --fail-at)");
        if (s == kCompute) charge_wait(i);
        inflight_[s] = static_cast<int64_t>(i);
        try {
          backend_.start(op, i);
        } catch (const std::exception& e) {
          throw ExecError(describe(program_, rank_, op, i) + ": " + e.what());
        }
        progress = true;
      }
    }
  }

  // The compute stream waited from the end of its last op until now: charge the wait to the
  // dependency that ended last, as the simulator does.
  void charge_wait(uint32_t i) {
    const double now = backend_.now();
    const double gap = now - compute_free_;
    if (gap <= 0) return;
    const Op& op = role_.ops[i];
    const uint32_t* d = role_.deps_of(op);
    int64_t last = -1;
    for (uint32_t k = 0; k < op.dep_count; ++k)
      if (last < 0 || end_[d[k]] > end_[static_cast<size_t>(last)]) last = d[k];
    charge(last, gap);
  }

  void charge(int64_t blocker, double gap) {
    if (blocker < 0) {
      breakdown_.other_idle += gap;
      return;
    }
    const Op& b = role_.ops[static_cast<size_t>(blocker)];
    if (workloads::is_collective(b.kind)) {
      breakdown_.exposed_comm += gap;
      collectives_[{static_cast<int>(b.kind), b.group}].exposed += gap;
    } else if (workloads::is_p2p(b.kind)) {
      breakdown_.bubble += gap;
    } else {
      breakdown_.other_idle += gap;
    }
  }

  // After the compute stream's last op: waiting for what ends the iteration.
  void charge_tail(double last) {
    const double gap = last - compute_free_;
    if (gap <= 0) return;
    int64_t blocker = -1;
    for (uint32_t i = 0; i < end_.size(); ++i)
      if (blocker < 0 || end_[i] > end_[static_cast<size_t>(blocker)]) blocker = i;
    charge(blocker, gap);
  }

  void finish(const Finished& f) {
    if (f.op >= role_.ops.size() || done_[f.op])
      throw ExecError("rank " + std::to_string(rank_) + ": backend reported op " + std::to_string(f.op) +
                      " twice or out of range");
    const Op& op = role_.ops[f.op];
    const int s = static_cast<int>(op.stream);
    done_[f.op] = 1;
    end_[f.op] = f.end;
    inflight_[s] = -1;
    ++head_[s];
    if (s == kCompute) {
      breakdown_.compute += f.end - f.start;
      compute_free_ = f.end;
    }
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
  std::array<std::vector<uint32_t>, kStreams> streams_;
  std::array<size_t, kStreams> head_{};
  std::array<int64_t, kStreams> inflight_ = [] {
    std::array<int64_t, kStreams> a{};
    a.fill(-1);
    return a;
  }();
  std::vector<uint8_t> done_;
  std::vector<double> end_;
  double t0_ = 0, compute_free_ = 0;
  Breakdown breakdown_;
  std::vector<workloads::OpEvent> events_;
  std::map<std::pair<int, workloads::AxisMask>, CollectiveTime> collectives_;
};

}  // namespace

RankResult run_rank(const workloads::Program& program, int64_t rank, Backend& backend, const ExecOptions& options) {
  RankResult out;
  for (int k = 0; k < options.warmup + options.iterations; ++k) {
    const bool measured = k >= options.warmup;
    MPI_Barrier(MPI_COMM_WORLD);  // every rank starts the iteration together: the trace's common origin
    Iteration it(program, rank, backend, options, measured, k == options.warmup);
    const double span = it.run(out);
    backend.drain();
    if (measured) out.iterations.push_back(span);
  }
  return out;
}

}  // namespace paratwin::exec
