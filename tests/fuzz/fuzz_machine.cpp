// libFuzzer target for the machine-file reader: the input is JSON text. parse_machine_text() must
// either accept it or throw a MachineError that names the source and a JSON path in one line; an
// accepted machine must hold the invariants the simulator relies on, and turn into what the simulator
// builds from it: the Topology (every direction of every link a resource, with routes between devices),
// whose resource count must equal machine_size()'s estimate (the loader's size limits rest on it), with
// routes and ring loads over finite, positive bandwidths; the GEMM model's times of the profile; and the
// `paratwin machine show` text. Anything else — any other exception, a crash, undefined behaviour, a
// leak — is a bug and aborts.
//
// The SimGrid platform itself is not built: SimGrid allows one engine per process and cannot tear a
// platform down, so a fuzzer could build one platform in all; and build_platform() makes one SimGrid
// link per Topology resource and routes by Topology::route(), both checked here.
//
// Build: scripts/build.sh fuzz      Run: tests/fuzz/run_fuzz.sh machine SECONDS
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "tests/fuzz/json_mutator.hpp"
#include "tests/fuzz/rejection_check.hpp"
#include "topology/machine.hpp"
#include "topology/machine_size.hpp"
#include "topology/machine_text.hpp"
#include "topology/topology.hpp"

