#include "sim/folding.hpp"

#include <map>
#include <set>

namespace paratwin::sim {

using workloads::Op;
using workloads::OpKind;

bool group_on_node(const workloads::Program& program, const workloads::PlacementMap& placement,
                   int64_t devices_per_node, int64_t rank, workloads::AxisMask mask) {
  const int64_t node = placement.device_of(rank) / devices_per_node;
  const int64_t size = program.grid.group_size(mask);
  for (int64_t k = 0; k < size; ++k)
    if (placement.device_of(program.grid.group_member(rank, mask, k)) / devices_per_node != node) return false;
  return true;
}

namespace {

Folding unfolded(std::string reason) {
  Folding f;
  f.reason = std::move(reason);
  return f;
}

}  // namespace

Folding plan_folding(const workloads::Program& program, const workloads::PlacementMap& placement,
                     const topology::Machine& machine) {
  const int64_t per_node = machine.devices_per_node();
  const int64_t ranks = program.grid.size();
  if (per_node <= 1) return unfolded("one device per node");
  if (machine.nics_per_node() == 0) return unfolded("the node has no NIC");
  Folding f;
  f.rep.assign(static_cast<size_t>(ranks), -1);
  f.weight.assign(static_cast<size_t>(ranks), 0);
  std::map<std::pair<int64_t, int>, int64_t> first;  // (node, NIC) -> representative
  std::map<int64_t, int64_t> role_of_node;
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t device = placement.device_of(r);
    const int64_t node = device / per_node;
    const int nic = machine.nic_of(device % per_node);
    if (nic < 0) return unfolded("device " + std::to_string(device % per_node) + " has no NIC");
    const auto [at, fresh] = role_of_node.emplace(node, program.role_of(r));
    if (!fresh && at->second != program.role_of(r))
      return unfolded("node " + std::to_string(node) + " holds ranks of different pipeline stages");
    const int64_t rep = first.emplace(std::make_pair(node, nic), r).first->second;
    f.rep[static_cast<size_t>(r)] = rep;
    ++f.weight[static_cast<size_t>(rep)];
  }
  const auto node_of = [&](int64_t r) { return placement.device_of(r) / per_node; };
  const int pipe = program.grid.axis_index("pipe");
  for (int64_t r = 0; r < ranks; ++r) {
    if (f.rep[static_cast<size_t>(r)] != r) continue;
    ++f.actors;
    const auto& role = program.roles[static_cast<size_t>(program.role_of(r))];
    std::set<workloads::AxisMask> masks;
    std::set<int64_t> peer_stages;
    for (const Op& op : role.ops) {
      if (workloads::is_collective(op.kind)) masks.insert(op.group);
      if (workloads::is_p2p(op.kind)) peer_stages.insert(op.peer_stage);
    }
    for (workloads::AxisMask mask : masks) {
      if (group_on_node(program, placement, per_node, r, mask)) continue;
      std::set<int64_t> nodes;
      for (int64_t k = 0; k < program.grid.group_size(mask); ++k) {
        const int64_t m = program.grid.group_member(r, mask, k);
        if (f.rep[static_cast<size_t>(m)] != m ||
            f.weight[static_cast<size_t>(m)] != f.weight[static_cast<size_t>(r)] || !nodes.insert(node_of(m)).second)
          return unfolded("rank " + std::to_string(r) + "'s group \"" + program.grid.mask_name(mask) +
                          "\" has several members on one node and members on other nodes");
      }
    }
    for (int64_t stage : peer_stages) {
      const int64_t peer = program.grid.with_coord(r, pipe, stage);
      if (f.rep[static_cast<size_t>(peer)] != peer || node_of(peer) == node_of(r) ||
          f.weight[static_cast<size_t>(peer)] != f.weight[static_cast<size_t>(r)])
        return unfolded("rank " + std::to_string(r) + "'s pipeline peer " + std::to_string(peer) +
                        " is not its counterpart on another node");
    }
  }
  if (f.actors == ranks) return unfolded("one rank per NIC");
  f.active = true;
  return f;
}

}  // namespace paratwin::sim
