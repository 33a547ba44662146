// Reading and validating machine descriptions. Units in the JSON keys (GB, GBps, us, tflops) become
// SI units here; every error names the JSON path.
#include <algorithm>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/report_text.hpp"
#include "topology/machine.hpp"
#include "topology/machine_size.hpp"

namespace paratwin::topology {

namespace {

constexpr double kGB = 1e9;
constexpr double kUs = 1e-6;
constexpr double kTera = 1e12;
const char* const kFormatDoc = "topology/README.md";
const std::vector<std::string> kDtypes = {"bf16", "fp16", "fp32", "tf32", "fp64", "fp8"};

// What the simulator can hold. Every direction of every link is one SimGrid link of the platform, about
// 600 bytes and 5 us to build (bench_platform: the whole of Frontier, 626,748 links, 474 MiB and 4 s;
// 1,059,876 links, 639 MiB and 4-7 s): 2^22 links are 2.5 GB and half a minute, more than six
// Frontiers. The network's links are built for every simulation, whatever its slice of the nodes.
constexpr double kMaxSimGridLinks = 1 << 22;
// The node's route table: Dijkstra from every device and NIC over every endpoint and link, and the
// hops of a route between every two devices and NICs (a ring of 1,024 devices would hold 2^28 of
// them, 2 GB).
constexpr double kMaxNodeEndpoints = 2048;
constexpr double kMaxNodeLinks = 8192;
constexpr double kMaxRouteHops = 1 << 24;

// A count for a message: exact while it is one, else in scientific notation (a malformed fat tree's
// product of radices may exceed int64).
std::string count_text(double n) {
  return n < 9e18 ? std::to_string(static_cast<int64_t>(n)) : printed("%.3g", n);
}

// "source" and "note" may annotate any object: provenance stays in the file, next to the value.
std::string annotations(JsonReader& r) {
  r.string("source", "");
  return r.string("note", "");
}

std::map<std::string, double> flops_table(JsonReader r, bool required) {
  std::map<std::string, double> out;
  for (const auto& dtype : kDtypes)
    if (r.has(dtype)) out[dtype] = r.number(dtype, std::nullopt, 1e-9, 1e9) * kTera;
  annotations(r);
  r.finish();
  if (required && out.empty()) r.fail("bf16", "give at least one dtype's peak (bf16, fp16, fp32, tf32, fp64, fp8)");
  return out;
}

DeviceSpec read_device(JsonReader r) {
  DeviceSpec d;
  d.kind = r.string("kind");
  d.count = r.integer("count", std::nullopt, 1, 1024);
  d.peak_flops = flops_table(r.object("peak_tflops"), true);
  if (r.has("empirical_tflops")) d.empirical_flops = flops_table(r.object("empirical_tflops"), false);
  for (const auto& [dtype, rate] : d.empirical_flops) {
    if (!d.peak_flops.count(dtype))
      r.fail("empirical_tflops." + dtype, "has no peak_tflops." + dtype + " to compare with");
    if (rate > d.peak_flops.at(dtype)) r.fail("empirical_tflops." + dtype, "exceeds peak_tflops." + dtype);
  }
  d.memory = r.number("memory_GB", std::nullopt, 1e-6, 1e9) * kGB;
  d.hbm_bandwidth = r.number("memory_GBps", std::nullopt, 1e-6, 1e9) * kGB;
  d.compute_units = r.integer("compute_units", 1, 1, 1 << 20);
  if (r.has("gemm_tiles")) {
    for (JsonReader t : r.objects("gemm_tiles")) {
      GemmTile tile;
      tile.m = t.integer("m", std::nullopt, 1, 1 << 16);
      tile.n = t.integer("n", std::nullopt, 1, 1 << 16);
      t.finish();
      d.gemm_tiles.push_back(tile);
    }
    if (d.gemm_tiles.empty())
      r.fail("gemm_tiles", "is empty: list the library's tiles, or leave the key out for cuBLAS's");
  }
  d.gemm_cache = r.number("gemm_cache_MB", 0.0, 0, 1e6) * 1024 * 1024;
  if (r.has("gemm_blocks")) {
    if (d.gemm_cache <= 0)
      r.fail("gemm_blocks", "needs gemm_cache_MB: the blocks are what a CPU BLAS fits in that cache");
    JsonReader b = r.object("gemm_blocks");
    d.gemm_block_k = b.integer("k", std::nullopt, 1, 1 << 20);
    d.gemm_block_n = b.integer("n", std::nullopt, 1, 1 << 20);
    annotations(b);
    b.finish();
  }
  annotations(r);
  r.finish();
  return d;
}

HostSpec read_host(JsonReader r) {
  HostSpec h;
  h.kind = r.string("kind", "");
  h.sockets = r.integer("sockets", 1, 1, 64);
  h.cores = r.integer("cores", 1, 1, 1 << 16);
  h.memory = r.number("memory_GB", 0.0, 0, 1e9) * kGB;
  h.memory_bandwidth = r.number("memory_GBps", 0.0, 0, 1e9) * kGB;
  annotations(r);
  r.finish();
  return h;
}

std::string device_endpoint(int64_t i) {
  return "gpu" + std::to_string(i);
}

// Devices, NICs and routers form the node graph; every device must reach every other device and
// its NIC.
void check_connected(JsonReader& r, const NodeSpec& n) {
  std::map<std::string, std::vector<std::string>> adjacent;
  for (const auto& l : n.links) {
    adjacent[l.a].push_back(l.b);
    adjacent[l.b].push_back(l.a);
  }
  std::set<std::string> seen{device_endpoint(0)};
  std::deque<std::string> todo{device_endpoint(0)};
  while (!todo.empty()) {
    const std::string e = todo.front();
    todo.pop_front();
    for (const auto& next : adjacent[e])
      if (seen.insert(next).second) todo.push_back(next);
  }
  for (int64_t i = 1; i < n.device.count; ++i)
    if (!seen.count(device_endpoint(i)))
      r.fail("links", "do not connect " + device_endpoint(i) + " to " + device_endpoint(0));
  for (size_t k = 0; k < n.nics.size(); ++k)
    if (!seen.count(n.nics[k].name))
      r.fail("nics[" + std::to_string(k) + "]",
             "NIC \"" + n.nics[k].name + "\" is not connected to the devices by any link");
}

// The hops of the routes between every two devices and NICs, by a breadth-first search from each: the
// Topology's routes take the fewest hops (its link weights prefer wide links only among those).
double route_hops(const NodeSpec& n) {
  std::map<std::string, size_t> index;
  for (int64_t i = 0; i < n.device.count; ++i) index.emplace(device_endpoint(i), index.size());
  for (const auto& nic : n.nics) index.emplace(nic.name, index.size());
  const size_t sources = index.size();
  for (const auto& router : n.routers) index.emplace(router, index.size());
  std::vector<std::vector<size_t>> adjacent(index.size());
  for (const auto& l : n.links) {
    adjacent[index.at(l.a)].push_back(index.at(l.b));
    adjacent[index.at(l.b)].push_back(index.at(l.a));
  }
  double hops = 0;
  std::vector<int64_t> distance;
  std::deque<size_t> todo;
  for (size_t src = 0; src < sources; ++src) {
    distance.assign(index.size(), -1);
    distance[src] = 0;
    todo.assign(1, src);
    while (!todo.empty()) {
      const size_t e = todo.front();
      todo.pop_front();
      if (e < sources) hops += static_cast<double>(distance[e]);
      for (size_t next : adjacent[e])
        if (distance[next] < 0) {
          distance[next] = distance[e] + 1;
          todo.push_back(next);
        }
    }
  }
  return hops;
}

// The Topology computes shortest paths from every device and NIC of the node and keeps a route between
// every two of them: bounded here so that routing a node takes seconds and megabytes, not hours.
void check_route_table(JsonReader& r, const NodeSpec& n) {
  const MachineSize size = machine_size(n, NetworkSpec{});
  if (size.endpoints > kMaxNodeEndpoints)
    r.fail(n.routers.size() > n.nics.size() ? "routers" : "nics",
           "make the node " + count_text(size.endpoints) + " endpoints (" + std::to_string(n.device.count) +
               " devices, " + std::to_string(n.nics.size()) + " NICs, " + std::to_string(n.routers.size()) +
               " routers), more than the " + count_text(kMaxNodeEndpoints) +
               " a node may have (routing searches them all from every device and NIC)");
  if (size.node_links > kMaxNodeLinks)
    r.fail("links", "has " + count_text(size.node_links) + " links, more than the " + count_text(kMaxNodeLinks) +
                        " a node may have (routing searches them all from every device and NIC)");
  const double hops = route_hops(n);
  if (hops > kMaxRouteHops)
    r.fail("links", "give routes of " + count_text(hops) +
                        " hops in all between every two devices and NICs of the node, more than the " +
                        count_text(kMaxRouteHops) +
                        " the node's route table may hold: connect them through fewer hops (a switch or router)");
}

NodeSpec read_node(JsonReader r) {
  NodeSpec n;
  n.device = read_device(r.object("device"));
  if (r.has("host")) n.host = read_host(r.object("host"));
  std::set<std::string> endpoints;
  for (int64_t i = 0; i < n.device.count; ++i) endpoints.insert(device_endpoint(i));
  if (r.has("routers")) n.routers = r.string_list("routers");
  for (size_t i = 0; i < n.routers.size(); ++i)
    if (n.routers[i].empty() || !endpoints.insert(n.routers[i]).second)
      r.fail("routers[" + std::to_string(i) + "]", "= \"" + n.routers[i] + "\" is empty or names an endpoint twice");

  std::vector<int> served_by(static_cast<size_t>(n.device.count), -1);
  auto nics = r.objects("nics");
  for (size_t k = 0; k < nics.size(); ++k) {
    JsonReader& nr = nics[k];
    NicSpec nic;
    nic.name = nr.string("name");
    if (nic.name.empty() || !endpoints.insert(nic.name).second)
      nr.fail("name", "= \"" + nic.name + "\" is empty or names an endpoint twice");
    nic.bandwidth = nr.number("GBps", std::nullopt, 1e-6, 1e6) * kGB;
    for (int64_t d : nr.integer_list("serves", 0, n.device.count - 1)) {
      const int other = served_by[static_cast<size_t>(d)];
      if (other >= 0)  // by an earlier NIC, or listed twice by this one (not yet in n.nics)
        nr.fail("serves", "device " + std::to_string(d) + " is already served by " +
                              (other == static_cast<int>(k) ? nic.name : n.nics[static_cast<size_t>(other)].name));
      served_by[static_cast<size_t>(d)] = static_cast<int>(k);
      nic.serves.push_back(static_cast<int>(d));
    }
    annotations(nr);
    nr.finish();
    n.nics.push_back(nic);
  }
  if (!n.nics.empty())
    for (int64_t d = 0; d < n.device.count; ++d)
      if (served_by[static_cast<size_t>(d)] < 0)
        r.fail("nics", "no NIC serves device " + std::to_string(d) + " (every device needs exactly one)");

  auto links = r.objects("links");
  std::set<std::pair<std::string, std::string>> pairs;
  for (auto& lr : links) {
    LinkSpec l;
    const auto ends = lr.string_list("between");
    if (ends.size() != 2) lr.fail("between", "must name exactly two endpoints");
    for (size_t e = 0; e < 2; ++e)
      if (!endpoints.count(ends[e]))
        lr.fail("between[" + std::to_string(e) + "]", "= \"" + ends[e] + "\" is not a device (gpu0..gpu" +
                                                          std::to_string(n.device.count - 1) +
                                                          "), a NIC or a declared router");
    if (ends[0] == ends[1]) lr.fail("between", "connects \"" + ends[0] + "\" to itself");
    l.a = ends[0];
    l.b = ends[1];
    if (!pairs.insert(std::minmax(l.a, l.b)).second)
      lr.fail("between",
              "a second link between \"" + l.a + "\" and \"" + l.b + "\" (give one link its total bandwidth)");
    l.bandwidth = lr.number("GBps", std::nullopt, 1e-6, 1e6) * kGB;
    l.latency = lr.number("latency_us", 0.0, 0, 1e6) * kUs;
    l.note = annotations(lr);
    lr.finish();
    n.links.push_back(l);
  }
  annotations(r);
  r.finish();
  if (n.device.count > 1 || !n.nics.empty()) check_connected(r, n);
  check_route_table(r, n);
  return n;
}

// Every simulation builds the whole network (its switches' links) and the links of the nodes it runs
// on; `paratwin machine show` builds the whole machine. Both must fit in what SimGrid and memory hold.
void check_platform_size(JsonReader& r, const NodeSpec& node, const NetworkSpec& net) {
  const MachineSize size = machine_size(node, net);
  const std::string limit =
      ", more than the " + count_text(kMaxSimGridLinks) +
      " SimGrid links (one per direction of a link, about 600 bytes each) this simulator can hold";
  if (size.network_resources > kMaxSimGridLinks) {
    if (net.kind == NetworkKind::dragonfly) {
      const auto& df = net.dragonfly;
      const double g = static_cast<double>(df.groups), sw = static_cast<double>(df.switches_per_group);
      const double global = g * (g - 1) / 2 * static_cast<double>(df.global_links_per_pair);
      const double local = g * sw * (sw - 1) / 2;
      r.fail(global >= local ? "dragonfly.groups" : "dragonfly.switches_per_group",
             "= " + std::to_string(global >= local ? df.groups : df.switches_per_group) + " makes " +
                 count_text(size.network_resources) + " network links (both directions of " + count_text(global) +
                 " global links, groups × (groups − 1) / 2 × global_links_per_pair, and " + count_text(local) +
                 " local ones, groups × switches_per_group × (switches_per_group − 1) / 2)" + limit);
    }
    r.fail("fat_tree.up", "and \"down\" make a tree of " + count_text(size.network_resources / 2) + " links, " +
                              count_text(size.network_resources) + " in both directions" + limit);
  }
  const double total = size.resources(static_cast<double>(net.nodes));
  if (total > kMaxSimGridLinks)
    r.fail("nodes", "= " + std::to_string(net.nodes) + " nodes of " + count_text(size.node_resources) +
                        " link directions each and " + count_text(size.network_resources) +
                        " in the network make the whole machine " + count_text(total) + " SimGrid links" + limit);
}

NetworkSpec read_network(JsonReader r, const NodeSpec& node) {
  NetworkSpec net;
  const std::string kind = r.choice("topology", {"none", "dragonfly", "fat_tree"});
  net.kind = kind == "dragonfly"  ? NetworkKind::dragonfly
             : kind == "fat_tree" ? NetworkKind::fat_tree
                                  : NetworkKind::none;
  net.nodes = r.integer("nodes", std::nullopt, 1, int64_t{1} << 20);
  net.link_latency = r.number("link_latency_us", 0.0, 0, 1e6) * kUs;
  net.switch_latency = r.number("switch_latency_us", 0.0, 0, 1e6) * kUs;
  net.note = annotations(r);
  if (net.kind == NetworkKind::none && net.nodes > 1)
    r.fail("topology", "= \"none\" describes a single node, but network.nodes = " + std::to_string(net.nodes));
  if (net.kind != NetworkKind::none && node.nics.empty())
    r.fail("topology", "a network needs NICs: node.nics is empty");
  if (net.kind == NetworkKind::dragonfly) {
    JsonReader d = r.object("dragonfly");
    auto& df = net.dragonfly;
    df.groups = d.integer("groups", std::nullopt, 1, 1 << 16);
    df.switches_per_group = d.integer("switches_per_group", std::nullopt, 1, 1 << 12);
    df.nics_per_switch = d.integer("nics_per_switch", std::nullopt, 1, 1 << 12);
    df.global_links_per_pair = d.integer("global_links_per_pair", 1, 1, 1 << 10);
    df.local_bandwidth = d.number("local_GBps", std::nullopt, 1e-6, 1e6) * kGB;
    df.global_bandwidth = d.number("global_GBps", std::nullopt, 1e-6, 1e6) * kGB;
    df.adaptive = d.choice("routing", {"minimal", "adaptive"}, "minimal") == "adaptive";
    if (d.has("adaptive_share") && !df.adaptive) d.fail("adaptive_share", "applies only to \"routing\": \"adaptive\"");
    df.adaptive_share = d.number("adaptive_share", 0.5, 1e-3, 1.0);
    annotations(d);
    d.finish();
    const int64_t nics = static_cast<int64_t>(node.nics.size());
    if ((df.switches_per_group * df.nics_per_switch) % nics != 0 || df.switches_per_group % nics != 0)
      d.fail("switches_per_group", "= " + std::to_string(df.switches_per_group) + " is not a multiple of the " +
                                       std::to_string(nics) + " NICs per node");
    const int64_t capacity = df.groups * (df.switches_per_group * df.nics_per_switch / nics);
    if (capacity < net.nodes)
      r.fail("nodes", "= " + std::to_string(net.nodes) + " exceeds the dragonfly's " + std::to_string(capacity) +
                          " node slots (groups × switches_per_group × nics_per_switch / NICs per node)");
  } else if (r.has("dragonfly")) {
    r.fail("dragonfly", "applies only to topology \"dragonfly\"");
  }
  if (net.kind == NetworkKind::fat_tree) {
    JsonReader f = r.object("fat_tree");
    auto& ft = net.fat_tree;
    ft.down = f.integer_list("down", 1, 1 << 12);
    ft.up = f.integer_list("up", 1, 1 << 12);
    if (ft.down.empty() || ft.down.size() != ft.up.size())
      f.fail("up", "must have one entry per level, as many as \"down\" (at least one)");
    ft.link_bandwidth = f.number("link_GBps", std::nullopt, 1e-6, 1e6) * kGB;
    ft.rail_optimized = f.boolean("rail_optimized", false);
    annotations(f);
    f.finish();
    // The tree's leaves are NIC ports: every NIC of every node takes one.
    double capacity = 1;
    for (int64_t d : ft.down) capacity *= static_cast<double>(d);
    const double ports = static_cast<double>(net.nodes) * static_cast<double>(node.nics.size());
    if (capacity < ports)
      r.fail("nodes", "= " + std::to_string(net.nodes) + " nodes with " + std::to_string(node.nics.size()) +
                          " NICs each exceed the fat tree's " + std::to_string(static_cast<int64_t>(capacity)) +
                          " NIC ports (product of \"down\")");
  } else if (r.has("fat_tree")) {
    r.fail("fat_tree", "applies only to topology \"fat_tree\"");
  }
  r.finish();
  check_platform_size(r, node, net);
  return net;
}

ProfileSpec read_profile(JsonReader r, const DeviceSpec& device) {
  ProfileSpec p;
  p.library = r.choice("library", communication_libraries());
  p.launch_overhead = r.number("launch_overhead_us", 0.0, 0, 1e6) * kUs;
  p.collective_step = r.number("collective_step_us", 0.0, 0, 1e6) * kUs;
  if (r.has("nccl")) {
    JsonReader n = r.object("nccl");
    ProfileSpec::NcclSpec spec;
    spec.tuning = n.choice("tuning", {"2.15", "2.22", "2.23", "2.27"});
    spec.compute_capability = static_cast<int>(n.integer("compute_capability", std::nullopt, 60, 100));
    spec.cpu = n.choice("cpu", {"intel", "amd", "arm", "power"});
    spec.ll128 = n.boolean("ll128", true);
    // NVLS needs NVSwitch multicast (NVIDIA/nccl v2.27.7-1 src/transport/nvls.cc ncclNvlsInit:
    // CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, more than two GPUs); CollNet a CollNet plugin and
    // NCCL_COLLNET_ENABLE=1 (src/init.cc, off by default). Neither is priced here.
    spec.nvls = n.boolean("nvls", false);
    spec.collnet = n.boolean("collnet", false);
    if (spec.nvls) n.fail("nvls", "is true, but NCCL's NVLS algorithms (NVLink SHARP) have no cost model here");
    if (spec.collnet)
      n.fail("collnet", "is true, but NCCL's CollNet algorithms (SHARP switches) have no cost model here");
    annotations(n);
    n.finish();
    p.nccl = spec;
  }
  if (r.has("device_links")) {
    JsonReader d = r.object("device_links");
    p.device_link_efficiency = d.number("efficiency", std::nullopt, 1e-3, 1.0);
    annotations(d);
    d.finish();
  }
  if (r.has("compute_while_communicating")) {
    JsonReader c = r.object("compute_while_communicating");
    p.compute_slowdown_communicating = c.number("slowdown", std::nullopt, 0, kMaxComputeSlowdown);
    annotations(c);
    c.finish();
  }
  JsonReader g = r.object("gemm");
  for (const auto& dtype : kDtypes) {
    if (!g.has(dtype)) continue;
    if (!device.peak_flops.count(dtype)) g.fail(dtype, "has no node.device.peak_tflops." + dtype);
    JsonReader m = g.object(dtype);
    GemmModel model;
    // The default ceiling is the best measured GEMM rate, where one is published.
    double fallback = 1.0;
    if (device.empirical_flops.count(dtype))
      fallback = device.empirical_flops.at(dtype) / device.peak_flops.at(dtype);
    else if (!device.empirical_flops.empty())
      fallback = device.empirical_flops.begin()->second / device.peak_flops.at(device.empirical_flops.begin()->first);
    if (m.has("half_gflop"))
      m.fail("half_gflop",
             "the size curve is replaced by the GEMM shape model: give tile_overhead_k and "
             "operand_reuse instead (topology/README.md)");
    model.max_efficiency = m.number("max_efficiency", fallback, 1e-6, 1.0);
    model.tile_overhead_k = m.number("tile_overhead_k", 0.0, 0, 1e6);
    model.operand_reuse = m.number("operand_reuse", 0.0, 0, 1e6);
    model.fixed_seconds = m.number("fixed_us", 0.0, 0, 1e6) * kUs;
    model.packing_bandwidth = m.number("packing_GBps", 0.0, 0, 1e9) * 1e9;
    annotations(m);
    m.finish();
    p.gemm[dtype] = model;
  }
  annotations(g);
  g.finish();
  // Dtypes without a model get the measured ceiling of their own dtype, else of the first measured
  // one (GEMM libraries reach similar fractions of peak across 16-bit types), else 1, and the tiles'
  // overheads of the first dtype modelled (one library, one kernel design).
  double measured = 1.0;
  for (const auto& [dtype, rate] : device.empirical_flops) {
    measured = rate / device.peak_flops.at(dtype);
    break;
  }
  const GemmModel first = p.gemm.empty() ? GemmModel{} : p.gemm.begin()->second;
  for (const auto& [dtype, peak] : device.peak_flops)
    if (!p.gemm.count(dtype))
      p.gemm[dtype] = {device.empirical_flops.count(dtype) ? device.empirical_flops.at(dtype) / peak : measured,
                       first.tile_overhead_k, first.operand_reuse, first.fixed_seconds, first.packing_bandwidth};
  annotations(r);
  r.finish();
  return p;
}

}  // namespace

const char* to_string(NetworkKind k) {
  switch (k) {
    case NetworkKind::none:
      return "none";
    case NetworkKind::dragonfly:
      return "dragonfly";
    case NetworkKind::fat_tree:
      return "fat_tree";
  }
  return "?";
}

int Machine::nic_of(int64_t local) const {
  for (size_t k = 0; k < node.nics.size(); ++k)
    for (int d : node.nics[k].serves)
      if (d == local) return static_cast<int>(k);
  return -1;
}

int64_t Machine::nodes_per_group() const {
  return network.dragonfly.switches_per_group * network.dragonfly.nics_per_switch / nics_per_node();
}

GemmDevice gemm_device(const DeviceSpec& device, double peak_flops, double memory_bandwidth, double bytes_per_element) {
  GemmDevice d;
  d.peak_flops = peak_flops;
  d.compute_units = device.compute_units;
  d.memory_bandwidth = memory_bandwidth;
  d.bytes_per_element = bytes_per_element;
  d.tiles = device.gemm_tiles;
  d.cache_bytes = device.gemm_cache;
  d.block_k = device.gemm_block_k;
  d.block_n = device.gemm_block_n;
  return d;
}

const std::vector<std::string>& rate_dtypes() {
  return kDtypes;
}

double dtype_bytes(const std::string& dtype) {
  return dtype == "fp32" || dtype == "tf32" ? 4 : dtype == "fp64" ? 8 : dtype == "fp8" ? 1 : 2;
}

Machine Machine::slice(int64_t nodes) const {
  if (nodes < 1 || nodes > network.nodes)
    throw MachineError(
        "--nodes", "= " + std::to_string(nodes) + " but " + name + " has " + std::to_string(network.nodes) + " nodes");
  Machine m = *this;
  m.network.nodes = nodes;
  return m;
}

Machine parse_machine(const nlohmann::json& doc, const std::string& source) {
  try {
    JsonReader top(doc, "", kFormatDoc);
    Machine m;
    m.source_file = source;
    m.name = top.string("name");
    if (m.name.empty()) top.fail("name", "must not be empty");
    m.description = top.string("description", "");
    if (top.has("sources")) m.sources = top.string_list("sources");
    m.node = read_node(top.object("node"));
    m.network = read_network(top.object("network"), m.node);
    m.profile = read_profile(top.object("profile"), m.node.device);
    top.finish();
    return m;
  } catch (const InputError& e) {
    throw MachineError(source.empty() ? e.path() : source + ": " + e.path(), e.message());
  }
}

Machine parse_machine_text(const std::string& text, const std::string& source) {
  return parse_machine(parse_json<MachineError>(text, source), source);
}

Machine load_machine_file(const std::string& path) {
  return parse_machine_text(read_text_file<MachineError>(path), path);
}

}  // namespace paratwin::topology
