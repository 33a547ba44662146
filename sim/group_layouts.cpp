#include "sim/group_layouts.hpp"

#include <algorithm>

#include "sim/library.hpp"
#include "sim/ring_order.hpp"

namespace paratwin::sim {

GroupLayouts::GroupLayouts(const workloads::Program& program, const workloads::PlacementMap& placement,
                           const topology::Topology& topology, const std::string& library)
    : program_(program),
      placement_(placement),
      topology_(topology),
      library_(library_spec(library)),
      channels_(library_.channels && !topology.options().one_nic_per_node),
      // A library that leaves some kinds to the vendor library runs its intra-node phase on the vendor's
      // rings too (PCCL: [singh2025dissertation] §6.2.2, RCCL's on Frontier).
      counter_rotating_(
          library_.counter_rotating ||
          (!library_.implements_every_kind() && library_spec(vendor_library(topology.machine())).counter_rotating)) {
}

bool GroupLayouts::vendor_runs(workloads::OpKind kind) const {
  return !library_.runs(kind);
}

const GroupLayout& GroupLayouts::of(int64_t rank, workloads::AxisMask mask, workloads::OpKind kind) {
  return vendor_runs(kind) ? vendor_of(rank, mask) : of(rank, mask);
}

const GroupLayout& GroupLayouts::vendor_of(int64_t rank, workloads::AxisMask mask) {
  const auto key = std::make_pair(mask, program_.grid.group_member(rank, mask, 0));
  if (const auto it = vendor_layouts_.find(key); it != vendor_layouts_.end()) return it->second;
  // The vendor library's rings through the same members: one per NIC (NCCL's and RCCL's channels).
  GroupLayout layout = of(rank, mask);
  if (!topology_.options().one_nic_per_node) layout.channel_offsets = channel_offsets(rank, mask, layout);
  return vendor_layouts_.emplace(key, std::move(layout)).first->second;
}

// The nodes of `rank`'s group along `mask`, and the rings NCCL/RCCL run across them: one per NIC
// that a node's members use (the other libraries run one ring).
const GroupLayout& GroupLayouts::of(int64_t rank, workloads::AxisMask mask) {
  const auto& grid = program_.grid;
  const auto key = std::make_pair(mask, grid.group_member(rank, mask, 0));
  auto it = layouts_.find(key);
  if (it != layouts_.end()) return it->second;
  const auto& machine = topology_.machine();
  const int64_t per_node = machine.devices_per_node();
  const auto size = static_cast<int32_t>(grid.group_size(mask));
  GroupLayout layout;
  std::map<int64_t, int32_t> number;  // node -> order of first appearance
  for (int32_t k = 0; k < size; ++k) {
    const int64_t device = placement_.device_of(grid.group_member(rank, mask, k));
    layout.node.push_back(number.emplace(device / per_node, static_cast<int32_t>(number.size())).first->second);
  }
  layout.order = ring_order(rank, mask, layout.node);
  layout.counter_rotating = counter_rotating_;
  if (channels_) layout.channel_offsets = channel_offsets(rank, mask, layout);
  return layouts_.emplace(key, std::move(layout)).first->second;
}

// NCCL/RCCL channels: one ring per NIC that the members of the first node use, entering and leaving
// each node through two neighbours in ring order that this NIC serves (NIC k to NIC k: no detour
// through other switches), or evenly spaced when the ring pairs no such neighbours (a NIC per GPU: the
// member leaving a node then sends through the NIC of the member entering the next, as NCCL's
// same-NIC ring graphs do; topology::TopologyOptions::rail_matched_nics).
std::vector<int32_t> GroupLayouts::channel_offsets(int64_t rank, workloads::AxisMask mask,
                                                   const GroupLayout& layout) const {
  const auto& machine = topology_.machine();
  const int64_t per_node = machine.devices_per_node();
  std::vector<int> nics;  // NIC of each member of the first node, in ring order
  for (int32_t k : layout.order) {
    if (layout.node[static_cast<size_t>(k)] != 0) break;
    nics.push_back(machine.nic_of(placement_.device_of(program_.grid.group_member(rank, mask, k)) % per_node));
  }
  const auto m = static_cast<int32_t>(nics.size());
  std::vector<int> distinct;
  for (int nic : nics)
    if (nic >= 0 && std::find(distinct.begin(), distinct.end(), nic) == distinct.end()) distinct.push_back(nic);
  if (distinct.size() <= 1) return {};
  std::vector<int32_t> offsets;
  for (int nic : distinct)
    for (int32_t o = 0; o < m; ++o)
      if (nics[static_cast<size_t>(o)] == nic && nics[static_cast<size_t>((o + m - 1) % m)] == nic) {
        offsets.push_back(o);
        break;
      }
  if (offsets.size() == distinct.size()) return offsets;
  offsets.clear();
  const auto c = static_cast<int32_t>(distinct.size());
  for (int32_t k = 0; k < c; ++k) offsets.push_back(k * m / c);
  return offsets;
}

// Members in ring order: inside each node along the fastest ring through the node's devices (the same
// on every node that holds the same devices), node after node.
std::vector<int32_t> GroupLayouts::ring_order(int64_t rank, workloads::AxisMask mask,
                                              const std::vector<int32_t>& node) {
  const auto& grid = program_.grid;
  const int64_t per_node = topology_.machine().devices_per_node();
  std::vector<std::vector<int32_t>> by_node;
  for (int32_t k = 0; k < static_cast<int32_t>(node.size()); ++k) {
    if (by_node.size() <= static_cast<size_t>(node[static_cast<size_t>(k)]))
      by_node.resize(node[static_cast<size_t>(k)] + 1);
    by_node[static_cast<size_t>(node[static_cast<size_t>(k)])].push_back(k);
  }
  std::vector<int32_t> order;
  for (const auto& members : by_node) {
    std::vector<int64_t> devices, locals;
    for (int32_t k : members) {
      devices.push_back(placement_.device_of(grid.group_member(rank, mask, k)));
      locals.push_back(devices.back() % per_node);
    }
    auto it = node_rings_.find(locals);
    if (it == node_rings_.end()) it = node_rings_.emplace(locals, fastest_ring(topology_, devices)).first;
    for (int32_t pos : it->second) order.push_back(members[static_cast<size_t>(pos)]);
  }
  return order;
}

}  // namespace paratwin::sim
