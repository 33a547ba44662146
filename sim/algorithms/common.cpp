#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

bool power_of_two(int32_t q) {
  return q > 0 && (q & (q - 1)) == 0;
}

std::vector<Order> with_reverse(std::vector<Order> orders, bool counter_rotating) {
  if (!counter_rotating) return orders;
  std::vector<Order> out;
  for (auto& o : orders) {
    const bool reversible = o.size() > 2;
    Order r(o.rbegin(), o.rend());
    out.push_back(std::move(o));
    if (reversible) out.push_back(std::move(r));
  }
  return out;
}

int32_t position(const Order& order, int32_t me) {
  return static_cast<int32_t>(std::find(order.begin(), order.end(), me) - order.begin());
}

void add(std::vector<Transfer>& transfers, int32_t peer, double bytes) {
  for (auto& t : transfers)
    if (t.peer == peer) {
      t.bytes += bytes;
      return;
    }
  transfers.push_back({peer, bytes});
}

std::vector<std::vector<int32_t>> members_by_node(const GroupLayout& layout) {
  std::vector<std::vector<int32_t>> by_node;
  for (int32_t k = 0; k < layout.size(); ++k) {
    const int32_t i = layout.order.empty() ? k : layout.order[static_cast<size_t>(k)];
    const auto n = static_cast<size_t>(layout.node[static_cast<size_t>(i)]);
    if (by_node.size() <= n) by_node.resize(n + 1);
    by_node[n].push_back(i);
  }
  return by_node;
}

void append(std::vector<Step>& to, std::vector<Step> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace paratwin::sim::algorithms
