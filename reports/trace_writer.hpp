#pragma once
// The Chrome trace event format (JSON; Perfetto, chrome://tracing and DevTools' performance panel load
// it), written to a stream as the run goes: compact (one event per line, no spaces, times in µs to the
// nanosecond, op details in short args), and deterministic (the same calls give the same bytes).
//
// Per traced rank (a process named "rank R · stage S"): one thread per stream of its ops (compute,
// tensor, ..., recv_bwd), named as the stream; an "idle" thread with the compute stream's waits named
// as the report's breakdown names them ("bubble": waiting for a pipeline message, "exposed comm":
// waiting for a collective, "other idle"), each with the op it waited on. Per node of a traced rank (a
// process "node N" after the ranks): counters "in flight", the bytes of the traced ranks' running
// communication ops on that node, as two series: "intra-node" (every peer inside the node) and
// "network" (some peer across it); per node rather than per rank, because a node's ranks start and
// end their collectives together: one value per instant instead of one per rank. Flows (arrows): each
// pipeline message from its send to the op that used it on the receiving rank (or to the receive
// itself when nothing uses it), and each collective through its traced members in the order they
// joined it (the last one joined is the one the others waited for). Flows only join traced ranks.
// Slices carry no category: viewers join a flow's slices only when they share one; the kind is args.k.
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "reports/trace_sink.hpp"
#include "workloads/program.hpp"

namespace paratwin::reports {

class ChromeTraceWriter : public TraceSink {
 public:
  // `about`: a line for the trace's metadata (what was run, how).
  ChromeTraceWriter(const workloads::Program& program, std::ostream& out, std::string about = "");
  ~ChromeTraceWriter() override = default;

  void traced(int64_t rank, const std::vector<int64_t>& stands_for) override;
  void started(int64_t rank, uint32_t op, double at) override;
  void finished(const workloads::OpEvent& e) override;
  void idle(int64_t rank, const std::vector<workloads::IdleCharge>& pieces, double until) override;

  // Closes the JSON (flows still missing an end are left out) and flushes the stream. Call once.
  void finish();

  struct Counts {
    int64_t slices = 0, flows = 0, counters = 0;
  };
  const Counts& counts() const { return counts_; }

 private:
  // Where a flow binds: the start of a slice on a thread.
  struct Anchor {
    int64_t pid = 0;
    int tid = 0;
    int64_t ts = 0;  // ns
  };
  struct Counter {
    double node = 0, net = 0;
    int64_t pending_ts = -1;                    // a value not written yet, at this time (the last change there wins)
    int64_t written_node = 0, written_net = 0;  // the last values written (equal ones are not repeated)
  };
  using MessageKey = std::tuple<int64_t, int64_t, int, int64_t>;      // from, to, channel, ordinal
  using CollectiveKey = std::tuple<uint32_t, int64_t, int, int64_t>;  // mask, first member, stream, ordinal

  const workloads::Program& program_;
  std::ostream& out_;
  std::string about_;
  workloads::PlacementMap placement_;
  int pipe_axis_;
  std::string buffer_;
  bool first_event_ = true;
  Counts counts_;
  std::map<int64_t, std::vector<int64_t>> traced_;  // rank -> the ranks it stands for
  std::set<std::pair<int64_t, int>> named_threads_;
  std::map<int64_t, Counter> counters_;                   // per node
  std::map<std::pair<int64_t, uint32_t>, bool> on_node_;  // (rank, mask) -> every member on its node
  std::map<std::pair<int64_t, uint32_t>, int64_t> traced_members_;
  std::vector<std::vector<int64_t>> consumer_;  // per role, per op: the first op that uses a received message
  // Flow state, only between traced ranks.
  std::map<std::tuple<int64_t, int64_t, int>, int64_t> sends_started_, recvs_done_;  // (rank, peer, channel)
  std::map<std::tuple<int64_t, uint32_t, int>, int64_t> collectives_done_;           // (rank, mask, stream)
  std::map<MessageKey, Anchor> sends_;                                               // started, not yet received
  std::map<MessageKey, Anchor> early_recvs_;  // received before their send started (clocks apart)
  std::map<std::pair<int64_t, uint32_t>, std::vector<Anchor>> awaiting_consumer_;  // (rank, op) -> senders
  std::map<CollectiveKey, std::vector<Anchor>> collectives_;                       // members so far
  int64_t next_flow_ = 1;

  void event_begin();  // the separator before every event but the first
  // The separator, then {"ph":PH,"pid":PID; the caller writes the rest and the closing brace.
  void event_begin(const char* ph, int64_t pid);
  void process_name(int64_t pid, const std::string& name);
  void flush_if_full();
  void thread_name(int64_t pid, int tid, const char* name);
  void slice(int64_t pid, int tid, int64_t start_ns, int64_t end_ns, const char* name, const std::string& args);
  void flow(const std::vector<Anchor>& anchors, const char* name);
  void count(int64_t rank, int64_t ts, double node_delta, double net_delta);
  void write_counter(int64_t node, const Counter& c, int64_t ts);
  bool comm_on_node(int64_t rank, const workloads::Op& op);
  int64_t traced_in_group(int64_t rank, uint32_t mask);
  int64_t consumer_of(int64_t rank, uint32_t op);
  bool is_traced(int64_t rank) const { return traced_.count(rank) > 0; }
};

// Nanoseconds of `seconds`, rounded to the trace's resolution (0.1 µs: finer than any op or wait worth
// seeing, and two digits less per time): every time is rounded once, so that slices that touch still
// touch and a slice never ends before it starts.
constexpr int64_t kResolutionNs = 100;
int64_t trace_ns(double seconds);

// Ranks as a short list of runs: "0-7", "0, 64, ..., 8128 (every 64)", "3, 5, 9".
std::string describe_ranks(const std::vector<int64_t>& ranks);

}  // namespace paratwin::reports
