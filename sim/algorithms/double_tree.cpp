#include "sim/algorithms/double_tree.hpp"

namespace paratwin::sim::algorithms {

TreeLinks btree(int32_t n, int32_t r) {
  TreeLinks t;
  int32_t bit = 1;
  while (bit < n && !(bit & r)) bit <<= 1;
  if (r == 0) {
    if (n > 1) t.children[1] = bit >> 1;
    return t;
  }
  t.parent = (r ^ bit) | (bit << 1);
  if (t.parent >= n) t.parent = r ^ bit;
  int32_t low = bit >> 1;
  if (low == 0) return t;
  t.children[0] = r - low;
  while (low > 0 && r + low >= n) low >>= 1;
  if (low > 0) t.children[1] = r + low;
  return t;
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool tree_supports(OpKind kind) {
  return kind == OpKind::all_reduce;
}

std::vector<Step> tree_plan(OpKind, const GroupLayout& layout, int32_t me, double bytes, int32_t, Fidelity) {
  return algorithms::DoubleTree(layout).steps(me, bytes);
}

std::vector<std::vector<Step>> tree_plan_group(OpKind, const GroupLayout& layout, double bytes) {
  const algorithms::DoubleTree tree(layout);  // the group's chains and trees worked out once
  std::vector<std::vector<Step>> out;
  for (int32_t me = 0; me < layout.size(); ++me) out.push_back(tree.steps(me, bytes));
  return out;
}

std::optional<NcclAlgorithm> tree_in_nccl(OpKind) {
  return NcclAlgorithm::tree;
}

}  // namespace

AlgorithmSpec tree_algorithm() {
  AlgorithmSpec s;
  s.name = "tree";
  s.supports = tree_supports;
  s.plan = tree_plan;
  s.plan_group = tree_plan_group;
  s.loads = AnalyticalLoads::tree_steps;
  s.nccl = tree_in_nccl;
  return s;
}

}  // namespace paratwin::sim
