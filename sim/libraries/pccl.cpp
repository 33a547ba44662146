// PCCL ([singh2025dissertation] §6.2): all-gather and reduce-scatter by its two-level hierarchical design
// (an intra-node ring of the vendor library, recursive doubling/halving between nodes). It implements
// those two kinds only: the ZeRO-3 runs of §6.3.2 issue every other collective (the data-parallel
// all-reduce among them) with the vendor library, laid out and tuned as that library does
// (library_running); its intra-node phase is the vendor's too (§6.2.2: RCCL on Frontier).
#include "sim/library.hpp"

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool implements(OpKind kind) {
  return kind == OpKind::all_gather || kind == OpKind::reduce_scatter;
}

Algorithm default_algorithm(OpKind kind) {
  if (implements(kind)) return Algorithm::hierarchical;
  return kind == OpKind::all_to_all ? Algorithm::pairwise : Algorithm::ring;
}

Algorithm select(OpKind kind, const GroupLayout&, double, Tuner&) {
  return default_algorithm(kind);
}

}  // namespace

LibrarySpec pccl_library() {
  LibrarySpec s;
  s.name = "pccl";
  s.implements = implements;
  s.default_algorithm = default_algorithm;
  s.select = select;
  return s;
}

}  // namespace paratwin::sim
