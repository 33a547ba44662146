#include "sim/tuner.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

#include "sim/library.hpp"

namespace paratwin::sim {

using workloads::OpKind;

namespace {

// Bandwidth of one edge of the double tree's chain through a whole node: tree A runs the chain one
// way, tree B the other, at once. Where devices hang off a shared switch or root complex (PCIe) a
// device's link carries both trees' edges; with direct links each edge has its own.
double chain_bandwidth(const topology::Topology& topology, int64_t per_node) {
  std::map<uint32_t, int> loads;
  topology::Route r;
  for (int64_t d = 0; d + 1 < per_node; ++d)
    for (const auto& [from, to] : {std::pair{d, d + 1}, std::pair{d + 1, d}}) {
      topology.route(from, to, r);
      for (uint32_t id : r.resources) ++loads[id];
    }
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const auto& [id, flows] : loads) bandwidth = std::min(bandwidth, topology.resource(id).bandwidth / flows);
  return bandwidth;
}

// NCCL's refinements of its closed forms (src/graph/tuning.cc, Simple protocol): a tree reaches 0.9
// of its links' bus bandwidth, less for medium buffers ("trees are not perfectly sticking to the
// model for medium sizes": a static factor per power of two of bytes/64, 64 B to 128 MiB), and a
// multi-node ring all-reduce of a large buffer has 1.9 times its step latency ("plateau effect").
constexpr double kTreeBandwidthShare = 0.9;
constexpr double kTreeCorrection[] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6,
                                      .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9};
constexpr double kRingPlateau = 1.9;

double tree_correction(double bytes) {
  const double log = std::floor(std::log2(std::max(bytes / 64, 1.0)));
  constexpr auto n = static_cast<double>(std::size(kTreeCorrection));
  return log < n ? kTreeCorrection[static_cast<size_t>(log)] : 1.0;
}

}  // namespace

Tuner::Tuner(const topology::Topology& topology, std::string library, std::map<OpKind, Algorithm> forced)
    : library_(std::move(library)),
      all_reduce_library_(library_running(OpKind::all_reduce, library_, topology.machine())),
      forced_(std::move(forced)),
      costs_(StepCosts::of(topology.machine(), library_)) {
  const auto& m = topology.machine();
  const int64_t per_node = m.devices_per_node();
  if (per_node > 1 && topology.devices() > 1) {
    const auto p = topology.path(0, 1);
    intra_bandwidth_ = p.bandwidth;
    intra_latency_ = p.latency;
    tree_chain_bandwidth_ = chain_bandwidth(topology, per_node);
  }
  for (const auto& nic : m.node.nics) inter_bandwidth_ = std::max(inter_bandwidth_, nic.bandwidth);
  nics_ = topology.options().one_nic_per_node ? 1 : std::max<int>(1, static_cast<int>(m.node.nics.size()));
  if (topology.devices() > per_node) {
    const auto p = topology.path(0, per_node);
    inter_latency_ = p.latency;
    if (inter_bandwidth_ <= 0) inter_bandwidth_ = p.bandwidth;
  }
}

