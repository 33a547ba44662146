#include "topology/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>
#include <map>
#include <stdexcept>

namespace paratwin::topology {

namespace {

using NodeGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                          boost::property<boost::edge_weight_t, double, boost::property<boost::edge_index_t, int>>>;

uint64_t mix(uint64_t x) {  // splitmix64: a fixed, well-spread hash
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Index of the unordered pair (i < j) among n items.
int64_t pair_index(int64_t i, int64_t j, int64_t n) {
  return i * (2 * n - i - 1) / 2 + (j - i - 1);
}

}  // namespace

Topology::Topology(Machine machine, TopologyOptions options) : machine_(std::move(machine)), options_(options) {
  build_node_routes();
  build_network();
}

void Topology::build_node_routes() {
  const NodeSpec& n = machine_.node;
  for (int64_t i = 0; i < n.device.count; ++i) endpoint_names_.push_back("gpu" + std::to_string(i));
  for (const auto& nic : n.nics) endpoint_names_.push_back(nic.name);
  for (const auto& r : n.routers) endpoint_names_.push_back(r);
  std::map<std::string, int> index;
  for (size_t i = 0; i < endpoint_names_.size(); ++i) index[endpoint_names_[i]] = static_cast<int>(i);

  // Fewest hops first, then the widest links: each hop costs 1 plus a small penalty for narrow links.
  double widest = 0;
  for (const auto& l : n.links) widest = std::max(widest, l.bandwidth);
  NodeGraph g(endpoint_names_.size());
  for (size_t k = 0; k < n.links.size(); ++k) {
    const auto& l = n.links[k];
    boost::add_edge(index[l.a], index[l.b], {1.0 + 1e-3 * widest / l.bandwidth, static_cast<int>(k)}, g);
  }
  // Routes start and end at devices and NICs only (the first endpoints): routers are passed through.
  const size_t E = endpoint_names_.size(), ends = static_cast<size_t>(n.device.count) + n.nics.size();
  node_routes_.assign(ends, std::vector<NodeRoute>(ends));
  const auto link_of = boost::get(boost::edge_index, g);
  for (size_t src = 0; src < ends; ++src) {
    std::vector<size_t> pred(E);
    std::vector<double> dist(E);
    boost::dijkstra_shortest_paths(g, src, boost::predecessor_map(pred.data()).distance_map(dist.data()));
    for (size_t dst = 0; dst < ends; ++dst) {
      if (dst == src || pred[dst] == dst) continue;  // itself, or unreachable
      NodeRoute& r = node_routes_[src][dst];
      for (size_t v = dst; v != src; v = pred[v]) {
        const size_t u = pred[v];
        const int k = link_of[boost::edge(u, v, g).first];
        r.links.emplace_back(k, n.links[static_cast<size_t>(k)].a == endpoint_names_[u]);
        r.latency += n.links[static_cast<size_t>(k)].latency;
      }
      std::reverse(r.links.begin(), r.links.end());
    }
  }
  const int64_t nodes = machine_.network.nodes;
  resources_.reserve(static_cast<size_t>(nodes) * (n.links.size() + n.nics.size()) * 2);
  // Links between devices and their switches carry the library's achievable rate; host (cpu) and NIC
  // attachments their own.
  auto is_host_or_nic = [&](const std::string& endpoint) {
    if (endpoint.rfind("cpu", 0) == 0) return true;
    return std::any_of(n.nics.begin(), n.nics.end(), [&](const NicSpec& nic) { return nic.name == endpoint; });
  };
  std::vector<double> link_bandwidth;
  for (const auto& l : n.links) {
    const bool device_link = !is_host_or_nic(l.a) && !is_host_or_nic(l.b);
    link_bandwidth.push_back(l.bandwidth * (device_link ? machine_.profile.device_link_efficiency : 1.0));
  }
  for (int64_t node = 0; node < nodes; ++node)
    for (size_t k = 0; k < n.links.size(); ++k) {
      resources_.push_back({link_bandwidth[k], n.links[k].latency});
      resources_.push_back({link_bandwidth[k], n.links[k].latency});
    }
  injection_base_ = static_cast<uint32_t>(resources_.size());
  for (int64_t node = 0; node < nodes; ++node)
    for (const auto& nic : n.nics) {
      resources_.push_back({nic.bandwidth, machine_.network.link_latency});
      resources_.push_back({nic.bandwidth, machine_.network.link_latency});
    }
}

double Topology::global_share() const {
  const auto& df = machine_.network.dragonfly;
  const int64_t nodes_per_group = machine_.nodes_per_group();
  // A detour through a third group costs that group's links a second global hop. Where the job
  // fills the machine those links carry its own traffic too and adaptive_share of a group's global
  // bandwidth is left; where it holds g of the G groups, the detours through the G − g groups it does
  // not use take nothing from it, and with detours spread evenly a group's egress carries its own
  // traffic plus (g − 2)/(G − 2) of it in transit: 1/(1 + (g − 2)/(G − 2)) of the links for its own.
  const int64_t g = (machine_.network.nodes + nodes_per_group - 1) / std::max<int64_t>(nodes_per_group, 1);
  if (df.groups <= 2 || g <= 2) return 1.0;
  const double transit = static_cast<double>(g - 2) / static_cast<double>(df.groups - 2);
  return std::max(df.adaptive_share, 1.0 / (1.0 + transit * (1.0 / df.adaptive_share - 1.0)));
}

void Topology::build_network() {
  const NetworkSpec& net = machine_.network;
  network_base_ = static_cast<uint32_t>(resources_.size());
  if (net.kind == NetworkKind::dragonfly) {
    const auto& df = net.dragonfly;
    S_ = df.switches_per_group;
    G_ = df.groups;
    L_ = df.global_links_per_pair;
    local_base_ = static_cast<uint32_t>(resources_.size());
    const int64_t local = G_ * S_ * (S_ - 1) / 2;
    resources_.insert(resources_.end(), static_cast<size_t>(2 * local), {df.local_bandwidth, net.link_latency});
    global_base_ = static_cast<uint32_t>(resources_.size());
    const int64_t global = G_ * (G_ - 1) / 2 * L_;
    resources_.insert(resources_.end(), static_cast<size_t>(2 * global), {df.global_bandwidth, net.link_latency});
    group_base_ = static_cast<uint32_t>(resources_.size());
    if (df.adaptive) {
      // A route's latency stays the sum of its resources' and its switches': a group's egress stands for
      // a local and the global cable, its ingress for the local cable after it; a switch's egress for
      // one local cable.
      const double global = static_cast<double>(G_ - 1) * static_cast<double>(L_) * df.global_bandwidth;
      const double share = global_share();
      for (int64_t g = 0; g < G_; ++g) {
        resources_.push_back({global * share, 2 * net.link_latency});
        resources_.push_back({global * share, net.link_latency});
      }
      switch_base_ = static_cast<uint32_t>(resources_.size());
      const double local = static_cast<double>(S_ - 1) * df.local_bandwidth * df.adaptive_share;
      for (int64_t k = 0; k < G_ * S_; ++k) {
        resources_.push_back({local, net.link_latency});
        resources_.push_back({local, 0.0});
      }
    }
  } else if (net.kind == NetworkKind::fat_tree) {
    const auto& ft = net.fat_tree;
    const size_t h = ft.down.size();
    // Elements at level i: Π_{j>i} down[j-1] · Π_{j<=i} up[j-1].
    ft_elements_.assign(h + 1, 1);
    for (size_t i = 0; i <= h; ++i) {
      for (size_t j = i + 1; j <= h; ++j) ft_elements_[i] *= ft.down[j - 1];
      for (size_t j = 1; j <= i; ++j) ft_elements_[i] *= ft.up[j - 1];
    }
    for (size_t i = 0; i < h; ++i) {
      ft_up_base_.push_back(static_cast<uint32_t>(resources_.size()));
      const int64_t links = ft_elements_[i] * ft.up[i];
      resources_.insert(resources_.end(), static_cast<size_t>(2 * links), {ft.link_bandwidth, net.link_latency});
    }
  }
}

ResourceKind Topology::kind(uint32_t id) const {
  if (id < injection_base_) return ResourceKind::node_link;
  if (id < network_base_) return ResourceKind::injection;
  return ResourceKind::network;
}

int64_t Topology::node_of(uint32_t id) const {
  if (id < injection_base_) return static_cast<int64_t>(id / 2 / machine_.node.links.size());
  if (id < network_base_) return static_cast<int64_t>((id - injection_base_) / 2 / machine_.node.nics.size());
  if (is_port_link(id)) return port_node(port_of(id)).first;
  return -1;
}

uint32_t Topology::on_node(uint32_t id, int64_t node) const {
  if (id < injection_base_) {
    const size_t links = machine_.node.links.size();
    return static_cast<uint32_t>((static_cast<size_t>(node) * links + id / 2 % links) * 2 + id % 2);
  }
  if (id < network_base_) {
    const size_t nics = machine_.node.nics.size(), k = id - injection_base_;
    return injection_base_ + static_cast<uint32_t>((static_cast<size_t>(node) * nics + k / 2 % nics) * 2 + k % 2);
  }
  if (is_port_link(id)) {
    const int64_t port = port_at(node, port_node(port_of(id)).second);
    return ft_up_base_[0] + static_cast<uint32_t>(port * 2 + id % 2);
  }
  return id;
}

// A fat tree's level-0 links join one end port, one NIC of one node, to its leaf switch: only that
// NIC's traffic crosses them, so they belong to its node as its NIC links do. Not where a port has
// several leaf switches (Summit's dual-rail NIC): which one a transfer takes depends on its destination.
bool Topology::is_port_link(uint32_t id) const {
  if (ft_up_base_.empty() || id < ft_up_base_[0] || machine_.network.fat_tree.up[0] != 1) return false;
  return ft_up_base_.size() > 1 ? id < ft_up_base_[1] : id < resources_.size();
}

int64_t Topology::port_of(uint32_t id) const {
  return (id - ft_up_base_[0]) / 2;
}

// Rail-optimized, rail k holds ports k·R to (k+1)·R − 1, R the tree's ports / P: fixed by the tree, so a
// slice routes as the whole machine. Otherwise a node's P ports are consecutive.
std::pair<int64_t, int> Topology::port_node(int64_t port) const {
  const int64_t P = machine_.nics_per_node();
  if (!machine_.network.fat_tree.rail_optimized) return {port / P, static_cast<int>(port % P)};
  const int64_t rail = ft_elements_[0] / P;
  return {port % rail, static_cast<int>(port / rail)};
}

int64_t Topology::port_at(int64_t node, int nic) const {
  const int64_t P = machine_.nics_per_node();
  return machine_.network.fat_tree.rail_optimized ? nic * (ft_elements_[0] / P) + node : node * P + nic;
}

std::string Topology::resource_name(uint32_t id) const {
  const NodeSpec& n = machine_.node;
  const char* dir = id % 2 == 0 ? ">" : "<";
  if (id < injection_base_) {
    const uint32_t k = id / 2;
    const auto& l = n.links[k % n.links.size()];
    return "n" + std::to_string(k / n.links.size()) + ":" + l.a + dir + l.b;
  }
  if (id < network_base_) {
    const uint32_t k = (id - injection_base_) / 2;
    return "n" + std::to_string(k / n.nics.size()) + ":" + n.nics[k % n.nics.size()].name +
           (id % 2 == 0 ? ":up" : ":down");
  }
  if (machine_.network.kind == NetworkKind::dragonfly) {
    if (switch_base_ > 0 && id >= switch_base_)
      return "switch" + std::to_string((id - switch_base_) / 2) + (id % 2 == 0 ? ":local-out" : ":local-in");
    if (id >= group_base_)
      return "group" + std::to_string((id - group_base_) / 2) + (id % 2 == 0 ? ":global-out" : ":global-in");
    return id < global_base_ ? "local" + std::to_string((id - local_base_) / 2) + dir
                             : "global" + std::to_string((id - global_base_) / 2) + dir;
  }
  return "tree" + std::to_string((id - network_base_) / 2) + (id % 2 == 0 ? ":up" : ":down");
}

uint32_t Topology::node_link(int64_t node, int link, bool forward) const {
  const size_t links = machine_.node.links.size();
  return static_cast<uint32_t>((static_cast<size_t>(node) * links + static_cast<size_t>(link)) * 2 + (forward ? 0 : 1));
}

uint32_t Topology::injection(int64_t node, int nic, bool up) const {
  const size_t nics = machine_.node.nics.size();
  return injection_base_ +
         static_cast<uint32_t>((static_cast<size_t>(node) * nics + static_cast<size_t>(nic)) * 2 + (up ? 0 : 1));
}

void Topology::node_path(int64_t node, int from, int to, Route& out) const {
  const NodeRoute& r = node_routes_[static_cast<size_t>(from)][static_cast<size_t>(to)];
  for (const auto& [link, forward] : r.links) out.resources.push_back(node_link(node, link, forward));
  out.latency += r.latency;
}

int64_t Topology::switch_of(int64_t node, int nic) const {
  const auto& df = machine_.network.dragonfly;
  const int64_t per_group = machine_.nodes_per_group();
  const int64_t group = node / per_group, j = node % per_group;
  return group * S_ + (j / df.nics_per_switch) * machine_.nics_per_node() + nic;
}

void Topology::dragonfly_path(int64_t node_a, int nic_a, int64_t node_b, int nic_b, Route& out) const {
  const double hop = machine_.network.switch_latency + machine_.network.link_latency;
  const int64_t a = switch_of(node_a, nic_a), b = switch_of(node_b, nic_b);
  auto local = [&](int64_t from, int64_t to) {  // both in one group
    const int64_t g = from / S_, s = from % S_, t = to % S_;
    const int64_t k = pair_index(std::min(s, t), std::max(s, t), S_);
    out.resources.push_back(local_base_ + static_cast<uint32_t>((g * S_ * (S_ - 1) / 2 + k) * 2 + (s < t ? 0 : 1)));
    out.latency += hop;
    ++out.switches;
  };
  out.latency += machine_.network.switch_latency;  // the first switch
  ++out.switches;
  if (a == b) return;
  const int64_t ga = a / S_, gb = b / S_;
  if (ga == gb && machine_.network.dragonfly.adaptive) {  // one hop on the switches' local aggregates
    out.resources.push_back(switch_base_ + static_cast<uint32_t>(a * 2));
    out.resources.push_back(switch_base_ + static_cast<uint32_t>(b * 2 + 1));
    out.latency += hop;
    ++out.switches;
    return;
  }
  if (ga == gb) {
    local(a, b);
    return;
  }
  if (machine_.network.dragonfly.adaptive) {  // local hop, global hop, local hop on the group aggregates
    out.resources.push_back(group_base_ + static_cast<uint32_t>(ga * 2));
    out.resources.push_back(group_base_ + static_cast<uint32_t>(gb * 2 + 1));
    out.latency += 3 * hop;
    out.switches += 3;
    ++out.global_hops;
    return;
  }
  // Minimal routing over one of the L global links of the group pair, chosen per node pair.
  const int64_t k = static_cast<int64_t>(
      mix(static_cast<uint64_t>(node_a) * 0x100000001ULL + static_cast<uint64_t>(node_b)) % static_cast<uint64_t>(L_));
  auto holder = [&](int64_t g, int64_t other) {  // the switch of group g that holds link k to `other`
    const int64_t idx = (other < g ? other : other - 1) * L_ + k;
    return g * S_ + idx % S_;
  };
  const int64_t xa = holder(ga, gb), xb = holder(gb, ga);
  if (a != xa) local(a, xa);
  const int64_t lo = std::min(ga, gb), hi = std::max(ga, gb);
  const int64_t link = pair_index(lo, hi, G_) * L_ + k;
  out.resources.push_back(global_base_ + static_cast<uint32_t>(link * 2 + (ga < gb ? 0 : 1)));
  out.latency += hop;
  ++out.switches;
  ++out.global_hops;
  if (xb != b) local(xb, b);
}

// XGFT routing: up to the lowest common level choosing each parent from the destination (D-mod-K),
// then down along the destination's digits.
void Topology::fat_tree_path(int64_t x, int64_t y, Route& out) const {
  const auto& ft = machine_.network.fat_tree;
  const size_t h = ft.down.size();
  const double hop = machine_.network.switch_latency + machine_.network.link_latency;
  std::vector<int64_t> ax(h + 1), ay(h + 1);  // digits a_1..a_h of the two ports
  for (size_t j = 1, px = x, py = y; j <= h; ++j) {
    ax[j] = static_cast<int64_t>(px) % ft.down[j - 1];
    ay[j] = static_cast<int64_t>(py) % ft.down[j - 1];
    px /= static_cast<size_t>(ft.down[j - 1]);
    py /= static_cast<size_t>(ft.down[j - 1]);
  }
  size_t top = 0;
  for (size_t j = 1; j <= h; ++j)
    if (ax[j] != ay[j]) top = j;
  // The element index at level i from digits b_1..b_i (radices up) then a_{i+1}..a_h (radices down).
  std::vector<int64_t> b(h + 1, 0);
  auto element = [&](size_t i, const std::vector<int64_t>& a) {
    int64_t e = 0, scale = 1;
    for (size_t j = 1; j <= i; ++j) {
      e += b[j] * scale;
      scale *= ft.up[j - 1];
    }
    for (size_t j = i + 1; j <= h; ++j) {
      e += a[j] * scale;
      scale *= ft.down[j - 1];
    }
    return e;
  };
  auto link = [&](size_t level, int64_t elem, int64_t port, bool up) {
    return ft_up_base_[level] + static_cast<uint32_t>((elem * ft.up[level] + port) * 2 + (up ? 0 : 1));
  };
  int64_t w = 1;
  for (size_t i = 0; i < top; ++i) {
    const int64_t port = (y / w) % ft.up[i];
    w *= ft.up[i];
    out.resources.push_back(link(i, element(i, ax), port, true));
    b[i + 1] = port;
    out.latency += hop;
    ++out.switches;
  }
  for (size_t i = top; i-- > 0;) {
    const int64_t port = b[i + 1];
    out.resources.push_back(link(i, element(i, ay), port, false));
    out.latency += hop;
    if (i > 0) ++out.switches;
  }
  out.latency -= machine_.network.switch_latency;  // the last hop enters the NIC, not a switch
}

void Topology::network_path(int64_t node_a, int nic_a, int64_t node_b, int nic_b, Route& out) const {
  out.resources.push_back(injection(node_a, nic_a, true));
  out.latency += machine_.network.link_latency;
  if (machine_.network.kind == NetworkKind::dragonfly) {
    dragonfly_path(node_a, nic_a, node_b, nic_b, out);
    out.latency += machine_.network.link_latency;
  } else {
    fat_tree_path(port_at(node_a, nic_a), port_at(node_b, nic_b), out);
    out.latency += machine_.network.link_latency;
  }
  out.resources.push_back(injection(node_b, nic_b, false));
}

void Topology::route(int64_t from, int64_t to, Route& out) const {
  if (from < 0 || to < 0 || from >= devices() || to >= devices())
    throw std::out_of_range("device " + std::to_string(from < 0 || from >= devices() ? from : to) +
                            " is not one of the " + std::to_string(devices()) + " devices of " + machine_.name);
  out.resources.clear();
  out.latency = 0;
  out.switches = out.global_hops = 0;
  const int64_t per_node = machine_.devices_per_node();
  const int64_t na = from / per_node, nb = to / per_node;
  const int da = static_cast<int>(from % per_node), db = static_cast<int>(to % per_node);
  if (na == nb) {
    if (da != db) node_path(na, da, db, out);
    return;
  }
  // The receiver's rail only where the network has rails (TopologyOptions::rail_matched_nics).
  const bool rail_matched = options_.rail_matched_nics && machine_.network.kind == NetworkKind::fat_tree &&
                            machine_.network.fat_tree.rail_optimized;
  const int nic_a = options_.one_nic_per_node ? 0 : machine_.nic_of(rail_matched ? db : da);
  const int nic_b = options_.one_nic_per_node ? 0 : machine_.nic_of(db);
  const int nic_endpoint_a = static_cast<int>(per_node) + nic_a, nic_endpoint_b = static_cast<int>(per_node) + nic_b;
  node_path(na, da, nic_endpoint_a, out);
  network_path(na, nic_a, nb, nic_b, out);
  node_path(nb, nic_endpoint_b, db, out);
}

Route Topology::route(int64_t from, int64_t to) const {
  Route r;
  route(from, to, r);
  return r;
}

PathInfo Topology::path(int64_t from, int64_t to) const {
  const Route r = route(from, to);
  PathInfo p;
  p.bandwidth = std::numeric_limits<double>::infinity();
  for (uint32_t id : r.resources) p.bandwidth = std::min(p.bandwidth, resources_[id].bandwidth);
  p.latency = r.latency;
  p.links = static_cast<int>(r.resources.size());
  p.switches = r.switches;
  p.global_hops = r.global_hops;
  return p;
}

RingLoad Topology::rings(const std::vector<std::vector<int64_t>>& rings) const {
  // One pass routes every ring step and counts flows per resource; the bottleneck and the NIC sharing
  // then come from the resources used.
  // Flows per resource, zero outside this call: a machine has up to millions of resources and a set
  // of rings uses a few, and searches call this for every ring order they try, so only the entries
  // used are cleared (on the way out, whatever happens).
  thread_local std::vector<uint32_t> load;
  if (load.size() < resources_.size()) load.resize(resources_.size(), 0);
  std::vector<uint32_t> used;
  struct Clear {
    std::vector<uint32_t>& load;
    const std::vector<uint32_t>& used;
    ~Clear() {
      for (uint32_t id : used) load[id] = 0;
    }
  } clear{load, used};
  Route r;
  for (const auto& ring : rings)
    for (size_t i = 0; ring.size() > 1 && i < ring.size(); ++i) {
      route(ring[i], ring[(i + 1) % ring.size()], r);
      for (uint32_t id : r.resources)
        if (load[id]++ == 0) used.push_back(id);
    }
  RingLoad out;
  out.bandwidth = std::numeric_limits<double>::infinity();
  for (uint32_t id : used) {
    out.bandwidth = std::min(out.bandwidth, resources_[id].bandwidth / load[id]);
    if (kind(id) == ResourceKind::injection) {
      out.crosses_nodes = true;
      out.max_flows_per_nic = std::max(out.max_flows_per_nic, static_cast<int>(load[id]));
    }
  }
  return out;
}

}  // namespace paratwin::topology
