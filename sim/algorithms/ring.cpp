#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/algorithms/algorithms.hpp"

namespace paratwin::sim::algorithms {

using workloads::OpKind;

// Rings run at once, one per channel, each carrying an equal share of every chunk. At each of
// `steps` steps a member sends one chunk to its successor and receives one from its predecessor;
// the first `reducing` steps add the received chunk into its own (reduce-scatter phases).
std::vector<Step> rings(const std::vector<Order>& orders, int32_t me, int steps, double chunk, int reducing,
                        Fidelity fidelity) {
  if (steps <= 0) return {};
  const double share = chunk / static_cast<double>(orders.size());
  std::vector<std::pair<int32_t, int32_t>> neighbours;  // (next, prev) per ring
  for (const Order& o : orders) {
    const auto q = static_cast<int32_t>(o.size());
    const int32_t pos = position(o, me);
    neighbours.emplace_back(o[static_cast<size_t>((pos + 1) % q)], o[static_cast<size_t>((pos + q - 1) % q)]);
  }
  if (fidelity == Fidelity::fast) {
    Step s;
    for (const auto& [next, prev] : neighbours) {
      add(s.sends, next, share * steps);
      add(s.recvs, prev, share * steps);
    }
    s.extra_latencies = steps - 1;
    s.reduce_bytes = chunk * reducing;
    return {s};
  }
  std::vector<Step> out(static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    Step& s = out[static_cast<size_t>(k)];
    for (const auto& [next, prev] : neighbours) {
      add(s.sends, next, share);
      add(s.recvs, prev, share);
    }
    if (k < reducing) s.reduce_bytes = chunk;
  }
  return out;
}

// NCCL's pipelined broadcast (reduce: the reverse): the data flows from the root along the ring's
// order in chunks of kChainChunk bytes per channel, each member forwarding a chunk while it receives
// the next, so a link carries the buffer once and the chain's depth adds one chunk per hop.
// Exact fidelity has one step per chunk slot (at most kChainSlots chunks); fast fidelity one step
// whose transfers carry the buffer plus the pipeline fill.
constexpr double kChainChunk = 512.0 * 1024;  // NCCL Simple protocol: 4 MiB buffer / 8 steps
constexpr int kChainSlots = 64;

std::vector<Step> chain(const std::vector<Order>& orders, int32_t me, int32_t root, double bytes, bool reduce,
                        Fidelity fidelity) {
  const double share = bytes / static_cast<double>(orders.size());
  struct Link {
    int32_t up = -1, down = -1;  // predecessor and successor on the chain from the root (-1: none)
    int32_t hops = 0;            // from the root along this channel's chain
  };
  std::vector<Link> links;
  int32_t length = 0;
  for (const Order& o : orders) {
    const auto q = static_cast<int32_t>(o.size());
    const int32_t r = position(o, root), pos = (position(o, me) - r + q) % q;
    Link l;
    l.hops = pos;
    if (pos > 0) l.up = o[static_cast<size_t>((r + pos - 1) % q)];
    if (pos < q - 1) l.down = o[static_cast<size_t>((r + pos + 1) % q)];
    links.push_back(l);
    length = q;
  }
  const int chunks =
      static_cast<int>(std::clamp(std::ceil(share / kChainChunk), 1.0, static_cast<double>(kChainSlots)));
  const double chunk = share / chunks;
  if (fidelity == Fidelity::fast) {
    Step s;
    const double carried = share + (length - 2) * std::min(chunk, kChainChunk);
    for (const Link& l : links) {
      // Broadcast: receive from up, send down. Reduce: the same chain with the data flowing to the root.
      const int32_t from = reduce ? l.down : l.up, to = reduce ? l.up : l.down;
      if (to >= 0) add(s.sends, to, carried);
      if (from >= 0) add(s.recvs, from, carried);
      if (reduce && from >= 0) s.reduce_bytes += share;
    }
    s.extra_latencies = length - 2;
    return {s};
  }
  // Slot t: the member at depth i (from the sending end) of a channel's chain forwards chunk t - i.
  std::vector<Step> out(static_cast<size_t>(chunks + length - 2));
  for (size_t t = 0; t < out.size(); ++t) {
    Step& s = out[t];
    for (const Link& l : links) {
      const int32_t depth = reduce ? length - 1 - l.hops : l.hops;
      const auto c = static_cast<int32_t>(t) - depth;  // the chunk this member forwards in slot t
      const int32_t from = reduce ? l.down : l.up, to = reduce ? l.up : l.down;
      if (to >= 0 && c >= 0 && c < chunks) add(s.sends, to, chunk);
      if (from >= 0 && c + 1 >= 0 && c + 1 < chunks) {
        add(s.recvs, from, chunk);
        if (reduce) s.reduce_bytes += chunk;
      }
    }
  }
  return out;
}

}  // namespace paratwin::sim::algorithms

namespace paratwin::sim {

namespace {

using workloads::OpKind;

bool ring_supports(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::reduce_scatter || kind == OpKind::all_gather ||
         kind == OpKind::broadcast || kind == OpKind::reduce;
}

std::vector<Step> ring_plan(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, int32_t root,
                            Fidelity fidelity) {
  const int32_t p = layout.size();
  const auto orders = ring_orders(layout);
  switch (kind) {
    case OpKind::all_reduce:
      return algorithms::rings(orders, me, 2 * (p - 1), bytes / p, p - 1, fidelity);
    case OpKind::reduce_scatter:
      return algorithms::rings(orders, me, p - 1, bytes / p, p - 1, fidelity);
    case OpKind::broadcast:
    case OpKind::reduce:
      return algorithms::chain(orders, me, root < 0 ? 0 : root, bytes, kind == OpKind::reduce, fidelity);
    default:
      return algorithms::rings(orders, me, p - 1, bytes / p, 0, fidelity);
  }
}

std::optional<NcclAlgorithm> ring_in_nccl(OpKind kind) {
  if (kind == OpKind::all_reduce || kind == OpKind::all_gather || kind == OpKind::reduce_scatter)
    return NcclAlgorithm::ring;
  return std::nullopt;
}

}  // namespace

AlgorithmSpec ring_algorithm() {
  AlgorithmSpec s;
  s.name = "ring";
  s.supports = ring_supports;
  s.plan = ring_plan;
  s.loads = AnalyticalLoads::ring_channels;
  s.follows_rings = true;
  s.nccl = ring_in_nccl;
  return s;
}

}  // namespace paratwin::sim
