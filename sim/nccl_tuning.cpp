#include "sim/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace paratwin::sim {

using workloads::OpKind;

const char* to_string(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::ll:
      return "LL";
    case NcclProtocol::ll128:
      return "LL128";
    case NcclProtocol::simple:
      return "Simple";
  }
  return "?";
}

namespace {

constexpr int kProtocols = 3;  // LL, LL128, Simple, NCCL's order

// One release family's tables, in microseconds and GB/s (tuning.cc: baseLat, hwLat, llMaxBws).
struct Tables {
  double base[2][kProtocols];       // [tree, ring]
  double nvlink[2][kProtocols];     // per hop inside a node over NVLink
  double pci[2][kProtocols];        // over PCIe
  double net[2][kProtocols];        // across the network
  double ll_max[3][3];              // [row][1 node, 2 nodes, more]
  bool ll_slower_inside_multinode;  // v2.15: LL's intra-node hops cost 1.8x on multi-node jobs
  bool net_overhead;                // v2.18+: every step of a multi-node ring pays the host's posting cost
  double ring_ll_share_multinode;   // LL's share of the bus bandwidth (v2.15: 1/4; v2.22: 1/2)
  double ring_ll_share_single;      // inside one node, all-gather and reduce-scatter (v2.15: 1/3)
  bool sm80_bus_cap;                // v2.15: an Ampere ring's bus bandwidth at most 235 GB/s
  bool allreduce_inter_2n;          // v2.18+: a ring all-reduce crosses the network 2N times, not 2(N-1)
  // The ring all-reduce's plateau: v2.15 from ranks/16 x 64 KiB at 1.9x; v2.18+ from 64 bytes per channel
  // and rank (8 channels assumed) at 1.4x on sm80+, 1.9x below.
  bool plateau_per_channel;
  double ring_ll128_low_ppn_share;  // LL128's share of a ring with fewer than two ranks per node (else 0.92)
  bool one_per_node_tree_net_row;   // v2.23+: a ring of one rank per node crosses at the tree's network latency
  double pat_share;                 // PAT's share of the bus bandwidth (0: no PAT before v2.23)
  bool pat_needs_sm60;              // v2.27+: PAT refused below sm60
  // A communicator of ppn GPUs per node crosses nodes through its own GPUs' NICs, ppn / devices_per_node
  // of the node's (NCCL's graph search runs over the communicator's GPUs and the NICs near them,
  // src/graph/search.cc); the 2.15 and 2.22 families keep the whole node's NICs, as their machines were
  // calibrated with.
  bool bus_of_own_nics;
};

// NVIDIA/nccl v2.15.5-1, src/graph/tuning.cc lines 56-81 (ring rows as in v2.8-v2.17).
constexpr Tables kV215 = {
    {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}},
    {{.52, 1.25, 28}, {.47, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
    true,
    false,
    1.0 / 4,
    1.0 / 3,
    true,
    false,
    false,
    0.7,
    false,
    0,
    false,
    false,
};

// NVIDIA/nccl v2.22.3-1, src/graph/tuning.cc lines 56-89 and 111-116 (getNetOverhead).
constexpr Tables kV222 = {
    {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}},
    false,
    true,
    1.0 / 2,
    1.0 / 2,
    false,
    true,
    true,
    0.7,
    false,
    0,
    false,
    false,
};

// NVIDIA/nccl v2.23.4-1, src/graph/tuning.cc: baseLat and hwLat lines 56-78 (tree Simple: base 8.4, 4.0
// per NVLink or PCIe hop, 14 per network hop), ncclPatEnable lines 108-115, LL128 ring share line 189
// (0.92 whatever the ranks per node), PAT's bus bandwidth x 0.85 line 193, the network tree row for a ring
// of one rank per node lines 236-237 ("with ppn=1 latencies are fully exposed"), a ring all-reduce's
// 2(N-1) network steps line 258, PAT's latency lines 276-281.
constexpr Tables kV223 = {
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
    {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}},
    false,
    true,
    1.0 / 2,
    1.0 / 2,
    false,
    false,
    true,
    0.92,
    true,
    0.85,
    false,
    true,
};

