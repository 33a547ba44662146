#pragma once
// The ring a collective library builds through the devices of one node: NCCL and RCCL search the node's
// topology for rings along the fastest links instead of visiting devices by index.
#include <cstdint>
#include <vector>

#include "topology/topology.hpp"

namespace paratwin::sim {

// The cyclic order of `devices` (global device indices, all on one node) with the largest per-flow
// bottleneck bandwidth when every ring edge carries a flow at once, then the fewest links, then the
// first in lexicographic order (deterministic). Returns positions into `devices`, starting with 0.
// Nodes of more than 9 devices keep their order (the search is exhaustive).
std::vector<int32_t> fastest_ring(const topology::Topology& topology, const std::vector<int64_t>& devices);

}  // namespace paratwin::sim