double Tuner::estimate(OpKind kind, Algorithm algorithm, const GroupLayout& layout, double bytes) const {
  // Closed forms, as NCCL's tuner has them: latency = steps x (step cost + path latency), bandwidth term =
  // bytes a member moves over the links it uses (cost linear in the group, so choosing stays cheap at
  // tens of thousands of members).
  if (algorithm == Algorithm::pat) {
    // NCCL's own estimate (sim/nccl_tuning.hpp), where the release and the group let NCCL run PAT.
    const auto nccl = costs_.nccl_choice_for(kind, algorithm, layout, bytes);
    return nccl ? nccl->estimate : std::numeric_limits<double>::infinity();
  }
  if (kind != OpKind::all_reduce || (algorithm != Algorithm::ring && algorithm != Algorithm::tree))
    return std::numeric_limits<double>::infinity();
  const double p = layout.size();
  if (p <= 1) return 0;
  const int32_t nodes = *std::max_element(layout.node.begin(), layout.node.end()) + 1;
  std::vector<int32_t> per_node(static_cast<size_t>(nodes), 0);
  for (int32_t n : layout.node) ++per_node[static_cast<size_t>(n)];
  const double m = *std::max_element(per_node.begin(), per_node.end());
  const double latency = nodes > 1 ? inter_latency_ : intra_latency_;
  const double step = costs_.collective_step + latency;
  // With NCCL's tables: the latency of the protocol NCCL picks, and its share of the bandwidth.
  const auto nccl = costs_.nccl_choice_for(kind, algorithm, layout, bytes);
  const double share = nccl ? nccl->bandwidth_share : 1.0;
  const auto over = [share](double b, double bw) { return bw > 0 ? b / (bw * share) : 0.0; };
  if (algorithm == Algorithm::ring) {
    // Every step waits for its slowest edge; the channels' rings leave each node through their own
    // members, as many NICs at once as there are channels.
    const double channels = std::max<size_t>(1, layout.channel_offsets.size());
    const double moved = 2 * (p - 1) / p * bytes;
    const bool plateau = nodes > 1 && bytes >= p / 16 * 65536;
    double seconds = nccl ? nccl->latency : 2 * (p - 1) * step * (plateau ? kRingPlateau : 1.0);
    double slowest = 0;
    if (m > 1) slowest = std::max(slowest, over(moved, intra_bandwidth_));
    if (nodes > 1) slowest = std::max(slowest, over(moved, inter_bandwidth_ * std::min<double>(channels, nics_)));
    return seconds + slowest;
  }
  // Tree: per phase, the chain through a node's members and the binary trees between nodes; the
  // member where a tree enters a node receives half the buffer from each of two children.
  int depth = 0;
  for (int32_t span = 1; span < nodes; span *= 2) ++depth;
  const double phase =
      std::max(m > 1 ? over(bytes / 2, tree_chain_bandwidth_) : 0.0, nodes > 1 ? over(bytes, inter_bandwidth_) : 0.0);
  const double tree_latency = nccl ? nccl->latency : 2 * (depth + m - 1) * step;
  return tree_latency + 2 * phase / (kTreeBandwidthShare * tree_correction(bytes));
}

Algorithm Tuner::choose(OpKind kind, const GroupLayout& layout, double bytes) {
  if (const auto it = forced_.find(kind); it != forced_.end()) return it->second;
  // Under PCCL the all-reduce is the vendor library's, tuned as it tunes it (library_running).
  return library_spec(kind == OpKind::all_reduce ? all_reduce_library_ : library_).select(kind, layout, bytes, *this);
}

Algorithm Tuner::pat_or(Algorithm fallback, OpKind kind, const GroupLayout& layout, double bytes) {
  if (!costs_.nccl || layout.size() < 2) return fallback;
  // NCCL v2.23+ weighs PAT against its ring for a communicator of one rank per node with its own cost
  // model (nccl_collective_algorithm); earlier releases and other groups run the ring.
  const int32_t nodes = *std::max_element(layout.node.begin(), layout.node.end()) + 1;
  if (!nccl_pat_enabled(*costs_.nccl, kind, layout.size(), nodes)) return fallback;
  const auto key = std::make_tuple(&layout, static_cast<int>(kind), bytes);
  if (const auto it = chosen_.find(key); it != chosen_.end()) return it->second;
  const bool pat = nccl_collective_algorithm(*costs_.nccl, kind, layout.size(), nodes, bytes) == NcclAlgorithm::pat;
  return chosen_[key] = pat ? Algorithm::pat : fallback;
}

Algorithm Tuner::ring_or_tree(Algorithm fallback, OpKind kind, const GroupLayout& layout, double bytes) {
  // NCCL runs trees between nodes only; inside one node its rings follow the fastest links.
  if (layout.size() <= 2 ||
      std::all_of(layout.node.begin(), layout.node.end(), [&](int32_t n) { return n == layout.node.front(); }))
    return fallback;
  const auto key = std::make_tuple(&layout, static_cast<int>(kind), bytes);
  if (const auto it = chosen_.find(key); it != chosen_.end()) return it->second;
  const double ring = estimate(kind, Algorithm::ring, layout, bytes);
  const double tree = estimate(kind, Algorithm::tree, layout, bytes);
  return chosen_[key] = tree < ring ? Algorithm::tree : Algorithm::ring;
}

}  // namespace paratwin::sim
