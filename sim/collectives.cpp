#include "sim/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"
#include "sim/algorithms/double_tree.hpp"
#include "sim/library.hpp"

namespace paratwin::sim {

using workloads::OpKind;
using namespace algorithms;

const char* to_string(Algorithm a) {
  return spec(a).name;
}

std::optional<Algorithm> parse_algorithm(const std::string& name) {
  const auto& all = registered_algorithms();
  for (size_t i = 0; i < all.size(); ++i)
    if (name == all[i].name) return static_cast<Algorithm>(i);
  return std::nullopt;
}

bool supports(Algorithm algorithm, OpKind kind) {
  return spec(algorithm).supports(kind);
}

Algorithm default_algorithm(OpKind kind, const std::string& library) {
  return library_spec(library).default_algorithm(kind);
}

std::string vendor_library(const topology::Machine& machine) {
  return machine.profile.library == "rccl" ? "rccl" : "nccl";
}

std::string library_running(OpKind kind, const std::string& library, const topology::Machine& machine) {
  return library_spec(library).runs(kind) ? library : vendor_library(machine);
}

topology::TopologyOptions topology_options(const std::string& library) {
  topology::TopologyOptions options;
  options.one_nic_per_node = library_spec(library).one_nic_per_node;
  options.rail_matched_nics = library_spec(library).rail_matched_nics;
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
  const AlgorithmSpec& a = spec(algorithm);
  if (a.plan_group && a.supports(kind) && layout.size() > 1) return a.plan_group(kind, layout, bytes);
  std::vector<std::vector<Step>> out;
  for (int32_t me = 0; me < layout.size(); ++me)
    out.push_back(plan(kind, algorithm, layout, me, bytes, root, fidelity));
  return out;
}

std::vector<Step> plan(OpKind kind, Algorithm algorithm, const GroupLayout& layout, int32_t me, double bytes,
                       int32_t root, Fidelity fidelity) {
  const AlgorithmSpec& a = spec(algorithm);
  if (!a.supports(kind))
    throw std::invalid_argument(std::string("no ") + a.name + " algorithm for " + workloads::to_string(kind));
  if (layout.size() <= 1) return {};
  return a.plan(kind, layout, me, bytes, root, fidelity);
}

}  // namespace paratwin::sim