// NVIDIA/nccl v2.27.7-1 (the same rows from v2.24.3-1 to v2.30.7-1), src/graph/tuning.cc: PAT's bus
// bandwidth x 0.75 (line 285), ncclPatEnable refusing sm < 60 (line 194); v2.28+ moves the constants into
// ncclTunerConstantsDefaults with a PAT base of 8 and the network tree row (v2.28.3-1 lines 147-166), the
// same latency.
constexpr Tables kV227 = [] {
  Tables t = kV223;
  t.pat_share = 0.75;
  t.pat_needs_sm60 = true;
  return t;
}();

const Tables& tables(const std::string& version) {
  if (version == "2.15") return kV215;
  if (version == "2.22") return kV222;
  if (version == "2.23") return kV223;
  if (version == "2.27") return kV227;
  throw std::invalid_argument("no NCCL tuning tables for version \"" + version + "\" (known: 2.15, 2.22, 2.23, 2.27)");
}

int log2i(int n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

}  // namespace

bool nccl_pat_enabled(const NcclHardware& hw, OpKind kind, int ranks, int nodes) {
  const Tables& t = tables(hw.version);
  if (t.pat_share <= 0 || (kind != OpKind::all_gather && kind != OpKind::reduce_scatter)) return false;
  if (t.pat_needs_sm60 && hw.compute_capability < 60) return false;
  return ranks >= 2 && nodes == ranks;
}

