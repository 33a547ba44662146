#include "topology/machine_size.hpp"

namespace paratwin::topology {

// Counted as Topology::build_node_routes() and build_network() build them.
MachineSize machine_size(const NodeSpec& node, const NetworkSpec& network) {
  MachineSize s;
  const double nics = static_cast<double>(node.nics.size());
  s.endpoints = static_cast<double>(node.device.count) + nics + static_cast<double>(node.routers.size());
  s.node_links = static_cast<double>(node.links.size());
  s.node_resources = 2 * (s.node_links + nics);
  if (network.kind == NetworkKind::dragonfly) {
    const auto& df = network.dragonfly;
    const double g = static_cast<double>(df.groups), sw = static_cast<double>(df.switches_per_group);
    const double local = g * sw * (sw - 1) / 2,
                 global = g * (g - 1) / 2 * static_cast<double>(df.global_links_per_pair);
    s.network_resources = 2 * (local + global) + (df.adaptive ? 2 * (g + g * sw) : 0);
  } else if (network.kind == NetworkKind::fat_tree) {
    const auto& ft = network.fat_tree;
    const size_t h = ft.down.size();
    for (size_t i = 0; i < h && i < ft.up.size(); ++i) {
      double elements = 1;  // at level i: Π_{j>i} down[j-1] · Π_{j<=i} up[j-1]
      for (size_t j = i + 1; j <= h; ++j) elements *= static_cast<double>(ft.down[j - 1]);
      for (size_t j = 1; j <= i; ++j) elements *= static_cast<double>(ft.up[j - 1]);
      s.network_resources += 2 * elements * static_cast<double>(ft.up[i]);
    }
  }
  return s;
}

}  // namespace paratwin::topology
