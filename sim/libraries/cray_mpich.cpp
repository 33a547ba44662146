// HPE Cray MPICH with GPU buffers: rings for all-reduce, reduce-scatter and all-gather
// ([singh2025dissertation] §6.1.4), binomial trees for broadcast and reduce, pairwise all-to-all; every
// inter-node flow through the node's first NIC (§6.1.2) and reductions on the CPU (§6.1.3).
#include "sim/library.hpp"

namespace paratwin::sim {

namespace {

using workloads::OpKind;

Algorithm default_algorithm(OpKind kind) {
  if (kind == OpKind::broadcast || kind == OpKind::reduce) return Algorithm::binomial_tree;
  return kind == OpKind::all_to_all ? Algorithm::pairwise : Algorithm::ring;
}

Algorithm select(OpKind kind, const GroupLayout&, double, Tuner&) {
  return default_algorithm(kind);
}

}  // namespace

LibrarySpec cray_mpich_library() {
  LibrarySpec s;
  s.name = "cray-mpich";
  s.host_reductions = true;
  s.one_nic_per_node = true;
  s.default_algorithm = default_algorithm;
  s.select = select;
  return s;
}

}  // namespace paratwin::sim
