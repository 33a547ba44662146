// AMD's RCCL: NCCL's algorithms, its rings in counter-rotating pairs (ROCm/rccl src/graph/rome_models.cc:
// the 8-GCD, 4-NIC MI250X node runs each ring both ways), the all-reduce tuned between ring and tree as
// NCCL tunes it; no PAT and no NCCL tuning tables.
#include "sim/library.hpp"
#include "sim/tuner.hpp"

namespace paratwin::sim {

namespace {

using workloads::OpKind;

Algorithm default_algorithm(OpKind kind) {
  return kind == OpKind::all_to_all ? Algorithm::pairwise : Algorithm::ring;
}

Algorithm select(OpKind kind, const GroupLayout& layout, double bytes, Tuner& tuner) {
  if (kind == OpKind::all_reduce) return tuner.ring_or_tree(default_algorithm(kind), kind, layout, bytes);
  return default_algorithm(kind);
}

}  // namespace

LibrarySpec rccl_library() {
  LibrarySpec s;
  s.name = "rccl";
  s.channels = true;
  s.counter_rotating = true;
  s.default_algorithm = default_algorithm;
  s.select = select;
  return s;
}

}  // namespace paratwin::sim
