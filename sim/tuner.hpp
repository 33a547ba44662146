#pragma once
// How NCCL and RCCL pick the algorithm of an all-reduce: their tuner (NCCL src/graph/tuning.cc)
// estimates every algorithm's time from a latency per step and the bandwidth of the links the
// algorithm uses, and runs the fastest: rings for large buffers on few nodes, the double binary tree
// where a ring's 2(p-1) steps of latency dominate (many nodes, small or medium buffers). The tuner
// here does the same with the machine profile's step cost and the node graph's and NICs' bandwidths,
// knowing nothing of the other traffic (as NCCL's does not). Under PCCL the all-reduce is the vendor
// library's and tuned the same way (library_running). NCCL v2.23+ (profile.nccl.tuning "2.23", "2.27")
// also weighs PAT against the ring for an all-gather or reduce-scatter over one rank per node, with
// NCCL's own estimates. Other kinds and libraries keep default_algorithm; an algorithm forced by the
// user wins. Which library tunes what is its selector's (sim/libraries/).
#include <map>
#include <string>
#include <tuple>

#include "sim/collectives.hpp"
#include "topology/topology.hpp"

namespace paratwin::sim {

class Tuner {
 public:
  Tuner(const topology::Topology& topology, std::string library, std::map<workloads::OpKind, Algorithm> forced = {});

  // The algorithm the library runs for a collective of `kind` and `bytes` over a group laid out as
  // `layout` (layouts live as long as the GroupLayouts that made them; choices are cached by address).
  Algorithm choose(workloads::OpKind kind, const GroupLayout& layout, double bytes);
  // What the libraries' selectors (sim/libraries/) ask of the tuner. PAT or `fallback` for an all-gather
  // or reduce-scatter, as NCCL v2.23+ chooses with its own estimates where the machine names its tables
  // and the group is one rank per node; else `fallback`.
  Algorithm pat_or(Algorithm fallback, workloads::OpKind kind, const GroupLayout& layout, double bytes);
  // Ring or double binary tree for an all-reduce across nodes, whichever estimate is lower; `fallback`
  // for a group of two or inside one node.
  Algorithm ring_or_tree(Algorithm fallback, workloads::OpKind kind, const GroupLayout& layout, double bytes);
  // The tuner's estimate of one all-reduce's seconds with `algorithm` (ring or tree), or NCCL's of an
  // all-gather or reduce-scatter with PAT where NCCL has it; others: infinity.
  double estimate(workloads::OpKind kind, Algorithm algorithm, const GroupLayout& layout, double bytes) const;

 private:
  std::string library_;
  std::string all_reduce_library_;  // the library that runs the all-reduce (library_running)
  std::map<workloads::OpKind, Algorithm> forced_;
  StepCosts costs_;
  double intra_bandwidth_ = 0, intra_latency_ = 0;  // between two devices of a node
  double tree_chain_bandwidth_ = 0;                 // an edge of both trees' chain through a node
  double inter_bandwidth_ = 0, inter_latency_ = 0;  // one NIC; a path between nodes
  int nics_ = 1;                                    // NICs a node's inter-node flows share
  std::map<std::tuple<const GroupLayout*, int, double>, Algorithm> chosen_;
};

}  // namespace paratwin::sim
