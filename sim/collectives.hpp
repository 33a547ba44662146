#pragma once
// Collective algorithms as per-member step plans, the way an MPI or NCCL rank runs them: at each
// step a member sends some bytes to some peers and receives from others, and the step ends when its
// receives (or, without receives, its sends) are done. `exact` fidelity has one step per algorithm
// step; `fast` aggregates a ring's steps into one transfer with the same bytes per link and adds the
// skipped steps' latency.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/algorithms/registry.hpp"
#include "sim/nccl_tuning.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

enum class Fidelity { exact, fast };

// The registered algorithms (sim/algorithms/registry.hpp), one file each in sim/algorithms/:
// ring: NCCL/RCCL/MPI ring (all-reduce, reduce-scatter, all-gather), one ring per channel; for
//   broadcast and reduce NCCL's pipelined chain along the ring from (to) the root.
// recursive: recursive halving (reduce-scatter), doubling (all-gather), both (all-reduce, Rabenseifner);
//   power-of-two groups only.
// tree: NCCL's pipelined double binary tree (all-reduce).
// hierarchical: PCCL's two-level design ([singh2025dissertation] §6.2): intra-node ring, inter-node
//   recursive doubling/halving (ring when the node count is not a power of two), and a device-local shuffle.
// binomial_tree: broadcast and reduce. pairwise: all-to-all, one peer per step. direct: all-to-all,
// every peer at once. pat: NCCL's PAT (v2.23+, one rank per node): all-gather and reduce-scatter in
// log2 p aggregated steps of doubling (reduce-scatter: halving) distance, any p.
enum class Algorithm {
#define PARATWIN_ALGORITHM_ENUM(name) name,
  PARATWIN_COLLECTIVE_ALGORITHMS(PARATWIN_ALGORITHM_ENUM)
#undef PARATWIN_ALGORITHM_ENUM
};

const char* to_string(Algorithm a);
std::optional<Algorithm> parse_algorithm(const std::string& name);
bool supports(Algorithm algorithm, workloads::OpKind kind);

// Where a group's members sit, and the rings a library runs through them.
struct GroupLayout {
  std::vector<int32_t> node;  // per member: node number, in order of first appearance
  // Members in the order rings visit them, node by node (empty: group order). Libraries pick rings
  // along the fastest links inside a node, as NCCL's topology search does.
  std::vector<int32_t> order;
  // Rings that run at once across nodes (NCCL/RCCL channels), each carrying an equal share: ring c
  // enters every node at position channel_offsets[c] of the node's members and leaves it through the
  // one before, so that each ring crosses between nodes through its own NIC. Empty: one ring.
  std::vector<int32_t> channel_offsets;
  // Every ring also runs reversed, each direction carrying half of the ring's share, so the links inside
  // a node carry it both ways: RCCL's rings come in such pairs (ROCm/rccl src/graph/rome_models.cc: the
  // 8-GCD, 4-NIC MI250X node runs "N0 0 1 5 4 6 7 3 2 N1" and "N1 2 3 7 6 4 5 1 0 N0", ...). A pair
  // crosses between nodes through the same NIC, one ring each way.
  bool counter_rotating = false;

  int32_t size() const { return static_cast<int32_t>(node.size()); }
  // Every member on a node of its own.
  static GroupLayout flat(int32_t size);
  // Members per node when every node holds the same number of members, else 0.
  int32_t members_per_node() const;
};

struct Transfer {
  int32_t peer = 0;  // index in the group
  double bytes = 0;
};

struct Step {
  std::vector<Transfer> sends;
  std::vector<Transfer> recvs;
  int extra_latencies = 0;  // path latencies (and library step costs) to add after the step (fast fidelity)
  double reduce_bytes = 0;  // received bytes this member reduces into its buffer at the end of the step
  double local_bytes = 0;   // device memory traffic of a local shuffle after the step (PCCL)
  // Seconds the library adds to this step instead of the profile's collective_step (NCCL's protocol
  // latency, spread over the steps; it stands for the hops' path latency too); < 0: the profile's.
  double library_step = -1;
};

// What a library adds to the transfers of each algorithm step.
struct StepCosts {
  double collective_step = 0;        // seconds per step (fast phases stand for several)
  double overlapped_step_extra = 0;  // added to a step while the member computes
  // Per kind (OpKind index) where the profile gives the library's own: step cost and seconds per byte.
  std::map<int, topology::ProfileSpec::CollectiveCost> by_kind;
  bool host_reductions = false;        // reductions on the CPU: 3 × bytes / host memory bandwidth
  double host_memory_bandwidth = 1;    // bytes/s
  double device_memory_bandwidth = 1;  // bytes/s, for local shuffles
  // NCCL's tuning model (profile "nccl", library nccl): the protocol of each ring and tree.
  std::optional<NcclHardware> nccl;

  // The machine profile's per-step cost; CPU reductions for the MPI libraries
  // ([singh2025dissertation] §6.1.3; GPU libraries fuse them into the transfer).
  static StepCosts of(const topology::Machine& machine, const std::string& library);
  // Seconds a step takes after its transfers: the path latency of the steps a fast phase stands for,
  // the library's cost per step, CPU reductions and local shuffles.
  // `computing`: the member's compute stream is busy, and a library that progresses on the compute
  // core (overlapped_step_extra > 0) advances its step only when the compute thread polls.
  double after_transfers(const Step& step, double path_latency, workloads::OpKind kind, bool computing = false) const;
  // The algorithm's plan (sim::plan, plan_group) as this library runs it: with NCCL's tuning model,
  // a ring's or tree's steps take the latency of the protocol NCCL picks for the group and size
  // (library_step) and move that protocol's bytes (LL: 8 bytes per 4 of data and slower stores).
  std::vector<Step> plan(workloads::OpKind kind, Algorithm algorithm, const GroupLayout& layout, int32_t me,
                         double bytes, int32_t root, Fidelity fidelity) const;
  std::vector<std::vector<Step>> plan_group(workloads::OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                            double bytes, int32_t root, Fidelity fidelity) const;
  // NCCL's choice for such a collective, when the model applies to it (else nullopt).
  std::optional<NcclChoice> nccl_choice_for(workloads::OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                            double bytes) const;
};

