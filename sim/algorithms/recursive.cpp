#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

// Recursive halving over `members` (reduce-scatter of an `input`-byte buffer): at each step exchange
// half of what is left with the member at distance q/2, q/4, ..., 1 and reduce it.
std::vector<Step> halving(const Order& members, int32_t pos, double input) {
  std::vector<Step> out;
  double b = input;
  for (auto d = static_cast<int32_t>(members.size()) / 2; d >= 1; d /= 2) {
    b /= 2;
    Step s;
    const int32_t peer = members[static_cast<size_t>(pos ^ d)];
    s.sends.push_back({peer, b});
    s.recvs.push_back({peer, b});
    s.reduce_bytes = b;
    out.push_back(s);
  }
  return out;
}

// Recursive doubling over `members` (all-gather, each member holding `chunk`): at each step exchange
// everything gathered so far with the member at distance 1, 2, 4, ...
std::vector<Step> doubling(const Order& members, int32_t pos, double chunk) {
  std::vector<Step> out;
  double b = chunk;
  for (int32_t d = 1; d < static_cast<int32_t>(members.size()); d *= 2) {
    Step s;
    const int32_t peer = members[static_cast<size_t>(pos ^ d)];
    s.sends.push_back({peer, b});
    s.recvs.push_back({peer, b});
    out.push_back(s);
    b *= 2;
  }
  return out;
}

std::vector<Step> recursive(OpKind kind, int32_t p, int32_t me, double bytes) {
  if (!power_of_two(p))
    throw std::invalid_argument("recursive doubling/halving needs a power-of-two group; this one has " +
                                std::to_string(p) + " members");
  Order members(static_cast<size_t>(p));
  for (int32_t i = 0; i < p; ++i) members[static_cast<size_t>(i)] = i;
  switch (kind) {
    case OpKind::reduce_scatter:
      return halving(members, me, bytes);
    case OpKind::all_gather:
      return doubling(members, me, bytes / p);
    default: {  // all-reduce: Rabenseifner
      auto steps = halving(members, me, bytes);
      append(steps, doubling(members, me, bytes / p));
      return steps;
    }
  }
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool recursive_supports(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::reduce_scatter || kind == OpKind::all_gather;
}

std::vector<Step> recursive_plan(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, int32_t, Fidelity) {
  return algorithms::recursive(kind, layout.size(), me, bytes);
}

}  // namespace

AlgorithmSpec recursive_algorithm() {
  AlgorithmSpec s;
  s.name = "recursive";
  s.supports = recursive_supports;
  s.plan = recursive_plan;
  s.loads = AnalyticalLoads::own_steps;
  s.power_of_two_groups = true;
  return s;
}

}  // namespace paratwin::sim
