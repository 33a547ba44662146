#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

// PCCL (Thesis, [singh2025dissertation] §6.2): all-gather runs inter-node all-gathers among the members with the same
// place in their node (all NICs busy at once), then intra-node ring all-gathers, then a local shuffle;
// reduce-scatter the reverse (shuffle, intra-node ring, inter-node); all-reduce both. The inter-node
// phase is recursive doubling (all-gather) and halving (reduce-scatter) over Cray MPICH's point-to-point
// calls (§6.2.3), a ring where the node count is not a power of two. A group with one member per node
// (AxoNN's z groups on Frontier, the Thesis's inter-node case) is that inter-node phase alone: no intra-node
// ring and no shuffle, the output already in member order. A group inside one node is RCCL's ring
// (§6.2.2); groups whose nodes hold different numbers of members fall back to one ring too.
std::vector<Step> hierarchical(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, Fidelity fidelity) {
  const int32_t m = layout.members_per_node();
  const auto by_node = members_by_node(layout);
  const auto nodes = static_cast<int32_t>(by_node.size());
  if (m == 0 || nodes == 1) {  // uneven nodes, or one node: a single ring
    GroupLayout single = layout;
    single.channel_offsets.clear();
    return plan(kind, Algorithm::ring, single, me, bytes, -1, fidelity);
  }
  const int32_t p = layout.size();
  const int32_t j = layout.node[static_cast<size_t>(me)];
  const Order& intra = by_node[static_cast<size_t>(j)];
  const int32_t l = position(intra, me);
  Order inter;
  for (const auto& members : by_node) inter.push_back(members[static_cast<size_t>(l)]);

  const auto inter_gather = [&](double chunk) {
    return power_of_two(nodes) ? doubling(inter, j, chunk) : rings({inter}, me, nodes - 1, chunk, 0, fidelity);
  };
  const auto inter_reduce = [&](double input) {
    return power_of_two(nodes) ? halving(inter, j, input)
                               : rings({inter}, me, nodes - 1, input / nodes, nodes - 1, fidelity);
  };
  if (m == 1) {  // the inter-node phase alone
    if (kind == OpKind::all_gather) return inter_gather(bytes / p);
    auto steps = inter_reduce(bytes);
    if (kind != OpKind::reduce_scatter) append(steps, inter_gather(bytes / p));
    return steps;
  }
  const auto gather = [&] {
    auto steps = inter_gather(bytes / p);
    append(steps, rings(with_reverse({intra}, layout.counter_rotating), me, m - 1, bytes / m, 0, fidelity));
    steps.back().local_bytes += 2 * bytes;  // read and write the whole output once
    return steps;
  };
  const auto reduce = [&] {
    auto steps = rings(with_reverse({intra}, layout.counter_rotating), me, m - 1, bytes / m, m - 1, fidelity);
    steps.front().local_bytes += 2 * bytes;
    append(steps, inter_reduce(bytes / m));
    return steps;
  };
  switch (kind) {
    case OpKind::all_gather:
      return gather();
    case OpKind::reduce_scatter:
      return reduce();
    default: {
      auto steps = reduce();
      append(steps, gather());
      return steps;
    }
  }
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool hierarchical_supports(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::reduce_scatter || kind == OpKind::all_gather;
}

std::vector<Step> hierarchical_plan(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, int32_t,
                                    Fidelity fidelity) {
  return algorithms::hierarchical(kind, layout, me, bytes, fidelity);
}

}  // namespace

AlgorithmSpec hierarchical_algorithm() {
  AlgorithmSpec s;
  s.name = "hierarchical";
  s.supports = hierarchical_supports;
  s.plan = hierarchical_plan;
  s.loads = AnalyticalLoads::own_steps;
  s.follows_rings = true;
  return s;
}

}  // namespace paratwin::sim