// What NCCL's tuner knows of a machine whose profile names its tables (profile.nccl).
NcclHardware nccl_hardware(const topology::Machine& machine);

// The algorithm a library uses for a collective kind: nccl, rccl, cray-mpich and mpi use rings for
// all-reduce, reduce-scatter and all-gather ([singh2025dissertation] §6.1.4); pccl the hierarchical design for
// all-gather and reduce-scatter; the GPU libraries pipelined chains for broadcast and reduce, the MPI
// libraries binomial trees; all pairwise exchange for all-to-all.
Algorithm default_algorithm(workloads::OpKind kind, const std::string& library = "nccl");

// The vendor library beside PCCL: PCCL's intra-node phase is RCCL's on Frontier (Thesis, [singh2025dissertation]
// §6.2.2), NCCL's on NVIDIA machines. "rccl" where the machine profile's library is RCCL, else "nccl".
std::string vendor_library(const topology::Machine& machine);
// The library that runs a collective of `kind` in a run that uses `library`: PCCL implements all-gather
// and reduce-scatter only (Thesis §6.2); the ZeRO-3 runs of §6.3.2 issue those with PCCL and every other
// collective (the data-parallel all-reduce among them) with the vendor library, so under pccl the others
// are vendor_library's, tuned as it tunes them. Every other library runs all its collectives.
std::string library_running(workloads::OpKind kind, const std::string& library, const topology::Machine& machine);

// How a library drives a node's NICs: Cray MPICH sends every inter-node flow through the node's first
// NIC ([singh2025dissertation] §6.1.2), the others use the NIC serving each device.
topology::TopologyOptions topology_options(const std::string& library);

// The rings a library runs over the group, as member indices: one per channel (NCCL/RCCL), each
// entering and leaving every node at its own members (GroupLayout::channel_offsets).
std::vector<std::vector<int32_t>> ring_orders(const GroupLayout& layout);

// How the analytical model (sim/analytical_collectives.cpp) loads the network with an algorithm's flows
// when every group of the same axes runs it at once. Every algorithm must name one (the registry test
// fails an entry without): the analytical model has no default to fall back on.
enum class AnalyticalLoads {
  ring_channels,  // one aggregated step along the library's rings, each channel's flows sharing the
                  // links (the ring's chains, broadcast and reduce: own_steps)
  own_steps,      // step by step, each flow under every group's flows of that step of the same plan
  pairs,          // all-to-all: every pair of every group exchanging at once
  tree_steps,     // per step, the tree edges every group sends along, each in its own direction
};

// A registered algorithm (sim/algorithms/registry.hpp): what the step planner, the analytical model, the
// folded node model and NCCL's tuning model need to know of it.
struct AlgorithmSpec {
  const char* name = "";
  bool (*supports)(workloads::OpKind kind) = nullptr;
  // Member `me`'s steps (see plan below); called only for a kind it supports and a group of two or more.
  std::vector<Step> (*plan)(workloads::OpKind kind, const GroupLayout& layout, int32_t me, double bytes, int32_t root,
                            Fidelity fidelity) = nullptr;
  // Every member's steps at once, where the group's structure is worth working out once (the double
  // tree); null: plan member by member.
  std::vector<std::vector<Step>> (*plan_group)(workloads::OpKind kind, const GroupLayout& layout,
                                               double bytes) = nullptr;
  std::optional<AnalyticalLoads> loads;
  // Its flows follow the library's rings: the folded node model times them at the rings' bandwidth.
  bool follows_rings = false;
  // Recursive halving and doubling pair members at power-of-two distances.
  bool power_of_two_groups = false;
  // What NCCL's tuning model calls it for `kind`, where that model prices it; null or nullopt: not priced.
  std::optional<NcclAlgorithm> (*nccl)(workloads::OpKind kind) = nullptr;
};

// Every registered algorithm, indexed by Algorithm.
const std::vector<AlgorithmSpec>& registered_algorithms();
const AlgorithmSpec& spec(Algorithm algorithm);

// Each algorithm's definition, sim/algorithms/NAME.cpp.
#define PARATWIN_ALGORITHM_DECLARATION(name) AlgorithmSpec name##_algorithm();
PARATWIN_COLLECTIVE_ALGORITHMS(PARATWIN_ALGORITHM_DECLARATION)
#undef PARATWIN_ALGORITHM_DECLARATION

// Member `me` of a group laid out as `layout`: its steps for a collective whose buffer is `bytes`
// (the nccl-tests size: all-gather output, reduce-scatter input), rooted at `root` for
// broadcast/reduce. Throws std::invalid_argument for an algorithm the kind or group cannot use.
std::vector<Step> plan(workloads::OpKind kind, Algorithm algorithm, const GroupLayout& layout, int32_t me, double bytes,
                       int32_t root, Fidelity fidelity);
// Every member's plan (indexed as the group); the double tree's layout is worked out once for all.
std::vector<std::vector<Step>> plan_group(workloads::OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                          double bytes, int32_t root, Fidelity fidelity);
inline std::vector<Step> plan(workloads::OpKind kind, Algorithm algorithm, int32_t size, int32_t me, double bytes,
                              int32_t root, Fidelity fidelity) {
  return plan(kind, algorithm, GroupLayout::flat(size), me, bytes, root, fidelity);
}

}  // namespace paratwin::sim
