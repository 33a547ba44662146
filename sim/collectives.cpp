#include "sim/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace paratwin::sim {

using workloads::OpKind;

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
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(const std::string& name) {
  for (Algorithm a : {Algorithm::ring, Algorithm::recursive, Algorithm::tree, Algorithm::hierarchical,
                      Algorithm::binomial_tree, Algorithm::pairwise, Algorithm::direct})
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
    default:
      return library == "pccl" ? Algorithm::hierarchical : Algorithm::ring;
  }
}

topology::TopologyOptions topology_options(const std::string& library) {
  topology::TopologyOptions options;
  options.one_nic_per_node = library == "cray-mpich";
  return options;
}

StepCosts StepCosts::of(const topology::Machine& machine, const std::string& library) {
  StepCosts c;
  c.collective_step = machine.profile.collective_step;
  c.overlapped_step_extra = machine.profile.overlapped_step_extra;
  for (const auto& [name, cost] : machine.profile.collective_costs)
    for (auto kind : {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather, OpKind::all_to_all,
                      OpKind::broadcast, OpKind::reduce})
      if (name == workloads::to_string(kind)) c.by_kind[static_cast<int>(kind)] = cost;
  c.host_reductions = library == "cray-mpich" || library == "mpi";
  const double host = machine.node.host.memory_bandwidth, hbm = machine.node.device.hbm_bandwidth;
  c.host_memory_bandwidth = host > 0 ? host : 100e9;
  c.device_memory_bandwidth = hbm > 0 ? hbm : 1e12;
  if (library == "nccl" && machine.profile.nccl) c.nccl = nccl_hardware(machine);
  return c;
}

NcclHardware nccl_hardware(const topology::Machine& machine) {
  const auto& spec = *machine.profile.nccl;
  NcclHardware hw;
  hw.version = spec.tuning;
  hw.compute_capability = spec.compute_capability;
  hw.cpu = spec.cpu;
  hw.ll128 = spec.ll128;
  // NCCL's rings inside a node run over every NVLink of a device at once (one channel per link
  // pair), at the rate its topology model gives a link: gpu0's links to devices and switches.
  double device_links = 0;
  bool pcie_only = true;
  const auto is_router = [&](const std::string& e) {
    return std::find(machine.node.routers.begin(), machine.node.routers.end(), e) != machine.node.routers.end();
  };
  for (const auto& l : machine.node.links) {
    if (l.a != "gpu0" && l.b != "gpu0") continue;
    const std::string& other = l.a == "gpu0" ? l.b : l.a;
    const bool device = other.rfind("gpu", 0) == 0;
    const bool fabric = is_router(other) && other.rfind("cpu", 0) != 0;  // NVSwitch, not a CPU socket
    if (device || fabric) {
      device_links += l.bandwidth;
      pcie_only = false;
    }
  }
  hw.nvlink = !pcie_only;
  hw.intra_bus_GBps = device_links * machine.profile.device_link_efficiency / 1e9;
  if (pcie_only)  // PCIe through the host: one link's rate
    for (const auto& l : machine.node.links)
      if (l.a == "gpu0" || l.b == "gpu0") hw.intra_bus_GBps = std::max(hw.intra_bus_GBps, l.bandwidth / 1e9);
  for (const auto& nic : machine.node.nics) hw.inter_bus_GBps += nic.bandwidth / 1e9;
  return hw;
}

std::optional<NcclChoice> StepCosts::nccl_choice_for(OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                                     double bytes) const {
  if (!nccl || layout.size() <= 1) return std::nullopt;
  const bool ring = algorithm == Algorithm::ring &&
                    (kind == OpKind::all_reduce || kind == OpKind::all_gather || kind == OpKind::reduce_scatter);
  const bool tree = algorithm == Algorithm::tree && kind == OpKind::all_reduce;
  if (!ring && !tree) return std::nullopt;
  // Nodes are numbered in order of first appearance.
  const int nodes = *std::max_element(layout.node.begin(), layout.node.end()) + 1;
  return nccl_choice(*nccl, kind, ring ? NcclAlgorithm::ring : NcclAlgorithm::tree, layout.size(), nodes, bytes);
}

namespace {

// A member's steps as the protocol runs them: its latency spread over the steps that move data (the
// steps a fast phase stands for included), its bytes on the wire.
void apply(std::vector<Step>& steps, const NcclChoice& c) {
  double count = 0;
  for (const Step& s : steps)
    if (!s.sends.empty() || !s.recvs.empty()) count += 1 + s.extra_latencies;
  if (count <= 0) return;
  const double wire = 1 / c.bandwidth_share;
  for (Step& s : steps) {
    s.library_step = c.latency / count;
    for (auto* list : {&s.sends, &s.recvs})
      for (Transfer& t : *list) t.bytes *= wire;
  }
}

}  // namespace

