#pragma once
// A machine as `paratwin machine` shows it, as text: the catalog of built-in machines, and one machine's
// devices, links, NICs, path bandwidths, network and fitted profile.
#include <string>

#include "topology/machine.hpp"

namespace paratwin::topology {

// One line per built-in machine (nodes, devices per node, devices, network, device kind).
std::string machine_list_text();

// `paratwin machine show`: the description and its sources, the node (devices, host, links, NICs), the
// path bandwidth between every two devices of a node, the network with a near and a far path, and the
// profile, its GEMM model read as the efficiency of square GEMMs.
std::string machine_text(const Machine& m);

}  // namespace paratwin::topology
