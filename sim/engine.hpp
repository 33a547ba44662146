#pragma once
// The SimGrid engine: one actor per rank runs its role's op list. Ops on one stream run in order,
// streams run concurrently, explicit dependencies are honoured; compute ops are executions on the
// rank's device (concurrent kernels share it), collectives are run by every member as the steps of
// their algorithm over mailboxes, and pipeline messages are point-to-point transfers.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "reports/trace.hpp"
#include "reports/trace_sink.hpp"
#include "sim/collectives.hpp"
#include "sim/folding.hpp"
#include "sim/run_estimate.hpp"
#include "topology/topology.hpp"
#include "workloads/op_walker.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

struct SimOptions {
  Fidelity fidelity = Fidelity::exact;
  // Communication library: "nccl", "rccl" (rings, reductions on the GPU), "cray-mpich" (reductions on
  // the CPU; build the Topology with one_nic_per_node), "mpi" (reductions on the CPU). Empty: the
  // machine profile's library.
  std::string library;
  // Algorithm per collective kind, overriding the library's choice (what-if studies).
  std::map<workloads::OpKind, Algorithm> algorithms;
  // Fast fidelity: one actor for many ranks (sim/folding.hpp), where the program allows it.
  bool fold = false;
  FoldBy fold_by = FoldBy::replica;  // with fold: one actor per node, or per node of a replica
  // Folded by replica: the replicas' own node and NIC links carry equal loads, so phases list one
  // copy of them (sim/phases.hpp); false lists every copy (to measure that it changes nothing).
  bool one_copy_of_replica_links = true;
  bool free_communication = false;  // collectives and messages take no time (bubble studies)
  // Replaces the cost model for compute ops when set (tests: exact, round costs).
  std::function<double(const workloads::Op&)> compute_seconds;
  std::vector<int64_t> trace_ranks;  // ranks whose every op is recorded
  // When set, the traced ranks' ops and waits go here as they happen (not into SimResult::events).
  // Folded, the actors of the trace ranks are traced, each told with the ranks it stands for.
  reports::TraceSink* trace_sink = nullptr;
  bool progress = false;  // print progress to stderr
  // Called with the run's estimate once the platform is built, before any actor exists; may throw to
  // refuse the run (sim/run_estimate.hpp).
  std::function<void(const RunEstimate&)> before_run;
};

using workloads::OpEvent;

// Where each rank's time went (the op walker's ledger, workloads/op_walker.hpp), and when it ended.
struct RankTimes : workloads::IdleTimes {
  double end = 0;
};

struct CollectiveStats {
  workloads::OpKind kind = workloads::OpKind::all_reduce;
  std::vector<Algorithm> algorithms;  // the library's choices, in order of first use
  workloads::AxisMask group = 0;
  int64_t group_size = 1;
  int64_t count = 0;   // per rank
  double bytes = 0;    // per rank
  double seconds = 0;  // per rank, summed over its collectives (start to end)
  // Per rank: the part of `seconds` before the group's last member reached the call (waiting for
  // peers, the members' arrival skew), and the calls' own time, each call from its last member's
  // arrival to its last member's end (a collective timed alone: its whole time).
  double waiting = 0, call_seconds = 0;
  double exposed = 0;  // per rank: time the compute stream waited for these collectives
};

struct SimResult {
  double iteration_time = 0;
  std::vector<RankTimes> ranks;
  std::vector<OpEvent> events;  // of the traced ranks, in completion order (without a trace sink)
  std::vector<CollectiveStats> collectives;
  int64_t flows = 0;      // SimGrid transfers (fast fidelity: one per phase and transfer size)
  int64_t transfers = 0;  // device-to-device transfers they stand for
  // Fast fidelity: their routes' entries (a link once per transfer crossing it); SimGrid 3.32's work to start a flow
  // grows with its entries times its distinct links.
  int64_t route_entries = 0;
  int64_t actors = 0;  // SimGrid actors (ranks, or representatives when folded)
  bool folded = false;
  bool fold_replicas = false;  // one actor per node of a data-parallel replica (else per node)
  std::string fold_note;       // why the program was not folded (fast fidelity)
};

// Why an algorithm of `options` cannot run one of the program's collectives (recursive doubling/halving on
// a group that is not a power of two), naming the op and group; empty when all can. Checked once, where
// the algorithms are given (predict, --algorithm): simulate() takes them as checked.
std::string check_algorithms(const workloads::Program& program, const SimOptions& options);

// Simulates one iteration of `program` on `topology`'s machine. A SimGrid Engine must exist (one per
// process) and be configured with topology::configure_engine; the platform is built here.
SimResult simulate(const workloads::Program& program, const topology::Topology& topology, const SimOptions& options);

}  // namespace paratwin::sim