std::vector<Step> StepCosts::plan(OpKind kind, Algorithm algorithm, const GroupLayout& layout, int32_t me, double bytes,
                                  int32_t root, Fidelity fidelity) const {
  auto steps = sim::plan(kind, algorithm, layout, me, bytes, root, fidelity);
  if (const auto c = nccl_choice_for(kind, algorithm, layout, bytes)) apply(steps, *c);
  return steps;
}

std::vector<std::vector<Step>> StepCosts::plan_group(OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                                     double bytes, int32_t root, Fidelity fidelity) const {
  auto plans = sim::plan_group(kind, algorithm, layout, bytes, root, fidelity);
  if (const auto c = nccl_choice_for(kind, algorithm, layout, bytes))
    for (auto& steps : plans) apply(steps, *c);
  return plans;
}

double StepCosts::after_transfers(const Step& step, double path_latency, workloads::OpKind kind, bool computing) const {
  double per_step = step.library_step >= 0 ? step.library_step : collective_step, moved = 0,
         extra = overlapped_step_extra;
  // NCCL's per-hop latency includes the hop's own.
  if (step.library_step >= 0) path_latency = 0;
  if (const auto it = by_kind.find(static_cast<int>(kind)); it != by_kind.end()) {
    per_step = it->second.step;
    if (it->second.overlapped_extra >= 0) extra = it->second.overlapped_extra;
    double sent = 0, received = 0;
    for (const auto& t : step.sends) sent += t.bytes;
    for (const auto& t : step.recvs) received += t.bytes;
    moved = std::max(sent, received) * it->second.per_byte;
  }
  if (computing) per_step += extra;
  double seconds = moved + step.extra_latencies * path_latency + per_step * (1 + step.extra_latencies) +
                   step.local_bytes / device_memory_bandwidth;
  if (host_reductions) seconds += 3 * step.reduce_bytes / host_memory_bandwidth;
  return seconds;
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

namespace {

using Order = std::vector<int32_t>;  // group indices, in the order an algorithm visits them

bool power_of_two(int32_t q) {
  return q > 0 && (q & (q - 1)) == 0;
}

// The rings, each followed by its reverse when the library runs them both ways
// (GroupLayout::counter_rotating). A ring of two members is its own reverse.
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

// Transfers to one peer within a step are one flow.
void add(std::vector<Transfer>& transfers, int32_t peer, double bytes) {
  for (auto& t : transfers)
    if (t.peer == peer) {
      t.bytes += bytes;
      return;
    }
  transfers.push_back({peer, bytes});
}

// Each node's members, in ring order.
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

void append(std::vector<Step>& to, std::vector<Step> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
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

// NCCL's binary tree over n nodes (ncclGetBtree): in-order, so that half of the edges join
// neighbouring nodes, a quarter nodes two apart, and so on. Node r's parent clears r's lowest set bit
// and sets the next one; its children are r -/+ half that bit; node 0 is the root of one child.
struct TreeLinks {
  int32_t parent = -1;
  int32_t children[2] = {-1, -1};
};

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

// PCCL (seed 002 §6.2): all-gather runs inter-node all-gathers among the members with the same place
// in their node (all NICs busy at once), then intra-node ring all-gathers, then a local shuffle;
// reduce-scatter the reverse (shuffle, intra-node ring, inter-node); all-reduce both. Groups whose
// nodes hold different numbers of members fall back to rings.
std::vector<Step> hierarchical(OpKind kind, const GroupLayout& layout, int32_t me, double bytes, Fidelity fidelity) {
  const int32_t m = layout.members_per_node();
  const auto by_node = members_by_node(layout);
  const auto nodes = static_cast<int32_t>(by_node.size());
  if (m <= 1 || nodes == 1) {  // one level (or uneven nodes): a single ring
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

// Pairwise exchange: in step s, send to me + s and receive from me - s.
std::vector<Step> pairwise(int32_t p, int32_t me, double bytes, Fidelity fidelity) {
  const double block = bytes / p;
  std::vector<Step> out;
  if (fidelity == Fidelity::fast) {
    Step s;
    for (int32_t k = 1; k < p; ++k) {
      s.sends.push_back({(me + k) % p, block});
      s.recvs.push_back({(me - k + p) % p, block});
    }
    return {s};
  }
  for (int32_t k = 1; k < p; ++k) {
    Step s;
    s.sends.push_back({(me + k) % p, block});
    s.recvs.push_back({(me - k + p) % p, block});
    out.push_back(s);
  }
  return out;
}

}  // namespace

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
  }
  return {};
}

}  // namespace paratwin::sim
