#pragma once
// What a machine costs the simulator, from its description alone: the Topology's resources (each one
// SimGrid link of the platform) and the node's route table. The loader refuses machines beyond what
// SimGrid and memory can hold; the estimate is exact (the Topology of any slice has this many
// resources), and computed in double because a malformed description's products overflow int64.
#include "topology/machine.hpp"

namespace paratwin::topology {

struct MachineSize {
  double endpoints = 0;          // devices + NICs + routers of a node: its route table has endpoints² routes
  double node_links = 0;         // links of a node: its route table costs a Dijkstra over them per endpoint
  double node_resources = 0;     // per node: both directions of every node link and NIC injection link
  double network_resources = 0;  // the switches' links, built whole for any slice of the nodes
  double resources(double nodes) const { return nodes * node_resources + network_resources; }
};

MachineSize machine_size(const NodeSpec& node, const NetworkSpec& network);
inline MachineSize machine_size(const Machine& m) {
  return machine_size(m.node, m.network);
}

}  // namespace paratwin::topology
