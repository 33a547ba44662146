#include <algorithm>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

// NCCL's PAT (v2.23+, src/include/collectives.h PatAGAlgorithm / PatRSAlgorithm): the all-gather's data
// travels along binomial trees rooted at every rank at once, one tree dimension per step, each step
// aggregating the data of every tree that crosses it: at distance d = 1, 2, 4, ... a rank sends what it
// holds of min(d, p - d) ranks to rank - d and receives as much from rank + d (the Bruck order, so any p
// works; for a power of two it moves what recursive doubling moves, step by step). The reduce-scatter
// runs the same steps backwards, distances falling, reducing what it receives. NCCL aggregates a
// dimension's sends only as far as its buffers allow (aggFactor); with the 1 MiB+ buffers of the
// collectives priced here every dimension is one aggregated step.
std::vector<Step> pat(OpKind kind, int32_t p, int32_t me, double bytes) {
  const double chunk = bytes / p;
  std::vector<Step> out;
  for (int32_t d = 1; d < p; d *= 2) {
    const double moved = std::min(d, p - d) * chunk;
    Step s;
    if (kind == OpKind::reduce_scatter) {
      s.sends.push_back({(me + d) % p, moved});
      s.recvs.push_back({(me - d + p) % p, moved});
      s.reduce_bytes = moved;
    } else {
      s.sends.push_back({(me - d + p) % p, moved});
      s.recvs.push_back({(me + d) % p, moved});
    }
    out.push_back(s);
  }
  if (kind == OpKind::reduce_scatter) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool pat_supports(OpKind kind) {
  return kind == OpKind::all_gather || kind == OpKind::reduce_scatter;
}

std::vector<Step> pat_plan(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, int32_t, Fidelity) {
  return algorithms::pat(kind, layout.size(), me, bytes);
}

std::optional<NcclAlgorithm> pat_in_nccl(OpKind) {
  return NcclAlgorithm::pat;
}

}  // namespace

AlgorithmSpec pat_algorithm() {
  AlgorithmSpec s;
  s.name = "pat";
  s.supports = pat_supports;
  s.plan = pat_plan;
  s.loads = AnalyticalLoads::own_steps;
  s.nccl = pat_in_nccl;
  return s;
}

}  // namespace paratwin::sim
