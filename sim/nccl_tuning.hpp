#pragma once
// NCCL's own cost model (src/graph/tuning.cc of NVIDIA/nccl), which NCCL uses to pick the protocol of
// every collective: LL (8-byte stores of 4 data bytes and a flag, lowest latency, a quarter of the
// bandwidth or less), LL128 (128-byte lines, 120 of data) or Simple (bulk copies behind a fence).
// time = latency + bytes / bandwidth, latency = base + Σ per-hop latency, with a ring all-gather of
// n ranks on N nodes taking n-1 hops of which N-1 cross the network. The tables differ between
// releases; the families here are v2.15.5 (and earlier: v2.8-v2.17 have the same ring rows), v2.22.3
// (v2.18-v2.22: a higher network Simple latency, a host-dependent network overhead per step, LL at half
// the bus bandwidth), v2.23.4 (PAT for all-gather and reduce-scatter, tree Simple rows of 4 and 14 us,
// a ring of one rank per node priced with the network's tree row) and v2.27.7 (v2.24.3-v2.30.7: the same
// rows, PAT at 0.75 of the bus bandwidth instead of 0.85).
//
// The simulator prices each step of a ring or tree with NCCL's latency of the protocol NCCL would
// choose, spread evenly over the steps, and moves the protocol's bytes on the wire: LL's and LL128's
// lower bandwidth as more bytes at the links' rate. Why not the measured α·p of a 32-GPU fit: at
// 1,024-2,048 GPUs the paper's PCCL speedups over NCCL (3-5x at 16-32 MB) need a per-hop latency of a
// few microseconds, as NCCL's LL rows have, not the fitted 9 µs (sim/README.md).
#include <string>

#include "workloads/program.hpp"

namespace paratwin::sim {

enum class NcclProtocol { ll, ll128, simple };
const char* to_string(NcclProtocol p);

// PAT (Parallel Aggregated Trees, v2.23+): all-gather and reduce-scatter in log2 steps of doubling
// distance, each sending the data of as many ranks as it aggregates (src/include/collectives.h,
// PatAGAlgorithm / PatRSAlgorithm).
enum class NcclAlgorithm { ring, tree, pat };

// What NCCL's tuner knows of the machine.
struct NcclHardware {
  std::string version = "2.15";  // "2.15", "2.22", "2.23" or "2.27": which tables
  int compute_capability = 80;   // 70, 80, 90: LL128's caps and llMaxBw's single-node row
  std::string cpu = "intel";     // intel, amd, arm, power: llMaxBw's multi-node row, net overhead
  bool nvlink = true;            // devices of a node talk over NVLink (else PCIe)
  bool ll128 = true;             // LL128 enabled (GPU and NIC under one PCIe switch)
  double intra_bus_GBps = 0;     // Simple bus bandwidth of a ring inside a node
  double inter_bus_GBps = 0;     // of a ring across nodes (a node's NICs)
  int devices_per_node = 0;      // of the machine (0: unknown; the 2.23+ families scale the NICs by it)
};

struct NcclChoice {
  NcclProtocol protocol = NcclProtocol::simple;
  double latency = 0;          // seconds, the whole collective
  double bandwidth_share = 1;  // the protocol's bus bandwidth over Simple's
  double estimate = 0;         // NCCL's estimated seconds (latency + bytes / bandwidth)
};

// The protocol NCCL picks for `kind` (all_reduce, all_gather, reduce_scatter; tree: all_reduce only;
// pat: all_gather and reduce_scatter, Simple only, where nccl_pat_enabled) over `ranks` ranks on `nodes`
// nodes, `bytes` the nccl-tests size, and its latency and bandwidth.
// Throws std::invalid_argument for an unknown table version or an algorithm the release or group lacks.
NcclChoice nccl_choice(const NcclHardware& hw, workloads::OpKind kind, NcclAlgorithm algorithm, int ranks, int nodes,
                       double bytes);

// Whether NCCL may run PAT for `kind` over `ranks` ranks on `nodes` nodes: v2.23+, all-gather or
// reduce-scatter, a communicator of one rank per node (ncclPatEnable: nNodes == nRanks; and a host-driven
// network, which every machine here has: no device offload), and sm60+ (v2.27+: CUDA atomics).
bool nccl_pat_enabled(const NcclHardware& hw, workloads::OpKind kind, int ranks, int nodes);

// What NCCL's tuner picks between the algorithms it has for `kind` (ncclTopoGetAlgoTime, the lowest
// estimate): for all-gather and reduce-scatter ring or, where nccl_pat_enabled, PAT. Trees are the
// simulator's tuner's to weigh (sim/tuner.hpp), so for all-reduce this is the ring.
NcclAlgorithm nccl_collective_algorithm(const NcclHardware& hw, workloads::OpKind kind, int ranks, int nodes,
                                        double bytes);

}  // namespace paratwin::sim
