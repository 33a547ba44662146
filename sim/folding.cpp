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

constexpr size_t kMaxForeignLanes = 6144;

Folding unfolded(std::string reason) {
  Folding f;
  f.reason = std::move(reason);
  return f;
}

// One actor per node: its lanes must hold the same place in every group that leaves the node (so one
// plan serves them all), and weigh the same (so their transfers carry the same bytes).
void merge_nodes(const workloads::Program& program, const workloads::PlacementMap& placement, int64_t per_node,
                 Folding& f) {
  const int64_t ranks = program.grid.size();
  std::map<int64_t, std::vector<int64_t>> lanes_of_node;
  for (int64_t r = 0; r < ranks; ++r)
    if (f.rep[static_cast<size_t>(r)] == r) lanes_of_node[placement.device_of(r) / per_node].push_back(r);
  bool several = false;
  for (const auto& [node, lanes] : lanes_of_node) {
    several = several || lanes.size() > 1;
    const int64_t first = lanes.front();
    const auto& role = program.roles[static_cast<size_t>(program.role_of(first))];
    std::set<workloads::AxisMask> all, masks;
    for (const Op& op : role.ops)
      if (workloads::is_collective(op.kind)) all.insert(op.group);
    for (workloads::AxisMask mask : all)
      if (!group_on_node(program, placement, per_node, first, mask)) masks.insert(mask);
    for (int64_t lane : lanes) {
      if (f.weight[static_cast<size_t>(lane)] != f.weight[static_cast<size_t>(first)]) return;
      for (workloads::AxisMask mask : masks)
        if (program.grid.index_in_group(lane, mask) != program.grid.index_in_group(first, mask)) return;
    }
  }
  if (!several) return;
  // SimGrid 3.32 keeps host-to-host flows (Comm::sendto) in one kernel list that every completion
  // walks whole: past about 6,000 lanes driven from another lane's actor, the walk costs more than the
  // actors it saves (GPT-80B: one actor per node 2x faster at 2,048 Frontier nodes, 1.2x slower at
  // 4,096). Beyond that, one actor per NIC.
  size_t foreign = 0;
  for (const auto& [node, lanes] : lanes_of_node) foreign += lanes.size() - 1;
  if (foreign > kMaxForeignLanes) return;
  for (const auto& [node, lanes] : lanes_of_node) {
    const int64_t first = lanes.front();
    for (size_t k = 1; k < lanes.size(); ++k) {
      f.weight[static_cast<size_t>(first)] += f.weight[static_cast<size_t>(lanes[k])];
      f.weight[static_cast<size_t>(lanes[k])] = 0;
      f.lanes[static_cast<size_t>(lanes[k])].clear();
    }
    f.lanes[static_cast<size_t>(first)] = lanes;
  }
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t lane = f.rep[static_cast<size_t>(r)];
    f.rep[static_cast<size_t>(r)] = lanes_of_node[placement.device_of(lane) / per_node].front();
  }
  f.actors = static_cast<int64_t>(lanes_of_node.size());
  f.whole_nodes = true;
}

}  // namespace

Folding plan_folding(const workloads::Program& program, const workloads::PlacementMap& placement,
                     const topology::Machine& machine, bool whole_nodes) {
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
  if (f.actors == ranks && !whole_nodes) return unfolded("one rank per NIC");
  f.active = true;
  f.lane_weight = f.weight;
  f.lanes.assign(static_cast<size_t>(ranks), {});
  for (int64_t r = 0; r < ranks; ++r)
    if (f.rep[static_cast<size_t>(r)] == r) f.lanes[static_cast<size_t>(r)] = {r};
  if (whole_nodes) merge_nodes(program, placement, per_node, f);
  if (f.actors == ranks) return unfolded("one rank per NIC, and the NICs of a node do not move as one");
  return f;
}

}  // namespace paratwin::sim
