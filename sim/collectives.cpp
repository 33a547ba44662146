#include "sim/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"
#include "sim/algorithms/double_tree.hpp"

namespace paratwin::sim {

using workloads::OpKind;
using namespace algorithms;

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::recursive:
      return "recursive";
    case Algorithm::tree:
      return "tree";
    case Algorithm::hierarchical:
      return "hierarchical";
    case Algorithm::binomial_tree:
      return "binomial_tree";
    case Algorithm::pairwise:
      return "pairwise";
    case Algorithm::direct:
      return "direct";
    case Algorithm::pat:
      return "pat";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(const std::string& name) {
  for (Algorithm a : {Algorithm::ring, Algorithm::recursive, Algorithm::tree, Algorithm::hierarchical,
                      Algorithm::binomial_tree, Algorithm::pairwise, Algorithm::direct, Algorithm::pat})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

bool supports(Algorithm algorithm, OpKind kind) {
  const bool reducing_or_gathering =
      kind == OpKind::all_reduce || kind == OpKind::reduce_scatter || kind == OpKind::all_gather;
  switch (algorithm) {
    case Algorithm::ring:
      return reducing_or_gathering || kind == OpKind::broadcast || kind == OpKind::reduce;
    case Algorithm::recursive:
    case Algorithm::hierarchical:
      return reducing_or_gathering;
    case Algorithm::tree:
      return kind == OpKind::all_reduce;
    case Algorithm::binomial_tree:
      return kind == OpKind::broadcast || kind == OpKind::reduce;
    case Algorithm::pairwise:
    case Algorithm::direct:
      return kind == OpKind::all_to_all;
    case Algorithm::pat:
      return kind == OpKind::all_gather || kind == OpKind::reduce_scatter;
  }
  return false;
}

Algorithm default_algorithm(OpKind kind, const std::string& library) {
  switch (kind) {
    case OpKind::broadcast:
    case OpKind::reduce:
      // NCCL and RCCL broadcast and reduce along their rings, pipelined in chunks; PCCL implements
      // all-gather and reduce-scatter only and leaves the rest to the vendor library.
      return library == "mpi" || library == "cray-mpich" ? Algorithm::binomial_tree : Algorithm::ring;
    case OpKind::all_to_all:
      return Algorithm::pairwise;
    case OpKind::all_gather:
    case OpKind::reduce_scatter:
      return library == "pccl" ? Algorithm::hierarchical : Algorithm::ring;
    default:
      return Algorithm::ring;
  }
}

std::string vendor_library(const topology::Machine& machine) {
  return machine.profile.library == "rccl" ? "rccl" : "nccl";
}

std::string library_running(OpKind kind, const std::string& library, const topology::Machine& machine) {
  if (library != "pccl" || kind == OpKind::all_gather || kind == OpKind::reduce_scatter) return library;
  return vendor_library(machine);
}

topology::TopologyOptions topology_options(const std::string& library) {
  topology::TopologyOptions options;
  options.one_nic_per_node = library == "cray-mpich";
  return options;
}

GroupLayout GroupLayout::flat(int32_t size) {
  GroupLayout layout;
  layout.node.resize(static_cast<size_t>(std::max(0, size)));
  for (int32_t i = 0; i < size; ++i) layout.node[static_cast<size_t>(i)] = i;
  return layout;
}

int32_t GroupLayout::members_per_node() const {
  if (node.empty()) return 0;
  std::vector<int32_t> count(static_cast<size_t>(*std::max_element(node.begin(), node.end()) + 1), 0);
  for (int32_t n : node) ++count[static_cast<size_t>(n)];
  const int32_t m = count.front();
  return std::all_of(count.begin(), count.end(), [m](int32_t c) { return c == m; }) ? m : 0;
}

// The rings a library runs over the group: NCCL/RCCL build one per channel, each entering and leaving
// every node at its own members (GroupLayout::channel_offsets).
std::vector<std::vector<int32_t>> ring_orders(const GroupLayout& layout) {
  const int32_t m = layout.members_per_node();
  const auto by_node = members_by_node(layout);
  std::vector<Order> orders;
  if (layout.channel_offsets.size() <= 1 || m <= 1 || by_node.size() <= 1) {
    Order one;
    for (const auto& members : by_node) one.insert(one.end(), members.begin(), members.end());
    orders.push_back(std::move(one));
  } else {
    for (int32_t offset : layout.channel_offsets) {
      Order o;
      for (const auto& members : by_node)
        for (int32_t k = 0; k < m; ++k) o.push_back(members[static_cast<size_t>((k + offset) % m)]);
      orders.push_back(std::move(o));
    }
  }
  return with_reverse(std::move(orders), layout.counter_rotating);
}

std::vector<std::vector<Step>> plan_group(OpKind kind, Algorithm algorithm, const GroupLayout& layout, double bytes,
                                          int32_t root, Fidelity fidelity) {
  std::vector<std::vector<Step>> out;
  if (algorithm == Algorithm::tree && supports(algorithm, kind) && layout.size() > 1) {
    const DoubleTree tree(layout);  // the group's chains and trees worked out once
    for (int32_t me = 0; me < layout.size(); ++me) out.push_back(tree.steps(me, bytes));
    return out;
  }
  for (int32_t me = 0; me < layout.size(); ++me)
    out.push_back(plan(kind, algorithm, layout, me, bytes, root, fidelity));
  return out;
}

std::vector<Step> plan(OpKind kind, Algorithm algorithm, const GroupLayout& layout, int32_t me, double bytes,
                       int32_t root, Fidelity fidelity) {
  if (!supports(algorithm, kind))
    throw std::invalid_argument(std::string("no ") + to_string(algorithm) + " algorithm for " +
                                workloads::to_string(kind));
  const int32_t p = layout.size();
  if (p <= 1) return {};
  switch (algorithm) {
    case Algorithm::ring: {
      const auto orders = ring_orders(layout);
      switch (kind) {
        case OpKind::all_reduce:
          return rings(orders, me, 2 * (p - 1), bytes / p, p - 1, fidelity);
        case OpKind::reduce_scatter:
          return rings(orders, me, p - 1, bytes / p, p - 1, fidelity);
        case OpKind::broadcast:
        case OpKind::reduce:
          return chain(orders, me, root < 0 ? 0 : root, bytes, kind == OpKind::reduce, fidelity);
        default:
          return rings(orders, me, p - 1, bytes / p, 0, fidelity);
      }
    }
    case Algorithm::recursive:
      return recursive(kind, p, me, bytes);
    case Algorithm::tree:
      return DoubleTree(layout).steps(me, bytes);
    case Algorithm::hierarchical:
      return hierarchical(kind, layout, me, bytes, fidelity);
    case Algorithm::binomial_tree:
      return binomial(p, me, root < 0 ? 0 : root, bytes, kind == OpKind::reduce);
    case Algorithm::pairwise:
      return pairwise(p, me, bytes, fidelity);
    case Algorithm::direct:
      return pairwise(p, me, bytes, Fidelity::fast);  // every exchange in one step
    case Algorithm::pat:
      return pat(kind, p, me, bytes);
  }
  return {};
}

}  // namespace paratwin::sim
