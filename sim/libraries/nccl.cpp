// NVIDIA's NCCL: rings (one per NIC, GPU reductions) for all-reduce, reduce-scatter and all-gather, its
// pipelined chains along the rings for broadcast and reduce, pairwise all-to-all; its tuner weighs the
// double binary tree against the ring for an all-reduce across nodes (NCCL src/graph/tuning.cc) and,
// from v2.23, PAT against the ring for an all-gather or reduce-scatter over one rank per node.
#include "sim/library.hpp"
#include "sim/tuner.hpp"

namespace paratwin::sim {

namespace {

using workloads::OpKind;

Algorithm default_algorithm(OpKind kind) {
  return kind == OpKind::all_to_all ? Algorithm::pairwise : Algorithm::ring;
}

Algorithm select(OpKind kind, const GroupLayout& layout, double bytes, Tuner& tuner) {
  if (kind == OpKind::all_gather || kind == OpKind::reduce_scatter)
    return tuner.pat_or(default_algorithm(kind), kind, layout, bytes);
  if (kind == OpKind::all_reduce) return tuner.ring_or_tree(default_algorithm(kind), kind, layout, bytes);
  return default_algorithm(kind);
}

}  // namespace

LibrarySpec nccl_library() {
  LibrarySpec s;
  s.name = "nccl";
  s.channels = true;
  s.rail_matched_nics = true;
  s.nccl_tables = true;
  s.default_algorithm = default_algorithm;
  s.select = select;
  return s;
}

}  // namespace paratwin::sim
