// Direct all-to-all: every member exchanges with every other in one step (the pairwise exchange's
// transfers all at once).
#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool direct_supports(OpKind kind) {
  return kind == OpKind::all_to_all;
}

std::vector<Step> direct_plan(OpKind, const GroupLayout& layout, int32_t me, double bytes, int32_t, Fidelity) {
  return algorithms::pairwise(layout.size(), me, bytes, Fidelity::fast);  // every exchange in one step
}

}  // namespace

AlgorithmSpec direct_algorithm() {
  AlgorithmSpec s;
  s.name = "direct";
  s.supports = direct_supports;
  s.plan = direct_plan;
  s.loads = AnalyticalLoads::pairs;
  return s;
}

}  // namespace paratwin::sim
