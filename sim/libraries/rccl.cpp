// AMD's RCCL: NCCL's algorithms (sim/libraries/nccl.cpp), its rings in counter-rotating pairs (ROCm/rccl
// src/graph/rome_models.cc: the 8-GCD, 4-NIC MI250X node runs each ring both ways), the all-reduce tuned
// between ring and tree as NCCL tunes it; no PAT and no NCCL tuning tables.
#include "sim/library.hpp"
#include "sim/tuner.hpp"

namespace paratwin::sim {

namespace {

using workloads::OpKind;

// NCCL's selector without PAT.
Algorithm select(OpKind kind, const GroupLayout& layout, double bytes, Tuner& tuner) {
  static const auto fallback = nccl_library().default_algorithm;
  if (kind == OpKind::all_reduce) return tuner.ring_or_tree(fallback(kind), kind, layout, bytes);
  return fallback(kind);
}

}  // namespace

LibrarySpec rccl_library() {
  LibrarySpec s = nccl_library();  // NCCL's channels and default algorithms
  s.name = "rccl";
  s.counter_rotating = true;
  s.nccl_tables = false;
  s.select = select;
  return s;
}

}  // namespace paratwin::sim
