#pragma once
// A machine description: one node (its devices, host, intra-node link graph and NICs), the
// inter-node network, and a default performance profile. Read from JSON (topology/README.md) with
// every value in SI units internally: bytes, bytes/s, seconds, FLOP/s.
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/input_error.hpp"
#include "topology/gemm_model.hpp"

namespace paratwin::topology {

class MachineError : public InputError {
 public:
  using InputError::InputError;
};

struct DeviceSpec {
  std::string kind;
  int64_t count = 1;                              // devices per node
  std::map<std::string, double> peak_flops;       // dtype ("bf16", "fp16", "fp32") -> FLOP/s
  std::map<std::string, double> empirical_flops;  // best measured GEMM rate, where published
  double memory = 0;                              // bytes
  double hbm_bandwidth = 0;                       // bytes/s
  int64_t compute_units = 1;                      // SMs, CUs: the GEMM model's waves (1: a CPU core)
  std::vector<GemmTile> gemm_tiles;               // the GEMM library's tiles (empty: cuBLAS's)
  double gemm_cache = 0;                          // bytes: a CPU core's cache for its GEMM blocks (0: none)
  int64_t gemm_block_k = 0;                       // CPU BLAS: K per pass over C (0: one pass)
  int64_t gemm_block_n = 0;                       // CPU BLAS: columns per pass over packed A (0: no re-read)
};

struct HostSpec {
  std::string kind;
  int64_t sockets = 1;
  int64_t cores = 1;
  double memory = 0;            // bytes
  double memory_bandwidth = 0;  // bytes/s
};

// A bidirectional link of the node graph; `bandwidth` is per direction and each direction is shared
// only by the flows going that way.
struct LinkSpec {
  std::string a, b;  // endpoints: "gpuN", a router, or a NIC
  double bandwidth = 0;
  double latency = 0;
  std::string note;
};

struct NicSpec {
  std::string name;         // also its endpoint in the node graph
  double bandwidth = 0;     // injection bandwidth into the network, per direction
  std::vector<int> serves;  // devices whose inter-node traffic leaves through this NIC
};

struct NodeSpec {
  DeviceSpec device;
  HostSpec host;
  std::vector<std::string> routers;  // endpoints that are neither devices nor NICs (CPU sockets, switches)
  std::vector<LinkSpec> links;
  std::vector<NicSpec> nics;
};

enum class NetworkKind { none, dragonfly, fat_tree };

// Node j of a group attaches NIC k to switch (j / nics_per_switch)·P + k (P NICs per node): a node's
// NICs land on P different switches and each switch takes nics_per_switch NICs.
struct DragonflySpec {
  int64_t groups = 1;
  int64_t switches_per_group = 1;
  int64_t nics_per_switch = 1;
  int64_t global_links_per_pair = 1;  // links between every pair of groups
  double local_bandwidth = 0;         // switch-to-switch inside a group, per direction
  double global_bandwidth = 0;        // between groups, per direction
  // Adaptive (UGAL-like) routing as Slingshot does it: a flow is not pinned to one link but spreads
  // over all the links it could take. Modelled as one egress and one ingress resource per group of
  // (groups − 1) · links · global bandwidth · adaptive_share for flows between groups, and per switch
  // of (switches − 1) · local bandwidth · adaptive_share for flows inside a group: the share is what
  // is left when traffic bound for one place detours through a third (two hops instead of one).
  bool adaptive = false;
  double adaptive_share = 0.5;
};

// An extended generalised fat tree XGFT(h; down; up): a switch at level i+1 has down[i] children and
// every element at level i has up[i] parents. Level 0 are NIC ports: node n's NIC k is port n·P + k,
// or k·N + n when rail-optimised (NIC k of every node on rail k). Every tree link, the NICs' own
// up[0] links included, runs at link_bandwidth; the NIC's bandwidth limits it in series.
struct FatTreeSpec {
  std::vector<int64_t> down;
  std::vector<int64_t> up;
  double link_bandwidth = 0;  // every link of the tree, per direction
  bool rail_optimized = false;
};

struct NetworkSpec {
  NetworkKind kind = NetworkKind::none;
  int64_t nodes = 1;          // nodes of the whole machine
  double link_latency = 0;    // per network link (NIC-switch and switch-switch)
  double switch_latency = 0;  // per switch traversed
  DragonflySpec dragonfly;
  FatTreeSpec fat_tree;
  std::string note;  // approximations, stated
};

// The most of its speed a compute stream may lose beside a collective: at 1 it would never finish.
inline constexpr double kMaxComputeSlowdown = 0.95;

struct ProfileSpec {
  std::string library = "nccl";  // nccl, rccl, cray-mpich, pccl, mpi
  double launch_overhead = 0;    // seconds per kernel or call
  double collective_step = 0;    // seconds a library adds to every step of a collective algorithm
  // Fraction of a device-to-device link's (NVLink, NVSwitch port) bandwidth that the library's
  // transfers reach: NCCL's own topology model rates an NVLink below its signalling rate.
  double device_link_efficiency = 1.0;
  std::map<std::string, GemmModel> gemm;  // dtype -> the GEMM model's fitted or sourced parameters
  // Measured seconds of individual GEMM shapes (`calibrate micro --workload`), by dtype, then by
  // (m, n, k, batch, trans_a, trans_b); the curve above prices the shapes not measured.
  std::map<std::string, std::map<std::array<int64_t, 6>, double>> gemm_seconds;
  // The fraction of the compute stream's speed lost while a collective of the rank is in flight on
  // another stream. On a GPU the collective is a kernel too (NCCL and RCCL run one thread block per
  // channel on the compute units the GEMMs would use, and read and write the same HBM): a machine file's
  // profile.compute_while_communicating.slowdown, sourced there. On CPU ranks (MPI) the compute cores
  // drive the communication themselves (polls between slices of their work, the copies): a calibrated
  // profile (`calibrate micro` times GEMMs with collectives in flight) sets it.
  double compute_slowdown_communicating = 0;  // [0, kMaxComputeSlowdown]
  // and what a collective's step costs more while its rank computes (MPI moves a transfer only when
  // the compute thread polls).
  double overlapped_step_extra = 0;
  // Per collective kind ("all_reduce", ...), a library's own costs where they differ (calibrated MPI
  // implementations do): seconds per step instead of collective_step, and seconds per byte a step
  // moves on top of the links' time.
  struct CollectiveCost {
    double step = 0;
    double per_byte = 0;
    double overlapped_extra = -1;  // instead of overlapped_step_extra when >= 0
  };
  std::map<std::string, CollectiveCost> collective_costs;
  // Pipeline messages likewise: seconds per message and per byte on top of the links' time.
  CollectiveCost message_cost;
  // NCCL's tuning model (sim/nccl_tuning.hpp): with library nccl, rings and trees take the latency and
  // bandwidth of the protocol NCCL picks instead of collective_step.
  struct NcclSpec {
    std::string tuning;           // the release family whose tables apply: "2.15", "2.22", "2.23", "2.27"
    int compute_capability = 80;  // of the devices: 70, 80, 90
    std::string cpu;              // the host: intel, amd, arm, power
    bool ll128 = true;            // NCCL enables LL128 (GPU and NIC under one PCIe switch)
    // NCCL's NVLS algorithms (NVSwitch with NVLink SHARP multicast, sm90+) and CollNet (SHARP-capable
    // switches with NCCL's CollNet plugin and NCCL_COLLNET_ENABLE=1): false on every machine here, which
    // the model assumes (it has no cost model for them; the loader refuses true).
    bool nvls = false;
    bool collnet = false;
  };
  std::optional<NcclSpec> nccl;
};

struct Machine {
  std::string name;
  std::string description;
  std::string source_file;  // where it was read from ("built-in" for embedded machines)
  std::vector<std::string> sources;
  NodeSpec node;
  NetworkSpec network;
  ProfileSpec profile;

