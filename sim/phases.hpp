#pragma once
// Fast fidelity's unit of communication: a phase. Every member of a collective step (or both ends of
// a pipeline message) arrives at the phase; when the last one is there, the transfers of all of
// them start as ONE SimGrid activity whose route is the union of theirs, a link listed once per
// transfer that crosses it. The max-min solver then sees one variable per phase instead of one per
// transfer, while every link carries the bytes the separate transfers would have put on it.
//
// Actors stand for ranks (one each, or every rank of a node when folded). The actors whose ranks
// share groups along an axis form a component: the members of that axis's phases.
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/group_layouts.hpp"
#include "topology/topology.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

// Transfers of equal size started together: their routes' resources, the longest route latency.
struct PhaseFlow {
  std::vector<uint32_t> resources;  // a resource once per transfer crossing it
  double latency = 0;
  double bytes = 0;  // per transfer
  int64_t transfers = 0;
};

// The transfers of one phase, in flows of whole pairs of nodes and one transfer size: transfers
// whose sizes are whole multiples of a smaller one count as that many transfers of the smaller size
// (the same load on every link).
constexpr size_t kMaxFlows = 256;
constexpr size_t kResourcesPerFlow = 256, kFewFlows = 32, kResourcesPerLargeFlow = 1536;
struct PhaseFlows {
  std::vector<PhaseFlow> flows;
  int64_t transfers() const;
};

// Identifies one phase across the actors that meet at it.
struct PhaseKey {
  int kind = 0;  // 0: collective step, 1: pipeline message
  uint64_t a = 0, b = 0;
  int channel = 0;
  int64_t ordinal = 0;
  int step = 0;
  auto tie() const { return std::tie(kind, a, b, channel, ordinal, step); }
  bool operator<(const PhaseKey& o) const { return tie() < o.tie(); }
};

class PhasePlanner {
 public:
  // `actor_of`: per rank, the actor standing for it; all references must outlive this object.
  // `one_copy_of_replica_links`: see replica_node_.
  // `costs`: the library's plans (sim::StepCosts::plan_group: protocol bytes).
  PhasePlanner(const workloads::Program& program, const workloads::PlacementMap& placement,
               const topology::Topology& topology, GroupLayouts& layouts, const StepCosts& costs,
               std::vector<int32_t> actor_of, bool one_copy_of_replica_links = true);
  // Whether phases list one copy of the replicas' own links (actors stand for every replica).
  bool folds_replica_links() const { return folds_replicas_; }

  int32_t actors() const { return static_cast<int32_t>(ranks_of_.size()); }
  const std::vector<int64_t>& ranks_of(int32_t actor) const { return ranks_of_[static_cast<size_t>(actor)]; }
  int32_t actor_of(int64_t rank) const { return actor_of_[static_cast<size_t>(rank)]; }

  // The component of `actor` along `mask`, and how many actors it holds.
  int32_t component(int32_t actor, workloads::AxisMask mask);
  int32_t component_size(int32_t component, workloads::AxisMask mask);

  // Per step of the collective's algorithm, the flows of every group of the component.
  const std::vector<PhaseFlows>& collective(int32_t component, workloads::AxisMask mask, workloads::OpKind kind,
                                            Algorithm algorithm, double bytes, int32_t root);
  // A pipeline message of `bytes` from every rank of actor `from` to its counterpart at stage `to_stage`.
  const PhaseFlows& message(int32_t from, int64_t to_stage, double bytes);

 private:
  struct Components {
    std::vector<int32_t> of_actor;
    std::vector<std::vector<int32_t>> actors;
  };
  const Components& components(workloads::AxisMask mask);
  PhaseFlows flows(const std::vector<std::tuple<int64_t, int64_t, double>>& transfers) const;
  void find_replica_nodes();
  static void most_repeated_first(std::vector<uint32_t>& resources);
  // A flow's resources once per transfer, as the flow's route: a node's own links (NVLink-class and
  // NIC links) map to those of its actor's first node, each counted as often as on its busiest node.
  void reduce(std::vector<uint32_t>& resources) const;

  const workloads::Program& program_;
  const workloads::PlacementMap& placement_;
  const topology::Topology& topology_;
  GroupLayouts& layouts_;
  const StepCosts& costs_;
  std::vector<int32_t> actor_of_;
  std::vector<std::vector<int64_t>> ranks_of_;
  int pipe_axis_;
  // Per node, the node that stands for it: itself, or when an actor stands for the same ranks of
  // every data-parallel replica, the actor's first node. Replicas are copies of one another, so
  // their nodes' own links carry the same load and one copy of them is enough for the solver.
  std::vector<int64_t> replica_node_;
  bool folds_replicas_ = false;
  std::map<workloads::AxisMask, Components> components_;
  std::map<std::tuple<int32_t, workloads::AxisMask, int, int, double, int32_t>, std::vector<PhaseFlows>> collectives_;
  std::map<std::tuple<int32_t, int64_t, double>, PhaseFlows> messages_;
};

}  // namespace paratwin::sim