namespace {

namespace pt = paratwin::topology;

constexpr const char* kSource = "fuzz-machine.json";

// Building a Topology costs a Dijkstra per node endpoint and a resource per link direction; the loader
// allows far more than a fuzzer can build thousands of times a second. Beyond these, an accepted
// machine is checked without its Topology (or on a slice of a few nodes).
constexpr double kMaxFuzzResources = 200000;
constexpr double kMaxFuzzEndpoints = 64;
constexpr int64_t kMaxTextDevices = 16;  // machine_text() routes every pair of a node's devices

[[noreturn]] void bug(const char* stage, const std::string& what) {
  paratwin::fuzz::bug("fuzz_machine", stage, what);
}

void check_error(const pt::MachineError& e) {
  paratwin::fuzz::check_rejection(e, kSource, "fuzz_machine", "MachineError");
}

bool finite_positive(double x) {
  return std::isfinite(x) && x > 0;
}
bool finite_non_negative(double x) {
  return std::isfinite(x) && x >= 0;
}

void check_machine(const pt::Machine& m) {
  if (m.name.empty()) bug("accepted a machine without a name", m.source_file);
  if (m.devices_per_node() < 1 || m.network.nodes < 1) bug("accepted a machine without devices", m.name);
  if (!m.node.nics.empty())
    for (int64_t d = 0; d < m.devices_per_node(); ++d)
      if (m.nic_of(d) < 0) bug("accepted a machine with a device no NIC serves", std::to_string(d));
  if (m.network.kind == pt::NetworkKind::dragonfly) {
    if (m.nodes_per_group() < 1) bug("dragonfly with no node per group", m.name);
    if (m.network.nodes > m.network.dragonfly.groups * m.nodes_per_group())
      bug("dragonfly with more nodes than slots", m.name);
  }
  for (const auto& [dtype, peak] : m.node.device.peak_flops) {
    if (!finite_positive(peak)) bug("accepted a non-positive peak", dtype);
    const auto model = m.profile.gemm.find(dtype);
    if (model == m.profile.gemm.end()) bug("a peak dtype without a GEMM model", dtype);
    const pt::GemmDevice device =
        pt::gemm_device(m.node.device, peak, m.node.device.hbm_bandwidth, pt::dtype_bytes(dtype));
    for (const pt::GemmShape& shape : {pt::GemmShape{1, 1, 1, 1}, pt::GemmShape{4096, 4096, 4096, 1},
                                       pt::GemmShape{8192, 128, 64, 16}, pt::GemmShape{1, 50304, 12288, 1}}) {
      const double s = pt::gemm_timing(shape, device, model->second).seconds;
      if (!finite_positive(s))
        bug("GEMM model gives a non-positive or non-finite time", dtype + " " + std::to_string(s));
    }
  }
}

void check_route(const pt::Topology& topo, int64_t from, int64_t to) {
  const pt::Route r = topo.route(from, to);
  if (!finite_non_negative(r.latency)) bug("route with a bad latency", std::to_string(r.latency));
  if (from == to) {
    if (!r.resources.empty()) bug("route from a device to itself crosses links", std::to_string(from));
    return;
  }
  if (r.resources.empty())
    bug("route between two devices crosses no link", std::to_string(from) + "->" + std::to_string(to));
  for (uint32_t id : r.resources) {
    if (id >= topo.resources()) bug("route through a resource that does not exist", std::to_string(id));
    const pt::Resource& res = topo.resource(id);
    if (!finite_positive(res.bandwidth) || !finite_non_negative(res.latency))
      bug("resource with a bad bandwidth or latency", topo.resource_name(id));
    if (topo.on_node(id, 0) >= topo.resources())
      bug("on_node gives a resource that does not exist", std::to_string(id));
  }
  const pt::PathInfo p = topo.path(from, to);
  if (!finite_positive(p.bandwidth)) bug("path with a bad bandwidth", std::to_string(p.bandwidth));
}

void check_topology(const pt::Machine& m, bool one_nic_per_node) {
  const pt::MachineSize size = pt::machine_size(m);
  if (size.endpoints > kMaxFuzzEndpoints) return;
  int64_t nodes = m.network.nodes;
  if (size.resources(static_cast<double>(nodes)) > kMaxFuzzResources) nodes = std::min<int64_t>(nodes, 4);
  if (size.resources(static_cast<double>(nodes)) > kMaxFuzzResources) return;
  const pt::Machine slice = m.slice(nodes);
  pt::TopologyOptions options;
  options.one_nic_per_node = one_nic_per_node;
  const pt::Topology topo(slice, options);
  if (static_cast<double>(topo.resources()) != size.resources(static_cast<double>(nodes)))
    bug("machine_size() differs from the Topology's resources",
        std::to_string(size.resources(static_cast<double>(nodes))) + " vs " + std::to_string(topo.resources()));
  const int64_t devices = topo.devices(), per_node = slice.devices_per_node();
  const int64_t last = devices - 1;
  for (const auto& [a, b] : {std::pair<int64_t, int64_t>{0, 0},
                             {0, 1},
                             {0, last},
                             {last, 0},
                             {per_node - 1, per_node},
                             {per_node, 0},
                             {last / 2, last},
                             {last, last / 3}})
    if (a >= 0 && b >= 0 && a < devices && b < devices) check_route(topo, a, b);
  std::vector<int64_t> ring;
  for (int64_t i = 0; i < std::min<int64_t>(devices, 16); ++i)
    ring.push_back(i * devices / std::min<int64_t>(devices, 16));
  const pt::RingLoad load = topo.rings({ring});
  if (devices > 1 && !finite_positive(load.bandwidth)) bug("ring with a bad bandwidth", std::to_string(load.bandwidth));
  if (per_node <= kMaxTextDevices) (void)pt::machine_text(slice);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pt::Machine m;
  try {
    m = pt::parse_machine_text(text, kSource);
  } catch (const pt::MachineError& e) {
    check_error(e);
    return 0;  // an expected outcome: the input is not a valid machine
  } catch (const std::exception& e) {
    bug("parse_machine_text threw a non-MachineError", e.what());
  }
  try {
    check_machine(m);
    check_topology(m, size % 2 == 1);  // Cray MPICH's one NIC per node on half of the inputs
  } catch (const std::exception& e) {
    bug("an accepted machine threw", e.what());
  }
  return 0;
}

// ---- Structure-aware mutation -------------------------------------------------------------------

namespace {

const paratwin::fuzz::Vocabulary& vocabulary() {
  static const paratwin::fuzz::Vocabulary v{
      // Every key of the format (topology/README.md).
      {"name",
       "description",
       "sources",
       "source",
       "note",
       "node",
       "device",
       "kind",
       "count",
       "peak_tflops",
       "empirical_tflops",
       "bf16",
       "fp16",
       "fp32",
       "tf32",
       "fp64",
       "memory_GB",
       "memory_GBps",
       "compute_units",
       "gemm_tiles",
       "m",
       "n",
       "k",
       "gemm_cache_MB",
       "gemm_blocks",
       "host",
       "sockets",
       "cores",
       "routers",
       "links",
       "between",
       "GBps",
       "latency_us",
       "nics",
       "serves",
       "network",
       "topology",
       "nodes",
       "link_latency_us",
       "switch_latency_us",
       "dragonfly",
       "groups",
       "switches_per_group",
       "nics_per_switch",
       "global_links_per_pair",
       "local_GBps",
       "global_GBps",
       "routing",
       "adaptive_share",
       "fat_tree",
       "down",
       "up",
       "link_GBps",
       "rail_optimized",
       "profile",
       "library",
       "launch_overhead_us",
       "collective_step_us",
       "nccl",
       "tuning",
       "compute_capability",
       "cpu",
       "ll128",
       "device_links",
       "efficiency",
       "gemm",
       "max_efficiency",
       "tile_overhead_k",
       "operand_reuse",
       "fixed_us",
       "packing_GBps"},
      // Endpoint names (links must name declared ones), enum values, the empty string.
      {"gpu0", "gpu1",       "gpu2", "gpu3", "gpu7",      "gpu1023",  "nic0",  "nic1",    "nic2",     "cpu0",
       "cpu1", "sw0",        "",     "none", "dragonfly", "fat_tree", "torus", "minimal", "adaptive", "nccl",
       "rccl", "cray-mpich", "pccl", "mpi",  "2.15",      "2.22",     "intel", "amd",     "arm",      "power"},
      {0,
       1,
       2,
       3,
       4,
       5,
       6,
       7,
       8,
       12,
       16,
       24,
       32,
       60,
       64,
       100,
       128,
       1000,
       1023,
       1024,
       1025,
       4096,
       4097,
       65536,
       65537,
       int64_t{1} << 20,
       (int64_t{1} << 20) + 1,
       int64_t{1} << 31,
       int64_t{1} << 40,
       -1,
       INT64_MAX},
      {0.0, 1e-9, 1e-6, 1e-3, 0.5, 1.0, 1.5, 25.0, 1e3, 1e6, 1e9, 1e10, -1.0, 1e300}};
  return v;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return paratwin::fuzz::mutate_json(data, size, max_size, seed, vocabulary());
}
