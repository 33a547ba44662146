#pragma once
// How one rank runs its op list, whoever runs it: ops on one stream in list order, streams
// concurrently, an op once its explicit dependencies are done. The SimGrid engine, the executor and
// the analytical model all drive this walker, each with its own clock and op costs, and all read
// where the compute stream's time went from its one ledger, so "exposed communication", "bubble" and
// "other idle" mean the same in a prediction and in a measurement.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::workloads {

// One op of one rank as it ran: its index in the rank's role and its start and end (seconds). What a
// measured run records and a trace shows (reports/trace.hpp).
struct OpEvent {
  int64_t rank = 0;
  uint32_t op = 0;
  double start = 0, end = 0;
};

// Why the compute stream was idle. Each instant of a wait is charged to the op on the critical path at
// that instant: the wait ends when the op it held back could start, released by its dependency that
// ended last (ties: the first listed); while that op ran, the wait is its; before it started, the wait
// is whatever held it back in turn (its own last dependency or its stream's previous op), and so on
// back to where the wait began. So a GEMM waiting for an all-gather of activations that waited for the
// previous stage's message is bubble while the message was in flight and exposed communication while
// the all-gather ran. After the compute stream's last op, the wait is traced back from the op that
// ended the rank's iteration last. Time between an op's release and its start is other idle.
enum class IdleCause : uint8_t { collective, message, other };

struct IdleCharge {
  IdleCause cause = IdleCause::other;
  double seconds = 0;
  int64_t blocker = -1;  // the op charged, -1 when none
};

// Where one rank's compute stream spent the iteration (seconds): what the simulator, the executor and
// the analytical model report per rank.
struct IdleTimes {
  double compute = 0;       // its ops running, start to end
  double exposed_comm = 0;  // waiting for a collective
  double bubble = 0;        // waiting for a pipeline message
  double other_idle = 0;    // waiting for anything else (another stream's compute, a host copy)
};

struct IdleLedger : IdleTimes {
  // Exposed communication by (OpKind, group) of the collective waited for.
  std::map<std::pair<int, AxisMask>, double> exposed;

  void charge(const Role& role, const IdleCharge& c);
};

// A role's ops by stream, in list order, and each op's place in its stream: what every walker of the
// role reads and none changes (an engine with thousands of actors of one role builds it once).
struct StreamIndex {
  explicit StreamIndex(const Role& role);
  std::array<std::vector<uint32_t>, kStreams> streams;
  std::vector<uint32_t> position;
  // Where an op's start time is kept: only ops off the compute stream can hold the compute stream
  // back, so only theirs are (kNoSlot: a compute-stream op). Thousands of actors keep fewer times.
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  std::vector<uint32_t> slot;
  uint32_t slots = 0;
};

class OpWalker {
 public:
  // The compute stream is idle from `origin` until its first op starts. `index`: the role's, shared by
  // its walkers; built here when null.
  explicit OpWalker(const Role& role, double origin = 0, std::shared_ptr<const StreamIndex> index = nullptr);

  const Role& role() const { return role_; }
  // Stream s's ops in list order, and the position of the next one to start.
  const std::vector<uint32_t>& stream(int s) const { return index_->streams[static_cast<size_t>(s)]; }
  size_t head(int s) const { return head_[static_cast<size_t>(s)]; }
  bool busy(int s) const { return running_[static_cast<size_t>(s)] >= 0; }
  bool done(uint32_t op) const { return index_->position[op] < head_[static_cast<size_t>(role_.ops[op].stream)]; }
  double end_of(uint32_t op) const { return end_[op]; }
  bool finished() const { return finished_ == role_.ops.size(); }

  // The op stream s would start now: its next op, if the stream is free and the op's dependencies are done.
  int64_t ready(int s) const;

  // Starts every op that can start, trying the streams in `order` until none can. `start(s, op)` runs
  // op on stream s; it calls started() and may call finished() before it returns.
  template <class Start>
  void start_ready(const std::array<int, kStreams>& order, Start&& start) {
    for (bool progress = true; progress;) {
      progress = false;
      for (int s : order) {
        const int64_t i = ready(s);
        if (i < 0) continue;
        start(s, static_cast<uint32_t>(i));
        progress = true;
      }
    }
  }

  // op (its stream's next, its dependencies done) starts at `at`; returns the pieces of the compute
  // stream's wait this ends (valid until the next call), already charged to the ledger.
  const std::vector<IdleCharge>& started(uint32_t op, double at);
  // op ended at `end`, having begun at `began` (the backend's start, which an asynchronous device may
  // put after started()).
  void finished(uint32_t op, double began, double end);
  // The rank's iteration ends at `at`: charges the compute stream's wait after its last op.
  const std::vector<IdleCharge>& close(double at);

  const IdleLedger& ledger() const { return ledger_; }

 private:
  const Role& role_;
  std::shared_ptr<const StreamIndex> index_;
  std::array<size_t, kStreams> head_{};  // ops before it are done
  std::array<int64_t, kStreams> running_;
  std::vector<double> start_;  // by StreamIndex::slot
  std::vector<double> end_;
  size_t finished_ = 0;
  double compute_free_;         // when the compute stream's last op ended
  double compute_started_ = 0;  // when the compute stream's running op was started
  IdleLedger ledger_;
  std::vector<IdleCharge> charges_;

  // op's dependency that ended last (ties: the first listed); -1 if none.
  int64_t latest_dependency(uint32_t op) const;
  // What held op back last: its latest-ending dependency or its stream's previous op; -1 if none.
  int64_t released_by(uint32_t op) const;
  // Charges the wait [from, until), which `op` (ended at `until`) ended, along the critical path.
  const std::vector<IdleCharge>& charge_wait(double from, double until, int64_t op);
};

// The streams in their natural order, and communication first (compute last): the executor's order,
// where a CPU GEMM runs to completion inside start() and the collectives ready by then must already be
// in flight to overlap it.
constexpr std::array<int, kStreams> kStreamOrder = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
constexpr std::array<int, kStreams> kCommunicationFirst = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0};

// The ledger of one rank's recorded run: its events (every op once) replayed through a walker. What
// the engine and the executor report is this; tests and comparisons can recompute it from a trace.
// Throws std::invalid_argument when the events break the op list's order or miss an op.
IdleLedger replay_ledger(const Role& role, std::vector<OpEvent> events, double origin, double end);

}  // namespace paratwin::workloads
