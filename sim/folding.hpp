#pragma once
// Folding for `fast` fidelity at scale: the ranks of a node that share a NIC run the same op list in
// lockstep, so one actor can stand for all of them. Its collectives inside the node are timed with
// the ring formula on the node's links (every group of the axis at once), and its transfers to other
// nodes carry the traffic of all the ranks it stands for, through their common NIC. SimGrid's cost is
// per activity; this divides the activities by the ranks per NIC and removes the intra-node ones.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

struct Folding {
  bool active = false;
  std::string reason;           // why the program is not folded, when inactive
  std::vector<int64_t> rep;     // per rank: the rank whose actor stands for it (itself for a representative)
  std::vector<int32_t> weight;  // per rank: how many ranks its actor stands for (0 unless a representative)
  int64_t actors = 0;
};

// Folds when every node's ranks run one role, and every collective group and pipeline peer of a
// representative is either on its node or made of representatives of equal weight on other nodes,
// one per node. Otherwise returns an inactive Folding that says why.
Folding plan_folding(const workloads::Program& program, const workloads::PlacementMap& placement,
                     const topology::Machine& machine);

// Whether every member of `rank`'s group over `mask` is on the rank's node.
bool group_on_node(const workloads::Program& program, const workloads::PlacementMap& placement,
                   int64_t devices_per_node, int64_t rank, workloads::AxisMask mask);

}  // namespace paratwin::sim
