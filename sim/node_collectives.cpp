#include "sim/node_collectives.hpp"

#include <algorithm>

#include "sim/folding.hpp"

namespace paratwin::sim {

NodeCollectives::NodeCollectives(const workloads::Program& program, const workloads::PlacementMap& placement,
                                 const topology::Topology& topology, GroupLayouts& layouts, StepCosts costs)
    : program_(program), placement_(placement), topology_(topology), layouts_(layouts), costs_(costs) {
  rank_at_device_.assign(static_cast<size_t>(topology.devices()), -1);
  for (int64_t r = 0; r < program.grid.size(); ++r) rank_at_device_[static_cast<size_t>(placement.device_of(r))] = r;
}

bool NodeCollectives::on_node(int64_t rank, workloads::AxisMask mask) {
  const auto key = std::make_pair(mask, program_.grid.group_member(rank, mask, 0));
  const auto it = on_node_.find(key);
  if (it != on_node_.end()) return it->second;
  return on_node_[key] = group_on_node(program_, placement_, topology_.machine().devices_per_node(), rank, mask);
}

double NodeCollectives::ring_bandwidth(int64_t rank, workloads::AxisMask mask) {
  const int64_t per_node = topology_.machine().devices_per_node();
  const int64_t node = placement_.device_of(rank) / per_node;
  const auto key = std::make_pair(mask, node);
  const auto it = ring_bandwidth_.find(key);
  if (it != ring_bandwidth_.end()) return it->second;
  std::vector<std::vector<int64_t>> rings;
  std::vector<int64_t> firsts;
  for (int64_t d = node * per_node; d < (node + 1) * per_node; ++d) {
    const int64_t r = rank_at_device_[static_cast<size_t>(d)];
    if (r < 0) continue;
    const int64_t first = program_.grid.group_member(r, mask, 0);
    if (std::find(firsts.begin(), firsts.end(), first) != firsts.end()) continue;
    firsts.push_back(first);
    // The rings the library runs through the group (RCCL's both ways), as devices.
    for (const auto& order : ring_orders(layouts_.of(r, mask))) {
      std::vector<int64_t> ring;
      for (int32_t k : order) ring.push_back(placement_.device_of(program_.grid.group_member(r, mask, k)));
      rings.push_back(std::move(ring));
    }
  }
  return ring_bandwidth_[key] = topology_.rings(rings).bandwidth;
}

double NodeCollectives::seconds(int64_t rank, const workloads::Op& op, Algorithm algorithm) {
  const auto& grid = program_.grid;
  const auto me = static_cast<int32_t>(grid.index_in_group(rank, op.group));
  const auto key = std::make_tuple(static_cast<int>(op.kind), static_cast<int>(algorithm), op.group, op.bytes, me,
                                   op.root, placement_.device_of(rank) / topology_.machine().devices_per_node());
  const auto it = seconds_.find(key);
  if (it != seconds_.end()) return it->second;
  const auto steps =
      costs_.plan(op.kind, algorithm, layouts_.of(rank, op.group, op.kind), me, op.bytes, op.root, Fidelity::fast);
  const bool rings = spec(algorithm).follows_rings;
  const double ring_bw = rings ? ring_bandwidth(rank, op.group) : 0;
  const int64_t device = placement_.device_of(rank);
  double total = 0;
  for (const Step& st : steps) {
    double transfer = 0, latency = 0;
    for (const auto* list : {&st.sends, &st.recvs})
      for (const Transfer& t : *list) {
        const auto path = topology_.path(device, placement_.device_of(grid.group_member(rank, op.group, t.peer)));
        const double bw = rings ? ring_bw : path.bandwidth;
        transfer = std::max(transfer, bw > 0 ? t.bytes / bw : 0);
        latency = std::max(latency, path.latency);
      }
    total += transfer + latency + costs_.after_transfers(st, latency, op.kind);
  }
  return seconds_[key] = total;
}

}  // namespace paratwin::sim