NcclChoice nccl_choice(const NcclHardware& hw, OpKind kind, NcclAlgorithm algorithm, int ranks, int nodes,
                       double bytes) {
  const Tables& t = tables(hw.version);
  const bool all_reduce = kind == OpKind::all_reduce;
  if (!all_reduce && kind != OpKind::all_gather && kind != OpKind::reduce_scatter)
    throw std::invalid_argument("NCCL's tuning model here covers all-reduce, all-gather and reduce-scatter");
  if (algorithm == NcclAlgorithm::tree && !all_reduce) throw std::invalid_argument("NCCL's trees run all-reduce only");
  if (algorithm == NcclAlgorithm::pat && !nccl_pat_enabled(hw, kind, ranks, nodes))
    throw std::invalid_argument("NCCL " + hw.version + " has no PAT for this collective over " + std::to_string(ranks) +
                                " ranks on " + std::to_string(nodes) + " nodes");
  ranks = std::max(ranks, 2);
  nodes = std::clamp(nodes, 1, ranks);
  const double ppn = static_cast<double>(ranks) / nodes;
  double inter_bus = hw.inter_bus_GBps;
  if (t.bus_of_own_nics && hw.devices_per_node > 0) inter_bus *= std::min(1.0, ppn / hw.devices_per_node);
  double bus = (nodes <= 2 ? hw.intra_bus_GBps : inter_bus);
  if (t.sm80_bus_cap && hw.compute_capability == 80) bus = std::min(bus, 235.0);
  if (algorithm == NcclAlgorithm::pat) {
    // Simple only. Latency 8 + log2(nodes) x (the network tree row's Simple 14 us) / 3.5 + 2.8 us per rank
    // ("still a linear part"); bus bandwidth x pat_share, not converted to an algorithm bandwidth: the
    // estimate is bytes / (share x bus). (v2.23.4-1 tuning.cc lines 193, 221, 276-281; the plugins' own
    // network latency, graph->latencyInter, is 0 for IB and sockets: net_ib.cc "props->latency = 0".)
    const double latency = 8 + log2i(nodes) * (t.net[0][2] / 3.5) + ranks * 2.8;
    const double seconds = latency * 1e-6 + (bus > 0 ? bytes / (bus * t.pat_share * 1e9) : 0.0);
    return {NcclProtocol::simple, latency * 1e-6, t.pat_share, seconds};
  }
  const int a = algorithm == NcclAlgorithm::ring ? 1 : 0;
  const int nsteps = all_reduce ? 2 * (ranks - 1) : ranks - 1;
  int inter_steps = all_reduce ? 2 * (nodes - 1) : nodes - 1;
  if (all_reduce && t.allreduce_inter_2n) inter_steps = nodes > 1 ? 2 * nodes : 0;
  inter_steps = std::min(inter_steps, nsteps);
  const int cc_row = hw.compute_capability >= 90 ? 2 : hw.compute_capability >= 80 ? 1 : 0;
  const int row = nodes == 1 ? cc_row : hw.cpu == "amd" ? 1 : 0;
  const double ll_max = t.ll_max[row][nodes <= 2 ? nodes - 1 : 2];

  NcclChoice best;
  best.estimate = INFINITY;
  for (int p = 0; p < kProtocols; ++p) {
    const auto protocol = static_cast<NcclProtocol>(p);
    if (protocol == NcclProtocol::ll128 &&
        (!hw.ll128 || (hw.compute_capability != 70 && hw.compute_capability != 80 && hw.compute_capability != 90)))
      continue;
    double share = 1;  // of Simple's bus bandwidth
    if (algorithm == NcclAlgorithm::ring) {
      if (protocol == NcclProtocol::ll) {
        const double f = nodes > 1 || all_reduce ? t.ring_ll_share_multinode : t.ring_ll_share_single;
        share = bus > 0 ? std::min(ll_max, bus * f) / bus : f;
      } else if (protocol == NcclProtocol::ll128) {
        share = ppn < 2 ? t.ring_ll128_low_ppn_share : 0.92;
      }
    } else {  // of the tree's Simple bandwidth, 0.92 of the bus's
      const double tree_bus = bus * 0.92;
      if (protocol == NcclProtocol::ll) share = tree_bus > 0 ? std::min(tree_bus / 3.8, ll_max) / tree_bus : 1 / 3.8;
      if (protocol == NcclProtocol::ll128) share = nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    }
    double intra = (hw.nvlink ? t.nvlink : t.pci)[a][p];
    // v2.23+: with one rank per node every hop's latency is exposed, priced at the tree's network row.
    double inter = t.one_per_node_tree_net_row && ppn == 1 ? t.net[0][p] : t.net[a][p];
    if (t.ll_slower_inside_multinode && nodes > 1 && protocol == NcclProtocol::ll) intra *= 1.8;
    double latency = t.base[a][p];
    if (algorithm == NcclAlgorithm::ring) {
      if (t.net_overhead && nodes > 1) {
        const double overhead = (hw.cpu == "amd" ? 2.0 : 1.0) * (protocol == NcclProtocol::simple ? 3 : 1);
        intra = std::max(intra, overhead);
      }
      latency += (nsteps - inter_steps) * intra + inter_steps * inter;
    } else {
      latency += 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
    }
    // The ring's "plateau": a large multi-node Simple all-reduce runs at a longer latency.
    if (algorithm == NcclAlgorithm::ring && all_reduce && protocol == NcclProtocol::simple && nodes > 1) {
      if (!t.plateau_per_channel && bytes >= ranks / 16.0 * 65536) latency *= 1.9;
      if (t.plateau_per_channel && bytes / (8.0 * ranks) >= 64) latency *= hw.compute_capability >= 80 ? 1.4 : 1.9;
    }
    const double algbw =
        algorithm == NcclAlgorithm::ring ? bus * share * static_cast<double>(ranks) / nsteps : bus * 0.92 * share * 0.5;
    const double seconds = latency * 1e-6 + (algbw > 0 ? bytes / (algbw * 1e9) : 0.0);
    if (seconds < best.estimate) best = {protocol, latency * 1e-6, share, seconds};
  }
  return best;
}

NcclAlgorithm nccl_collective_algorithm(const NcclHardware& hw, OpKind kind, int ranks, int nodes, double bytes) {
  if (!nccl_pat_enabled(hw, kind, ranks, nodes)) return NcclAlgorithm::ring;
  // ncclTopoGetAlgoTime's lowest estimate, ring (its best protocol) against PAT (v2.23.4-1 enqueue.cc
  // topoGetAlgoInfo; a tie keeps the ring, NCCL_ALGO_RING coming before NCCL_ALGO_PAT).
  const NcclChoice ring = nccl_choice(hw, kind, NcclAlgorithm::ring, ranks, nodes, bytes);
  const NcclChoice pat = nccl_choice(hw, kind, NcclAlgorithm::pat, ranks, nodes, bytes);
  return pat.estimate < ring.estimate ? NcclAlgorithm::pat : NcclAlgorithm::ring;
}

}  // namespace paratwin::sim
