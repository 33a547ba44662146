// A generic MPI over the node's NICs: rings for all-reduce, reduce-scatter and all-gather, binomial trees
// for broadcast and reduce, pairwise all-to-all, reductions on the CPU ([singh2025dissertation] §6.1.3).
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

LibrarySpec mpi_library() {
  LibrarySpec s;
  s.name = "mpi";
  s.host_reductions = true;
  s.default_algorithm = default_algorithm;
  s.select = select;
  return s;
}

}  // namespace paratwin::sim
