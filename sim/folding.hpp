#pragma once
// Folding for `fast` fidelity at scale: the ranks of a node run the same op list in lockstep, so one
// actor can stand for all of them. Its collectives inside the node are timed on the node's links
// (sim/node_collectives.hpp); every other phase it meets carries the transfers of all the ranks it
// stands for, each from its own device (sim/phases.hpp), so the links, NICs and network are loaded as
// by the unfolded run. SimGrid's cost is per actor and per activity: this divides the actors, compute
// timers and per-step delays by the ranks per node.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

enum class FoldBy { node, replica };

struct Folding {
  bool active = false;
  FoldBy by = FoldBy::node;
  std::string reason;           // why the program is not folded, when inactive
  std::vector<int64_t> rep;     // per rank: the rank whose actor stands for it (itself for a representative)
  std::vector<int32_t> weight;  // per rank: how many ranks its actor stands for (0 unless a representative)
  int64_t actors = 0;
};

// Folds every node's ranks into one actor when each node's ranks run one role and, for every
// pipeline peer stage, the counterparts of an actor's ranks all belong to one other actor. With
// FoldBy::replica, one actor also stands for the same node of every data-parallel replica: replicas
// run the same ops, and the data-parallel collectives they share become phases of a single actor
// that carry every replica's transfers. Otherwise returns an inactive Folding that says why.
Folding plan_folding(const workloads::Program& program, const workloads::PlacementMap& placement,
                     const topology::Machine& machine, FoldBy by = FoldBy::node);

// Whether every member of `rank`'s group over `mask` is on the rank's node.
bool group_on_node(const workloads::Program& program, const workloads::PlacementMap& placement,
                   int64_t devices_per_node, int64_t rank, workloads::AxisMask mask);

}  // namespace paratwin::sim
