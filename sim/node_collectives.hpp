#pragma once
// Folded simulation (`--fold`): a collective whose group lies on one node, run by members in lockstep,
// is timed without transfers — the algorithm's steps with the topology's bandwidths (rings: every
// group of the axis on the node at once) plus latencies and the library's costs.
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/group_layouts.hpp"
#include "topology/topology.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

class NodeCollectives {
 public:
  // All references must outlive this object.
  NodeCollectives(const workloads::Program& program, const workloads::PlacementMap& placement,
                  const topology::Topology& topology, GroupLayouts& layouts, StepCosts costs);

  // Whether every member of `rank`'s group along `mask` is on the rank's node.
  bool on_node(int64_t rank, workloads::AxisMask mask);
  // Seconds `rank`'s collective `op` takes with `algorithm` when its group is on its node.
  double seconds(int64_t rank, const workloads::Op& op, Algorithm algorithm);

 private:
  double ring_bandwidth(int64_t rank, workloads::AxisMask mask);

  const workloads::Program& program_;
  const workloads::PlacementMap& placement_;
  const topology::Topology& topology_;
  GroupLayouts& layouts_;
  StepCosts costs_;
  std::vector<int64_t> rank_at_device_;
  std::map<std::pair<workloads::AxisMask, int64_t>, bool> on_node_;           // by (mask, first member)
  std::map<std::pair<workloads::AxisMask, int64_t>, double> ring_bandwidth_;  // by (mask, node)
  std::map<std::tuple<int, int, workloads::AxisMask, double, int32_t, int32_t, int64_t>, double> seconds_;
};

}  // namespace paratwin::sim
