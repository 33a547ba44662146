#pragma once
// NCCL's double binary tree (all-reduce).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

// NCCL's binary tree over n nodes (ncclGetBtree): in-order, so that half of the edges join
// neighbouring nodes, a quarter nodes two apart, and so on. Node r's parent clears r's lowest set bit
// and sets the next one; its children are r -/+ half that bit; node 0 is the root of one child.
struct TreeLinks {
  int32_t parent = -1;
  int32_t children[2] = {-1, -1};
};

TreeLinks btree(int32_t n, int32_t r);

// NCCL's double binary tree: inside a node a chain through the members, between nodes two binary
// trees over the nodes (tree A btree over nodes 0..N-1, tree B its mirror for an even node count or
// shifted by one for an odd one, so that a leaf of one is inside the other), each reducing then
// broadcasting half of the buffer. Tree A enters a node at the first member of its chain, tree B at
// the last, so the chain links carry half the buffer in each direction. Pipelined: every link carries
// its half once per phase while the depth adds latency. With one member per node this is the plain
// double binary tree over members.
class DoubleTree {
 public:
  explicit DoubleTree(const GroupLayout& layout) : layout_(layout), by_node_(members_by_node(layout)) {
    for (const Order& o : by_node_) longest_ = std::max(longest_, static_cast<int32_t>(o.size()));
    for (int32_t span = 1; span < nodes(); span *= 2) ++depth_;
  }

  // Member `me`'s two steps (up: reduce, down: broadcast).
  std::vector<Step> steps(int32_t me, double bytes) const {
    const double half = bytes / 2;
    const int32_t j = layout_.node[static_cast<size_t>(me)];
    const Order& chain = by_node_[static_cast<size_t>(j)];
    const auto m = static_cast<int32_t>(chain.size());
    const int32_t l = position(chain, me);
    const int32_t n = nodes();
    Step up, down;
    for (int t = 0; t < 2; ++t) {
      // node -> position in tree t, and back
      const auto pos = [&](int32_t x) { return t == 0 ? x : n % 2 == 0 ? n - 1 - x : (x - 1 + n) % n; };
      const auto node_at = [&](int32_t y) { return t == 0 ? y : n % 2 == 0 ? n - 1 - y : (y + 1) % n; };
      const int32_t towards = t == 0 ? -1 : 1;  // along the chain, towards the entry member
      const int32_t head = t == 0 ? 0 : m - 1;
      if (l != head) {
        const int32_t to = chain[static_cast<size_t>(l + towards)];
        add(up.sends, to, half);
        add(down.recvs, to, half);
      }
      if (const int32_t away = l - towards; away >= 0 && away < m) {
        add(up.recvs, chain[static_cast<size_t>(away)], half);
        up.reduce_bytes += half;
        add(down.sends, chain[static_cast<size_t>(away)], half);
      }
      if (l != head) continue;
      const TreeLinks links = btree(n, pos(j));
      for (int32_t c : links.children)
        if (c >= 0) {
          const int32_t peer = entry(t, node_at(c));
          add(up.recvs, peer, half);
          up.reduce_bytes += half;
          add(down.sends, peer, half);
        }
      if (links.parent >= 0) {
        const int32_t peer = entry(t, node_at(links.parent));
        add(up.sends, peer, half);
        add(down.recvs, peer, half);
      }
    }
    up.extra_latencies = down.extra_latencies = std::max(0, depth_ + longest_ - 2);
    return {up, down};
  }

 private:
  int32_t nodes() const { return static_cast<int32_t>(by_node_.size()); }
  // The member where tree t enters `node`: the first of its chain for tree A, the last for tree B.
  int32_t entry(int t, int32_t node) const {
    const Order& c = by_node_[static_cast<size_t>(node)];
    return t == 0 ? c.front() : c.back();
  }

  const GroupLayout& layout_;
  std::vector<Order> by_node_;
  int32_t longest_ = 0, depth_ = 0;
};

}  // namespace paratwin::sim::algorithms
