#include "sim/folding.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace paratwin::sim {

using workloads::Op;

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
                     const topology::Machine& machine, FoldBy by) {
  const int64_t per_node = machine.devices_per_node();
  const int64_t ranks = program.grid.size();
  const auto node_of = [&](int64_t r) { return placement.device_of(r) / per_node; };
  // Classes of ranks one actor stands for: union-find over ranks, joined by node (and replica).
  std::vector<int64_t> parent(static_cast<size_t>(ranks));
  for (int64_t r = 0; r < ranks; ++r) parent[static_cast<size_t>(r)] = r;
  const auto find = [&](int64_t x) {
    while (parent[static_cast<size_t>(x)] != x)
      x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  };
  const auto join = [&](int64_t a, int64_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  };
  std::map<int64_t, int64_t> first_on_node;
  for (int64_t r = 0; r < ranks; ++r) join(r, first_on_node.emplace(node_of(r), r).first->second);
  const int data = program.grid.axis_index("data");
  const bool replicas = by == FoldBy::replica && data >= 0 && program.grid.axes()[static_cast<size_t>(data)].size > 1;
  if (replicas)
    for (int64_t r = 0; r < ranks; ++r) join(r, program.grid.with_coord(r, data, 0));
  Folding f;
  f.by = replicas ? FoldBy::replica : FoldBy::node;
  f.rep.assign(static_cast<size_t>(ranks), -1);
  f.weight.assign(static_cast<size_t>(ranks), 0);
  std::map<int64_t, std::vector<int64_t>> members;  // representative -> its ranks
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t rep = find(r);
    if (program.role_of(rep) != program.role_of(r))
      return unfolded("node " + std::to_string(node_of(r)) + " holds ranks of different pipeline stages");
    f.rep[static_cast<size_t>(r)] = rep;
    ++f.weight[static_cast<size_t>(rep)];
    members[rep].push_back(r);
  }
  if (static_cast<int64_t>(members.size()) == ranks) return unfolded("one rank per node");
  // A pipeline message of a folded actor goes to one actor: the counterparts of its ranks at the
  // peer stage must belong to one other actor.
  const int pipe = program.grid.axis_index("pipe");
  for (const auto& [rep, ranks_of_actor] : members) {
    std::set<int64_t> peer_stages;
    for (const Op& op : program.roles[static_cast<size_t>(program.role_of(rep))].ops)
      if (workloads::is_p2p(op.kind)) peer_stages.insert(op.peer_stage);
    for (int64_t stage : peer_stages) {
      const int64_t peer_actor = f.rep[static_cast<size_t>(program.grid.with_coord(rep, pipe, stage))];
      for (int64_t r : ranks_of_actor) {
        const int64_t peer = program.grid.with_coord(r, pipe, stage);
        if (f.rep[static_cast<size_t>(peer)] != peer_actor || peer_actor == rep)
          return unfolded("rank " + std::to_string(r) + "'s pipeline peer " + std::to_string(peer) +
                          " does not fold with the peers of the ranks folded with it");
      }
    }
  }
  f.actors = static_cast<int64_t>(members.size());
  f.active = true;
  return f;
}

}  // namespace paratwin::sim
