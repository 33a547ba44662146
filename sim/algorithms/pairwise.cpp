#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

// Pairwise exchange: in step s, send to me + s and receive from me - s.
std::vector<Step> pairwise(int32_t p, int32_t me, double bytes, Fidelity fidelity) {
  const double block = bytes / p;
  std::vector<Step> out;
  if (fidelity == Fidelity::fast) {
    Step s;
    for (int32_t k = 1; k < p; ++k) {
      s.sends.push_back({(me + k) % p, block});
      s.recvs.push_back({(me - k + p) % p, block});
    }
    return {s};
  }
  for (int32_t k = 1; k < p; ++k) {
    Step s;
    s.sends.push_back({(me + k) % p, block});
    s.recvs.push_back({(me - k + p) % p, block});
    out.push_back(s);
  }
  return out;
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool pairwise_supports(OpKind kind) {
  return kind == OpKind::all_to_all;
}

std::vector<Step> pairwise_plan(OpKind, const GroupLayout& layout, int32_t me, double bytes, int32_t,
                                Fidelity fidelity) {
  return algorithms::pairwise(layout.size(), me, bytes, fidelity);
}

}  // namespace

AlgorithmSpec pairwise_algorithm() {
  AlgorithmSpec s;
  s.name = "pairwise";
  s.supports = pairwise_supports;
  s.plan = pairwise_plan;
  s.loads = AnalyticalLoads::pairs;
  return s;
}

}  // namespace paratwin::sim
