#pragma once
// Where the members of a group sit and the rings a library runs through them (GroupLayout), worked out
// once per group: NCCL and RCCL follow the fastest links inside a node and run one ring per NIC across
// nodes, RCCL each of them both ways; the other libraries one ring.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/library.hpp"
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
  // The layout a collective of `kind` runs on: under PCCL the kinds the vendor library runs
  // (library_running) take its rings, one per NIC; every other kind and library, of(rank, mask).
  const GroupLayout& of(int64_t rank, workloads::AxisMask mask, workloads::OpKind kind);
  // Whether the vendor library runs collectives of `kind` here (PCCL's all-reduce, broadcast, reduce).
  bool vendor_runs(workloads::OpKind kind) const;
  // The same members as the vendor library lays its rings through them (PCCL's vendor kinds).
  const GroupLayout& vendor_of(int64_t rank, workloads::AxisMask mask);

 private:
  std::vector<int32_t> ring_order(int64_t rank, workloads::AxisMask mask, const std::vector<int32_t>& node);
  std::vector<int32_t> channel_offsets(int64_t rank, workloads::AxisMask mask, const GroupLayout& layout) const;

  const workloads::Program& program_;
  const workloads::PlacementMap& placement_;
  const topology::Topology& topology_;
  const LibrarySpec& library_;
  bool channels_;          // NCCL/RCCL over the NICs each device is served by
  bool counter_rotating_;  // RCCL's rings run both ways (GroupLayout::counter_rotating)
  std::map<std::pair<workloads::AxisMask, int64_t>, GroupLayout> layouts_;         // by (mask, first member)
  std::map<std::pair<workloads::AxisMask, int64_t>, GroupLayout> vendor_layouts_;  // PCCL's vendor kinds
  std::map<std::vector<int64_t>, std::vector<int32_t>> node_rings_;                // by the devices' local indices
};

}  // namespace paratwin::sim
