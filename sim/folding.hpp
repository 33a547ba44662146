#pragma once
// Folding for `fast` fidelity at scale: the ranks of a node run the same op list in lockstep, so one
// actor can stand for all of them. Its collectives inside the node are timed with the ring formula on
// the node's links (every group of the axis at once). Its transfers to other nodes go lane by lane: a
// lane is the ranks that share a NIC, and its transfers carry all their traffic through that NIC, to
// the same lane of the peer nodes. SimGrid's cost is per activity and per actor; this removes the
// intra-node transfers, divides the transfers by the ranks per NIC, and the actors, compute timers and
// per-step delays by the ranks per node. When the lanes of a node cannot move as one (their groups
// differ in shape) each lane is an actor of its own.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

struct Folding {
  bool active = false;
  bool whole_nodes = false;          // one actor per node (else one per NIC)
  std::string reason;                // why the program is not folded, when inactive
  std::vector<int64_t> rep;          // per rank: the rank whose actor stands for it (itself for a representative)
  std::vector<int32_t> weight;       // per rank: how many ranks its actor stands for (0 unless a representative)
  std::vector<int32_t> lane_weight;  // per rank: how many ranks its lane stands for (0 unless it leads a lane)
  std::vector<std::vector<int64_t>> lanes;  // per rank: the lanes its actor drives, itself first (empty unless a rep)
  int64_t actors = 0;
};

// Folds when every node's ranks run one role, and every collective group and pipeline peer of a lane
// is either on its node or made of lanes of equal weight on other nodes, one per node. Merges the
// lanes of each node into one actor when they hold the same place in every group that leaves the
// node and `whole_nodes` is asked. Otherwise returns an inactive Folding that says why.
Folding plan_folding(const workloads::Program& program, const workloads::PlacementMap& placement,
                     const topology::Machine& machine, bool whole_nodes = false);

// Whether every member of `rank`'s group over `mask` is on the rank's node.
bool group_on_node(const workloads::Program& program, const workloads::PlacementMap& placement,
                   int64_t devices_per_node, int64_t rank, workloads::AxisMask mask);

}  // namespace paratwin::sim
