#pragma once
// Where the members of a group sit and the rings a library runs through them (GroupLayout), worked out
// once per group: NCCL and RCCL follow the fastest links inside a node and run one ring per NIC across
// nodes, RCCL each of them both ways; the other libraries one ring.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives.hpp"
#include "topology/topology.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

class GroupLayouts {
 public:
  // All references must outlive this object.
  GroupLayouts(const workloads::Program& program, const workloads::PlacementMap& placement,
               const topology::Topology& topology, const std::string& library);

  // The layout of `rank`'s group along `mask` (the same object for every member of the group).
  const GroupLayout& of(int64_t rank, workloads::AxisMask mask);

 private:
  std::vector<int32_t> ring_order(int64_t rank, workloads::AxisMask mask, const std::vector<int32_t>& node);
  std::vector<int32_t> channel_offsets(int64_t rank, workloads::AxisMask mask, const GroupLayout& layout) const;

  const workloads::Program& program_;
  const workloads::PlacementMap& placement_;
  const topology::Topology& topology_;
  bool channels_;          // NCCL/RCCL over the NICs each device is served by
  bool counter_rotating_;  // RCCL's rings run both ways (GroupLayout::counter_rotating)
  std::map<std::pair<workloads::AxisMask, int64_t>, GroupLayout> layouts_;  // by (mask, first member)
  std::map<std::vector<int64_t>, std::vector<int32_t>> node_rings_;         // by the devices' local indices
};

}  // namespace paratwin::sim