  int64_t devices_per_node() const { return node.device.count; }
  int64_t nics_per_node() const { return static_cast<int64_t>(node.nics.size()); }
  // Dragonfly: nodes in one group.
  int64_t nodes_per_group() const;
  int64_t total_devices() const { return network.nodes * node.device.count; }
  // The NIC (index into node.nics) that device `local` uses, or -1 when the node has none.
  int nic_of(int64_t local) const;
  // A machine of the first `nodes` nodes (the slice `--nodes N` selects).
  Machine slice(int64_t nodes) const;
};

const char* to_string(NetworkKind k);

// The GEMM model's view of a machine's device for one dtype: its compute units, tiles and CPU cache from
// the device, the rates from the caller (the peak and the memory bandwidth differ by dtype and by
// whether they were measured).
GemmDevice gemm_device(const DeviceSpec& device, double peak_flops, double memory_bandwidth, double bytes_per_element);
// Bytes per element of a dtype named as in peak_tflops ("fp32", "tf32", "fp64"; the 16-bit ones 2).
// The dtypes a device lists rates for (peak_tflops, empirical_tflops) and a profile fits GEMMs of.
const std::vector<std::string>& rate_dtypes();
double dtype_bytes(const std::string& dtype);

Machine parse_machine(const nlohmann::json& doc, const std::string& source);
Machine parse_machine_text(const std::string& text, const std::string& source);
Machine load_machine_file(const std::string& path);

// The communication libraries the simulator models, as machine profiles, --library and sweep and reference
// files name them, in the order of their registration (topology/communication_libraries.hpp).
const std::vector<std::string>& communication_libraries();

// The built-in machines (topology/machines/*.json, compiled in), by name.
std::vector<std::string> builtin_machine_names();
// A built-in machine's name, or a path to a machine file.
Machine resolve_machine(const std::string& name_or_path);
// The file resolve_machine reads for `name_or_path`: "" for a built-in machine's name (a file of that
// name is not read), for the checks of a run's inputs against its outputs.
std::string machine_file(const std::string& name_or_path);

}  // namespace paratwin::topology
