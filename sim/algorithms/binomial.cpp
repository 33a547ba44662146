#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

// Binomial tree rooted at `root`: in round k, members with relative rank < 2^k send to rel + 2^k.
std::vector<Step> binomial(int32_t p, int32_t me, int32_t root, double bytes, bool reduce) {
  const int32_t rel = (me - root + p) % p;
  std::vector<Step> out;
  for (int32_t span = 1; span < p; span *= 2) {
    Step s;
    if (rel < span && rel + span < p) s.sends.push_back({(rel + span + root) % p, bytes});
    if (rel >= span && rel < 2 * span) s.recvs.push_back({(rel - span + root) % p, bytes});
    out.push_back(s);
  }
  if (reduce) {  // the same tree, leaves first, data flowing to the root
    std::vector<Step> rev(out.rbegin(), out.rend());
    for (auto& s : rev) {
      std::swap(s.sends, s.recvs);
      if (!s.recvs.empty()) s.reduce_bytes = bytes;
    }
    return rev;
  }
  return out;
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool binomial_supports(OpKind kind) {
  return kind == OpKind::broadcast || kind == OpKind::reduce;
}

std::vector<Step> binomial_plan(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, int32_t root,
                                Fidelity) {
  return algorithms::binomial(layout.size(), me, root < 0 ? 0 : root, bytes, kind == OpKind::reduce);
}

}  // namespace

AlgorithmSpec binomial_tree_algorithm() {
  AlgorithmSpec s;
  s.name = "binomial_tree";
  s.supports = binomial_supports;
  s.plan = binomial_plan;
  s.loads = AnalyticalLoads::own_steps;
  return s;
}

}  // namespace paratwin::sim
