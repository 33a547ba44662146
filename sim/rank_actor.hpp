#pragma once
// One rank (or, folded, the ranks it stands for) as a SimGrid actor: it drives the op walker
// (workloads/op_walker.hpp) with simulated time. Compute ops are executions on the rank's device (or
// timers when nothing else computes there), collectives the steps of their algorithm over mailboxes
// (or, phased, meetings of the group's actors), pipeline messages point-to-point transfers.
#include <algorithm>
#include <cstdint>
#include <map>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine_state.hpp"
#include "workloads/op_walker.hpp"

namespace paratwin::sim::detail {

class RankActor {
 public:
  RankActor(EngineState& state, int64_t rank)
      : st_(state),
        rank_(rank),
        role_(state.program.roles[static_cast<size_t>(state.program.role_of(rank))]),
        feeds_(state.feeds_other_stream[static_cast<size_t>(state.program.role_of(rank))]),
        role_index_(static_cast<size_t>(state.program.role_of(rank))),
        weight_(state.fold.active ? state.fold.weight[static_cast<size_t>(rank)] : 1),
        actor_(state.phases ? state.phases->actor_of(rank) : 0),
        device_(state.placement.device_of(rank)),
        walker_(role_, 0, state.stream_index[role_index_]) {}

  // Starts what the op list allows, waits for the next event, until every op is done.
  void operator()() {
    while (true) {
      walker_.start_ready(workloads::kStreamOrder, [this](int s, uint32_t i) { start(s, i); });
      if (walker_.finished()) break;
      wait_for_event();
    }
    const double end = sg4::Engine::get_clock();
    const auto& waits = walker_.close(end);
    if (st_.options.trace_sink && st_.traced[static_cast<size_t>(rank_)] && !waits.empty())
      st_.options.trace_sink->idle(rank_, waits, end);
    report();
  }

 private:
  // What the actor needs of each of its groups, looked up once (a role has a handful of group axes).
  struct GroupInfo {
    workloads::AxisMask mask = 0;
    const GroupLayout* layout = nullptr;
    const GroupLayout* vendor_layout = nullptr;  // PCCL: the vendor library's kinds (GroupLayouts::vendor_runs)
    bool on_node = false;                        // folded, and every member on this rank's node
    int32_t component = 0, component_size = 1;   // phased: the actors meeting at its phases
  };

  // The op a stream runs, and where it is.
  struct Flight {
    bool active = false;
    uint32_t op = 0;
    double start = 0;
    std::vector<Step> steps;
    size_t step = 0;
    int outstanding = 0;
    double wake = -1;                       // > 0: waiting for added latency until then
    bool timed = false;                     // the op ends at `wake` (compute alone on its device, folded collective)
    Algorithm algorithm = Algorithm::ring;  // the library's choice for this collective
    std::vector<void*> payloads;            // receive buffers of the current step
    int64_t ordinal = 0;                    // collective: its place among the group's on this stream
    CallKey call;                           // collective: the call it is, for the arrival skew
    bool call_tracked = false;              // `call` is on the engine's board (not an on-node folded one)
    std::vector<Waiter> waiters;            // phased: the members to tell when the phase's transfers end
    double phase_latency = -1;              // phased leader: the latency to add once its flows end (>= 0)
    bool in_latency = false;                // `wake` ends the phase's latency
    // Compute ops run back to back as one execution: (op, seconds) in stream order.
    std::vector<std::pair<uint32_t, double>> batch;
  };

  // --- Starting an op
  // Starts op i on stream s: a compute execution, a pipeline message or a collective's first step.
  void start(int s, uint32_t i);
  void start_compute(int s, uint32_t i);
  // Free communication still sends messages (zero bytes over zero-latency routes), so that pipeline
  // stages keep their order.
  void start_message(int s, const workloads::Op& op);
  void start_collective(int s, const workloads::Op& op);
  double seconds_of(const workloads::Op& op) const;
  // Runs op i and the compute-stream ops after it as one execution while nothing else waits for them
  // in between: the ops that follow depend only on finished ops or on the batch, and no op of the
  // batch but the last feeds another stream. Fewer, longer executions; the same timeline.
  double batch_compute(int s, uint32_t i);

  // --- Collectives step by step, and phased meetings
  // Posts the current step of stream s's collective, skipping empty steps; completes the op when
  // no step is left.
  void post_step(int s);
  // The current step's transfers are done: add its skipped latencies (fast fidelity), or go on.
  void step_done(int s);
  // Phased: this actor reached phase `key`, which `expected` actors meet at. All but the last wait
  // for a notice; the last starts the flows of every member (`flows()`: PhaseFlows) from its own
  // device to sinks along the flows' routes, and gives the notices when they end.
  template <class Flows>
  void arrive(int s, const PhaseKey& key, int32_t expected, Flows&& flows);
  // Phased pipeline message: sender and receiver meet; the flows are the sender's.
  void message_phase(int s, const workloads::Op& op, int channel, int64_t peer_rank);
  // The transfers of stream s's step or message ended: tell the phase's other members, then go on.
  void transfers_done(int s);
  // A collective beside the compute (profile compute_slowdown_communicating): while a collective of
  // this rank is in flight on another stream, its compute op runs that much slower (a GPU's collective
  // kernel on the same compute units and HBM; a CPU's polls between GEMM slices). Called when a
  // collective starts or ends.
  void compute_pace();

  // --- Events and results
  // Waits for the next activity to end or the next timer to ring, and moves its stream on.
  void wait_for_event();
  void add_activity(int s, sg4::ActivityPtr a);
  // Stream s's op (or batch) ended now: the walker, the trace and the collective table learn it.
  void complete(int s);
  // A traced op's event: to the trace sink, or kept in the results.
  void record(const workloads::OpEvent& e);
  // The rank's ledger into the results; its collectives' exposed time counts for every rank it stands for.
  void report();

  // --- Lookups remembered by the actor
  const GroupInfo& group_info(workloads::AxisMask mask);
  // The mailbox of messages from `from` to `to` on a channel; one of the two is a lane of this actor,
  // and the actor remembers the ones it uses. Ranks stay below 2^22 (workloads' limit).
  sg4::Mailbox* mailbox(int64_t to, int64_t from, int channel);
  // Path latency to a peer rank; an actor talks to few peers, so it remembers them rather than route
  // at every step.
  double latency_to(int64_t peer);
  static uint64_t bytes(double b) { return static_cast<uint64_t>(std::max(0.0, b)); }

  EngineState& st_;
  int64_t rank_;
  const workloads::Role& role_;
  const std::vector<uint8_t>& feeds_;
  size_t role_index_;
  int32_t weight_;  // ranks this actor stands for (folding)
  int32_t actor_;   // phased: this actor's number
  int64_t device_;
  // The timed compute op's work left at full speed, when it was last paced, and its pace now.
  double compute_left_ = 0, compute_mark_ = 0, compute_rate_ = 1;
  workloads::OpWalker walker_;
  Flight flights_[kStreams];
  std::vector<sg4::ActivityPtr> activities_;
  std::vector<int> owners_;
  std::vector<GroupInfo> groups_;
  std::unordered_map<uint64_t, sg4::Mailbox*> mailboxes_;
  std::unordered_map<int64_t, double> latencies_;
  std::map<std::pair<workloads::AxisMask, int>, int64_t> collectives_started_;  // by (group, stream)
  std::map<std::pair<int32_t, int>, int64_t> messages_started_;  // phased, by (peer actor, channel and direction)
};

}  // namespace paratwin::sim::detail
