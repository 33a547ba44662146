// Routes through the built-in machines without SimGrid: minimal dragonfly routes on the whole of
// Frontier (at most one global hop and four switches, spread over every global link of a group
// pair), up-and-down fat-tree routes on Summit and Selene, route latencies, and the ring loads of
// Topology::rings (the generalisation of [singh2025dissertation] eq. 5.7: rings that cross nodes at once share NICs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace paratwin::topology {
namespace {

constexpr double kGBps = 1e9;

// Full Frontier with minimal routing is used by several tests: build its Topology once.
Machine minimal_routing(Machine m) {
  m.network.dragonfly.adaptive = false;
  return m;
}
const Topology& frontier() {
  static const Topology t(minimal_routing(resolve_machine("frontier")));
  return t;
}

int64_t device(const Topology& t, int64_t node, int64_t local) {
  return node * t.machine().devices_per_node() + local;
}

std::vector<uint32_t> of_kind(const Topology& t, const Route& r, ResourceKind k) {
  std::vector<uint32_t> out;
  for (uint32_t id : r.resources)
    if (t.kind(id) == k) out.push_back(id);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// A route's latency is its cables plus its switches: every resource's own latency (intra-node
// links, the two NIC links, switch-to-switch links) and switch_latency per switch traversed.
double expected_latency(const Topology& t, const Route& r) {
  double sum = 0;
  for (uint32_t id : r.resources) sum += t.resource(id).latency;
  return sum + r.switches * t.machine().network.switch_latency;
}

// -------------------------------------------------------------------------------------------------
// Dragonfly: full Frontier (74 groups of 128 nodes, 32 switches, 4 global links per group pair).

TEST(TopologyRoutes, FrontierShape) {
  const Topology& t = frontier();
  const Machine& m = t.machine();
  EXPECT_EQ(t.devices(), 9408 * 8);
  EXPECT_EQ(m.nodes_per_group(), 128);
  EXPECT_EQ(m.network.dragonfly.groups * m.nodes_per_group(), 9472);  // 64 slots unused in the last group
  // A node's 4 NICs land on 4 different switches of its group; a switch takes 16 NICs.
  std::map<int64_t, int> nics_on;
  for (int64_t node = 0; node < m.network.nodes; ++node) {
    std::set<int64_t> mine;
    for (int k = 0; k < 4; ++k) {
      const int64_t s = t.switch_of(node, k);
      EXPECT_EQ(s / 32, node / 128) << "node " << node << " NIC " << k << " leaves its group";
      mine.insert(s);
      ++nics_on[s];
    }
    EXPECT_EQ(mine.size(), 4u) << "node " << node;
  }
  for (const auto& [s, n] : nics_on) EXPECT_LE(n, 16) << "switch " << s;
}

TEST(TopologyRoutes, FrontierSameSwitchSameGroupOtherGroup) {
  const Topology& t = frontier();
  // Nodes 0..15 of a group share their switches (16 NICs per switch, one per node and NIC index).
  for (int64_t group : {0, 1, 37, 73}) {
    const int64_t first = group * 128;
    for (int64_t j = 1; j < 16; ++j) {
      const PathInfo p = t.path(device(t, first, 0), device(t, first + j, 0));
      EXPECT_EQ(p.switches, 1) << "group " << group << " node " << j;
      EXPECT_EQ(p.global_hops, 0);
      EXPECT_DOUBLE_EQ(p.bandwidth, 25 * kGBps);
    }
  }
  // Same group, other switch: one local link.
  for (int64_t group : {0, 5, 72}) {
    const int64_t first = group * 128;
    for (int64_t j = 16; j < 128; j += 7) {
      const Route r = t.route(device(t, first, 0), device(t, first + j, 0));
      EXPECT_EQ(r.switches, 2) << "group " << group << " node " << j;
      EXPECT_EQ(r.global_hops, 0);
      const auto net = of_kind(t, r, ResourceKind::network);
      ASSERT_EQ(net.size(), 1u);
      EXPECT_TRUE(starts_with(t.resource_name(net[0]), "local")) << t.resource_name(net[0]);
    }
  }
}

// Deterministic node pairs across every ordered pair of the 74 groups: one global hop, at most four
// switches (source switch, the switch holding the global link, its peer, destination switch), the
// NIC's bandwidth, and a latency made of cables and switches.
TEST(TopologyRoutes, FrontierEveryGroupPairOneGlobalHop) {
  const Topology& t = frontier();
  const int64_t groups = 74, nodes = t.machine().network.nodes;
  int checked = 0;
  std::map<int, int> by_switches;
  Route r;
  for (int64_t ga = 0; ga < groups; ++ga)
    for (int64_t gb = 0; gb < groups; ++gb) {
      if (ga == gb) continue;
      const int64_t na = std::min(ga * 128 + (ga * 7 + gb * 3) % 128, nodes - 1);
      const int64_t nb = std::min(gb * 128 + (gb * 13 + ga * 5) % 128, nodes - 1);
      const int64_t da = (ga + gb) % 8, db = (ga * gb) % 8;
      t.route(device(t, na, da), device(t, nb, db), r);
      ASSERT_EQ(r.global_hops, 1) << "nodes " << na << " -> " << nb;
      ASSERT_GE(r.switches, 2);
      ASSERT_LE(r.switches, 4) << "nodes " << na << " -> " << nb;
      const auto net = of_kind(t, r, ResourceKind::network);
      ASSERT_EQ(static_cast<int>(net.size()), r.switches - 1);  // switch-to-switch links
      int globals = 0;
      for (uint32_t id : net) globals += starts_with(t.resource_name(id), "global") ? 1 : 0;
      ASSERT_EQ(globals, 1);
      ASSERT_EQ(of_kind(t, r, ResourceKind::injection).size(), 2u);  // out of node a, into node b
      ASSERT_NEAR(r.latency, expected_latency(t, r), 1e-12);
      ++by_switches[r.switches];
      ++checked;
    }
  EXPECT_EQ(checked, 74 * 73);
  EXPECT_GT(by_switches[4], 0);  // the common case: a local hop on both sides
  EXPECT_DOUBLE_EQ(t.path(0, t.devices() - 1).bandwidth, 25 * kGBps);
}

// Between two groups, the global link is chosen per node pair: over many node pairs all 4 global
// links of the pair carry traffic, roughly evenly (not one fixed router pair, as SimGrid 3.32's
// dragonfly zone does).
TEST(TopologyRoutes, FrontierGlobalLinksOfAGroupPairAreAllUsed) {
  const Topology& t = frontier();
  const int64_t L = t.machine().network.dragonfly.global_links_per_pair;
  ASSERT_EQ(L, 4);
  for (auto [ga, gb] : std::vector<std::pair<int64_t, int64_t>>{{0, 73}, {73, 0}, {5, 6}, {40, 12}}) {
    std::map<std::string, int> uses;
    std::set<std::string> directions;
    Route r;
    for (int64_t i = 0; i < 128; i += 3)
      for (int64_t j = 0; j < 128; j += 5) {
        const int64_t na = std::min(ga * 128 + i, t.machine().network.nodes - 1);
        const int64_t nb = std::min(gb * 128 + j, t.machine().network.nodes - 1);
        t.route(device(t, na, 0), device(t, nb, 0), r);
        for (uint32_t id : of_kind(t, r, ResourceKind::network)) {
          const std::string name = t.resource_name(id);
          if (starts_with(name, "global")) {
            ++uses[name.substr(0, name.size() - 1)];
            directions.insert(name.substr(name.size() - 1));
          }
        }
      }
    int total = 0;
    for (const auto& [name, n] : uses) total += n;
    EXPECT_EQ(static_cast<int64_t>(uses.size()), L) << "groups " << ga << " -> " << gb;
    EXPECT_EQ(directions.size(), 1u) << "one direction per ordered group pair";
    for (const auto& [name, n] : uses)
      EXPECT_GT(n, total / (3 * L)) << name << " carries " << n << " of " << total << " routes";
  }
}

// Every inter-node route leaves through the NIC serving the source device and enters through the NIC
// serving the destination device (GCDs 2k and 2k+1 use NIC k).
TEST(TopologyRoutes, FrontierRoutesUseTheDevicesNics) {
  const Topology& t = frontier();
  const Machine& m = t.machine();
  for (int64_t da = 0; da < 8; ++da)
    for (int64_t db = 0; db < 8; ++db) {
      const Route r = t.route(device(t, 3, da), device(t, 9000, db));
      const auto inj = of_kind(t, r, ResourceKind::injection);
      ASSERT_EQ(inj.size(), 2u);
      EXPECT_EQ(t.resource_name(inj[0]), "n3:nic" + std::to_string(m.nic_of(da)) + ":up");
      EXPECT_EQ(t.resource_name(inj[1]), "n9000:nic" + std::to_string(m.nic_of(db)) + ":down");
    }
}

// -------------------------------------------------------------------------------------------------
// Fat trees: up to the lowest common level and down. With leaves of down[0] NIC ports and pods of
// down[0]·down[1] ports, a route crosses 1 switch inside a leaf, 3 inside a pod and 5 across pods.
// NIC k of node n is port n·P + k, or k·N + n on a rail-optimised tree (machine.hpp).

int64_t port_of(const Machine& m, int64_t device) {
  const int64_t node = device / m.devices_per_node(), nic = m.nic_of(device % m.devices_per_node());
  return m.network.fat_tree.rail_optimized ? nic * m.network.nodes + node : node * m.nics_per_node() + nic;
}

struct TreeCheck {
  int same_leaf = 0, same_pod = 0, across = 0;
};

// Checks the route between two devices of different nodes against the tree's digits.
void check_tree_route(const Topology& t, int64_t from, int64_t to, TreeCheck& seen) {
  const Machine& m = t.machine();
  ASSERT_LT(from, t.devices());
  ASSERT_LT(to, t.devices());
  const auto& ft = m.network.fat_tree;
  ASSERT_EQ(ft.down.size(), 3u);
  const int64_t port_a = port_of(m, from), port_b = port_of(m, to);
  const int64_t leaf = ft.down[0], pod = ft.down[0] * ft.down[1];
  int top;  // the lowest common level
  if (port_a / leaf == port_b / leaf) {
    top = 1;
    ++seen.same_leaf;
  } else if (port_a / pod == port_b / pod) {
    top = 2;
    ++seen.same_pod;
  } else {
    top = 3;
    ++seen.across;
  }
  const Route r = t.route(from, to);
  SCOPED_TRACE("devices " + std::to_string(from) + " -> " + std::to_string(to) + " (ports " + std::to_string(port_a) +
               " -> " + std::to_string(port_b) + ")");
  EXPECT_EQ(r.switches, 2 * top - 1);
  EXPECT_EQ(r.global_hops, 0);
  const auto tree = of_kind(t, r, ResourceKind::network);
  ASSERT_EQ(static_cast<int>(tree.size()), 2 * top);
  for (int i = 0; i < 2 * top; ++i) {
    const std::string name = t.resource_name(tree[static_cast<size_t>(i)]);
    EXPECT_TRUE(name.ends_with(i < top ? ":up" : ":down")) << "tree link " << i << " is " << name;
    EXPECT_DOUBLE_EQ(t.resource(tree[static_cast<size_t>(i)]).bandwidth, ft.link_bandwidth);
  }
  // Up and down use opposite directions, separate resources: no resource appears twice.
  std::set<uint32_t> unique(r.resources.begin(), r.resources.end());
  EXPECT_EQ(unique.size(), r.resources.size());
}

TEST(TopologyRoutes, SummitFatTreeUpAndDown) {
  const Topology t(resolve_machine("summit"));
  const Machine& m = t.machine();
  ASSERT_EQ(m.nics_per_node(), 1);
  TreeCheck seen;
  // Named pairs: same leaf (18 nodes), same pod (288 nodes), across pods.
  check_tree_route(t, device(t, 0, 0), device(t, 17, 0), seen);
  check_tree_route(t, device(t, 0, 0), device(t, 18, 5), seen);
  check_tree_route(t, device(t, 0, 3), device(t, 287, 0), seen);
  check_tree_route(t, device(t, 0, 0), device(t, 288, 0), seen);
  check_tree_route(t, device(t, 0, 0), device(t, 4607, 5), seen);
  EXPECT_EQ(seen.same_leaf, 1);
  EXPECT_EQ(seen.same_pod, 2);
  EXPECT_EQ(seen.across, 2);
  // Sampled pairs over the whole machine.
  const int64_t nodes = m.network.nodes;
  for (int64_t i = 0; i < 1500; ++i) {
    const int64_t a = (i * 37) % nodes;
    int64_t b = (i % 3 == 0)   ? a / 18 * 18 + (a + 1 + i) % 18
                : (i % 3 == 1) ? a / 288 * 288 + (a + 19 * i) % 288
                               : (a * 7 + 1001 * i) % nodes;
    b %= nodes;
    if (b == a) b = (a + 1) % nodes;
    check_tree_route(t, device(t, a, i % 6), device(t, b, (i / 6) % 6), seen);
  }
  EXPECT_GT(seen.same_leaf, 300);
  EXPECT_GT(seen.same_pod, 300);
  EXPECT_GT(seen.across, 300);
}

// Summit's dual-rail NIC (up[0] = 2): D-mod-K picks the NIC's tree link from the destination, so
// flows from one node to nodes of different parity leave on different rails, flows to one node on
// one rail.
TEST(TopologyRoutes, SummitDualRailChosenByDestination) {
  const Topology t(resolve_machine("summit"));
  ASSERT_EQ(t.machine().network.fat_tree.up.at(0), 2);
  auto first_tree_link = [&](int64_t to_node, int64_t local) {
    const auto tree = of_kind(t, t.route(device(t, 0, local), device(t, to_node, 0)), ResourceKind::network);
    return tree.empty() ? UINT32_MAX : tree.front();
  };
  for (int64_t g = 1; g < 6; ++g) EXPECT_EQ(first_tree_link(1, g), first_tree_link(1, 0)) << "GPU " << g;
  EXPECT_NE(first_tree_link(1, 0), first_tree_link(2, 0));
  EXPECT_EQ(first_tree_link(1, 0), first_tree_link(3, 0));
  EXPECT_DOUBLE_EQ(t.path(0, 6).bandwidth, 12.5 * kGBps);
}

// Selene's tree is rail-optimised: NIC k of node n is port 560k + n, so a leaf holds NIC k of 20
// consecutive nodes and same-rail traffic inside a 20-node scalable unit crosses one switch.
TEST(TopologyRoutes, SeleneFatTreeUpAndDown) {
  const Topology t(resolve_machine("selene"));
  const Machine& m = t.machine();
  ASSERT_EQ(m.nics_per_node(), 8);
  ASSERT_TRUE(m.network.fat_tree.rail_optimized);
  TreeCheck seen;
  const int64_t leaf = m.network.fat_tree.down[0], pod = leaf * m.network.fat_tree.down[1];
  ASSERT_EQ(leaf, 20);
  ASSERT_EQ(pod, 160);
  EXPECT_EQ(port_of(m, device(t, 2, 3)), 3 * 560 + 2);
  check_tree_route(t, device(t, 0, 0), device(t, 19, 0), seen);   // rail 0, nodes 0 and 19: same leaf
  check_tree_route(t, device(t, 40, 5), device(t, 59, 5), seen);  // rail 5, one unit: same leaf
  check_tree_route(t, device(t, 0, 0), device(t, 20, 0), seen);   // rail 0, next unit: same pod
  check_tree_route(t, device(t, 0, 0), device(t, 159, 0), seen);  // rail 0, 8 units apart: same pod
  check_tree_route(t, device(t, 0, 0), device(t, 1, 1), seen);    // ports 0 and 561: across
  check_tree_route(t, device(t, 0, 0), device(t, 559, 7), seen);
  EXPECT_EQ(seen.same_leaf, 2);
  EXPECT_EQ(seen.same_pod, 2);
  EXPECT_EQ(seen.across, 2);
  const int64_t nodes = m.network.nodes;
  for (int64_t i = 0; i < 1500; ++i) {
    const int64_t a = (i * 31) % nodes;
    int64_t b = (i % 3 == 0)   ? a / 20 * 20 + (a + 1 + i) % 20
                : (i % 3 == 1) ? a / 160 * 160 + (a + 7 * i) % 160
                               : (a * 11 + 97 * i) % nodes;
    b %= nodes;
    if (b == a) b = (a + 1) % nodes;
    const int64_t da = i % 8, db = i % 3 == 2 ? (i / 8) % 8 : da;  // same rail but for the last third
    check_tree_route(t, device(t, a, da), device(t, b, db), seen);
  }
  EXPECT_GT(seen.same_leaf, 300);
  EXPECT_GT(seen.same_pod, 100);
  EXPECT_GT(seen.across, 300);
}

// A slice (--nodes N) is the first N nodes of the machine: a route between two of its devices is
// the route the whole machine takes (same switches, latency and bottleneck).
class TopologySlices : public testing::TestWithParam<const char*> {};

TEST_P(TopologySlices, SliceRoutesAreTheWholeMachinesRoutes) {
  const Machine whole = resolve_machine(GetParam());
  const Topology full(whole);
  std::vector<std::string> mismatches;
  for (int64_t nodes : {int64_t{2}, int64_t{3}, int64_t{24}, int64_t{200}}) {
    if (nodes > whole.network.nodes) continue;
    const Topology part(whole.slice(nodes));
    const int64_t per_node = whole.devices_per_node();
    for (int64_t a = 0; a < part.devices(); a += (a % per_node == per_node - 1) ? 1 + per_node * (nodes / 8) : 1)
      for (int64_t b : {int64_t{0}, per_node + 1, part.devices() - 1, part.devices() / 2}) {
        if (a == b || b >= part.devices()) continue;
        const PathInfo p = part.path(a, b), q = full.path(a, b);
        if (p.switches != q.switches || p.global_hops != q.global_hops || p.links != q.links ||
            std::abs(p.latency - q.latency) > 1e-12 || p.bandwidth != q.bandwidth)
          mismatches.push_back("--nodes " + std::to_string(nodes) + ": " + std::to_string(a) + " -> " +
                               std::to_string(b) + " crosses " + std::to_string(p.switches) + " switches (" +
                               std::to_string(q.switches) + " in the whole machine)");
      }
  }
  EXPECT_TRUE(mismatches.empty()) << mismatches.size() << " mismatches, first: " << mismatches.front();
}

INSTANTIATE_TEST_SUITE_P(Machines, TopologySlices,
                         testing::Values("frontier", "summit", "perlmutter", "selene", "alps"));

// -------------------------------------------------------------------------------------------------
// Latency (topology/README.md, "Latency of a route"): the sum of its links' latencies plus
// switch_latency_us per switch. The links include both NIC injection links ("link_latency_us: per
// network link, NIC injection links included").

TEST(TopologyRoutes, NodeAndDragonflyLatencyIsLinksPlusSwitches) {
  for (const char* name : {"frontier", "perlmutter", "alps", "summit", "selene", "localhost"}) {
    const Topology t(resolve_machine(name).slice(1));
    for (int64_t a = 0; a < t.devices(); ++a)
      for (int64_t b = 0; b < t.devices(); ++b) {
        const Route r = t.route(a, b);
        EXPECT_NEAR(r.latency, expected_latency(t, r), 1e-12) << name << " " << a << " -> " << b;
        EXPECT_EQ(r.switches, 0);
      }
  }
  const Topology& t = frontier();
  for (int64_t nb : {1, 16, 100, 200, 9407}) {
    const Route r = t.route(0, device(t, nb, 0));
    EXPECT_NEAR(r.latency, expected_latency(t, r), 1e-12) << "node 0 -> node " << nb;
    // Equivalently: s switches and s + 1 network links (NIC up, s − 1 between switches, NIC down).
    EXPECT_EQ(of_kind(t, r, ResourceKind::network).size() + 2, static_cast<size_t>(r.switches) + 1);
  }
}

TEST(TopologyRoutes, FatTreeLatencyIsLinksPlusSwitches) {
  for (const char* name : {"summit", "selene"}) {
    const Topology t(resolve_machine(name));
    const int64_t per_node = t.machine().devices_per_node();
    for (int64_t nb : {1, 40, 500}) {
      const Route r = t.route(0, nb * per_node);
      const double expected = expected_latency(t, r);
      EXPECT_NEAR(r.latency, expected, 1e-12);
    }
  }
}

// -------------------------------------------------------------------------------------------------
// Rings ([singh2025dissertation] eq. 5.7 generalised): each ring step is a flow, and a resource crossed by k flows
// gives each 1/k of its bandwidth.

// Two 4-GPU rings over nodes 0 and 1, interleaved: ring A takes the even local devices 0 and 2 of
// each node, ring B the odd ones 1 and 3. Each ring crosses the node boundary once each way, between
// devices of the same local index (2 -> 2 and 0 -> 0 for ring A), so every inter-node step leaves and
// enters through NICs of the same index.
std::vector<std::vector<int64_t>> interleaved_rings(int64_t per_node) {
  return {{0, 2, per_node + 2, per_node + 0}, {1, 3, per_node + 3, per_node + 1}};
}

TEST(TopologyRings, SummitTwoRingsShareTheNodesNic) {
  const Topology t(resolve_machine("summit").slice(2));
  const auto rings = interleaved_rings(6);
  const RingLoad a = t.rings({rings[0]}), b = t.rings({rings[1]}), both = t.rings(rings);
  EXPECT_TRUE(a.crosses_nodes);
  EXPECT_EQ(a.max_flows_per_nic, 1);
  EXPECT_EQ(b.max_flows_per_nic, 1);
  // One ring alone: its inter-node steps get one EDR rail link each.
  EXPECT_DOUBLE_EQ(a.bandwidth, 12.5 * kGBps);
  EXPECT_DOUBLE_EQ(b.bandwidth, 12.5 * kGBps);
  // Both at once: one NIC per node, so both rings' steps to the other node share it (and its rail).
  EXPECT_TRUE(both.crosses_nodes);
  EXPECT_EQ(both.max_flows_per_nic, 2);
  EXPECT_DOUBLE_EQ(both.bandwidth, a.bandwidth / 2);
}

TEST(TopologyRings, PerlmutterTwoRingsUseSeparateNics) {
  const Topology t(minimal_routing(resolve_machine("perlmutter")).slice(2));
  const auto rings = interleaved_rings(4);
  const RingLoad a = t.rings({rings[0]}), both = t.rings(rings);
  EXPECT_TRUE(both.crosses_nodes);
  EXPECT_EQ(both.max_flows_per_nic, 1);  // one NIC per GPU: the two rings never meet on a NIC
  EXPECT_DOUBLE_EQ(a.bandwidth, 25 * kGBps);
  EXPECT_DOUBLE_EQ(both.bandwidth, a.bandwidth);
  // Ordered 0, 2, 4, 6 instead, ring A steps from NIC 2 to NIC 0 both ways: nodes 0 and 1 attach NIC
  // k to the same switch k, so both steps cross the one local link from switch 2 to switch 0.
  const RingLoad crossed = t.rings({{0, 2, 4, 6}});
  EXPECT_EQ(crossed.max_flows_per_nic, 1);
  EXPECT_DOUBLE_EQ(crossed.bandwidth, 12.5 * kGBps);
}

// The SimGrid test FrontierEightGcdsShareFourNics, analytically: 8 rings of 2 GCDs (GCD g of node 0
// and of node 1) load each NIC direction with the 2 GCDs it serves.
TEST(TopologyRings, FrontierEightPairsShareFourNics) {
  const Topology t(resolve_machine("frontier").slice(2));
  std::vector<std::vector<int64_t>> rings;
  for (int64_t g = 0; g < 8; ++g) rings.push_back({g, 8 + g});
  const RingLoad load = t.rings(rings);
  EXPECT_TRUE(load.crosses_nodes);
  EXPECT_EQ(load.max_flows_per_nic, 2);
  EXPECT_DOUBLE_EQ(load.bandwidth, 12.5 * kGBps);
}

TEST(TopologyRings, IntraNodeRingsStayInTheNode) {
  for (const char* name : {"frontier", "summit", "perlmutter", "selene", "alps", "localhost"}) {
    const Machine m = resolve_machine(name);
    const Topology t(m.slice(std::min<int64_t>(m.network.nodes, 4)));
    const int64_t per_node = m.devices_per_node();
    const int64_t node = t.machine().network.nodes - 1;
    std::vector<int64_t> ring;
    for (int64_t d = 0; d < per_node; ++d) ring.push_back(node * per_node + d);
    const RingLoad load = t.rings({ring});
    EXPECT_FALSE(load.crosses_nodes) << name;
    EXPECT_EQ(load.max_flows_per_nic, 0) << name;
    EXPECT_GT(load.bandwidth, 0) << name;
    EXPECT_LT(load.bandwidth, 1e15) << name;
    for (size_t i = 0; i < ring.size(); ++i)
      for (uint32_t id : t.route(ring[i], ring[(i + 1) % ring.size()]).resources) {
        EXPECT_EQ(t.kind(id), ResourceKind::node_link) << name;
        EXPECT_TRUE(starts_with(t.resource_name(id), "n" + std::to_string(node) + ":")) << t.resource_name(id);
      }
  }
  // Frontier's 8 GCDs in index order: steps 1 -> 2, 3 -> 4, 5 -> 6 and 7 -> 0 have no direct link
  // and take two hops, at least one of them a 50 or 100 GB/s link: the ring runs at 50 GB/s or less.
  const Topology f(resolve_machine("frontier").slice(1));
  const RingLoad load = f.rings({{0, 1, 2, 3, 4, 5, 6, 7}});
  EXPECT_FALSE(load.crosses_nodes);
  EXPECT_GT(load.bandwidth, 0);
  EXPECT_LE(load.bandwidth, 50 * kGBps);
}

TEST(TopologyRings, DegenerateRings) {
  const Topology t(resolve_machine("frontier").slice(2));
  const RingLoad single = t.rings({{3}});  // a ring of one device sends nothing
  EXPECT_FALSE(single.crosses_nodes);
  EXPECT_EQ(single.max_flows_per_nic, 0);
  const RingLoad none = t.rings({});
  EXPECT_FALSE(none.crosses_nodes);
}

// Adaptive routing (the built-in Slingshot machines): a flow inside a group crosses its switches' local
// aggregates, a flow between groups its groups' global aggregates, so ring neighbours that minimal
// routing would pile onto one link share a switch's or a group's links.
TEST(TopologyRoutes, FrontierAdaptiveRoutesUseTheAggregates) {
  static const Topology t(resolve_machine("frontier"));
  ASSERT_TRUE(t.machine().network.dragonfly.adaptive);
  const Route same_group = t.route(device(t, 0, 0), device(t, 20, 0));
  auto net = of_kind(t, same_group, ResourceKind::network);
  ASSERT_EQ(net.size(), 2u);
  EXPECT_EQ(t.resource_name(net[0]), "switch0:local-out");
  EXPECT_EQ(t.resource_name(net[1]), "switch4:local-in");
  EXPECT_DOUBLE_EQ(t.resource(net[0]).bandwidth, 31 * 25 * kGBps * 0.5);
  EXPECT_EQ(same_group.switches, 2);
  const Route other_group = t.route(device(t, 0, 0), device(t, 5 * 128 + 3, 0));
  net = of_kind(t, other_group, ResourceKind::network);
  ASSERT_EQ(net.size(), 2u);
  EXPECT_EQ(t.resource_name(net[0]), "group0:global-out");
  EXPECT_EQ(t.resource_name(net[1]), "group5:global-in");
  EXPECT_DOUBLE_EQ(t.resource(net[0]).bandwidth, 73 * 4 * 25 * kGBps * 0.5);
  EXPECT_EQ(other_group.switches, 4);
  EXPECT_EQ(other_group.global_hops, 1);
  for (const Route* r : {&same_group, &other_group}) EXPECT_NEAR(r->latency, expected_latency(t, *r), 1e-15);
  // 16 nodes of one switch block each exchange with the node 16 further on (another switch): minimal
  // routing puts the 16 flows of a direction on one local link; adaptive routing shares the switch's
  // 31 local links (at half their bandwidth), just short of the 16 NICs' 25 GB/s.
  std::vector<std::vector<int64_t>> pairs;
  for (int64_t j = 0; j < 16; ++j) pairs.push_back({device(t, j, 0), device(t, j + 16, 0)});
  EXPECT_DOUBLE_EQ(frontier().rings(pairs).bandwidth, 25 * kGBps / 16);
  EXPECT_DOUBLE_EQ(t.rings(pairs).bandwidth, 31 * 25 * kGBps * 0.5 / 16);
}

// A job in few groups: the detours through the groups it leaves idle take none of its links, so a
// group keeps more of its global bandwidth for itself: all of it in two groups, two thirds in 38 of
// Frontier's 74 (1/(1 + 36/72)), half when the job fills the machine (above).
TEST(TopologyRoutes, FewerGroupsLeaveTheDetoursFree) {
  const auto frontier_machine = resolve_machine("frontier");
  for (const auto& [nodes, share] : {std::pair<int64_t, double>{256, 1.0}, {38 * 128, 2.0 / 3.0}}) {
    const Topology t(frontier_machine.slice(nodes));
    const Route r = t.route(device(t, 0, 0), device(t, 128 + 3, 0));
    const auto net = of_kind(t, r, ResourceKind::network);
    ASSERT_EQ(net.size(), 2u);
    EXPECT_EQ(t.resource_name(net[0]), "group0:global-out");
    EXPECT_NEAR(t.resource(net[0]).bandwidth, 73 * 4 * 25 * kGBps * share, 1e-3) << nodes << " nodes";
  }
}

// A resource's node: its links, its NICs and, in a fat tree, the links from its NICs' ports to their
// leaf switches (only that NIC's traffic crosses them); the same resource on another node is the one
// at the same place on that node's routes. Shared switch links belong to no node.
TEST(TopologyRoutes, FatTreePortLinksBelongToTheirNode) {
  for (const char* name : {"selene", "summit", "dgx-h100"}) {
    const Topology t(resolve_machine(name).slice(64));
    const int64_t per_node = t.machine().devices_per_node();
    for (const auto& [a, b] : {std::pair<int64_t, int64_t>{3, 40}, {5, 33}, {1, 62}}) {
      const Route ab = t.route(a * per_node + 1, b * per_node + 2);
      const Route moved = t.route((a + 1) * per_node + 1, (b + 1) * per_node + 2);
      const auto on_moved = [&](uint32_t id) {
        return std::find(moved.resources.begin(), moved.resources.end(), id) != moved.resources.end();
      };
      // Summit picks one of its node's two rails by destination: compare where the rails are the same.
      bool same_nics = true;
      for (uint32_t id : ab.resources)
        if (t.kind(id) == ResourceKind::injection) same_nics = same_nics && on_moved(t.on_node(id, t.node_of(id) + 1));
      int owned = 0;
      for (uint32_t id : ab.resources) {
        const int64_t node = t.node_of(id);
        if (node < 0) continue;
        ASSERT_TRUE(node == a || node == b) << name << ": " << t.resource_name(id);
        ++owned;
        const uint32_t there = t.on_node(id, node + 1);
        EXPECT_EQ(t.node_of(there), node + 1) << name;
        EXPECT_EQ(t.on_node(there, node), id) << name;
        if (same_nics) {
          EXPECT_TRUE(on_moved(there)) << name << ": " << t.resource_name(id) << " has no counterpart one node over";
        }
      }
      // GPU to NIC and NIC injection at both ends, and the port links where a port has one leaf switch
      // (Summit's two have one each: which one depends on the destination, so they are shared).
      EXPECT_GE(owned, name == std::string("summit") ? 4 : 6) << name;
    }
  }
}

// NCCL's transfers between nodes stay on the receiver's rail (same-NIC ring graphs, PXN): the sender
// reaches the NIC of the receiver's device index over its node's links, so on a rail-optimized fat tree
// GPU 1 of one node reaches GPU 2 of another under their rail's leaf switch, where the sender's own NIC
// would go up to the spine and down another rail.
TEST(TopologyRoutes, RailMatchedNicsKeepATransferOnTheReceiversRail) {
  TopologyOptions rail_matched;
  rail_matched.rail_matched_nics = true;
  const Machine machine = resolve_machine("selene").slice(64);
  const Topology own(machine), matched(machine, rail_matched);
  const int64_t per_node = machine.devices_per_node();
  const int64_t from = 3 * per_node + 1, to = 4 * per_node + 2;
  const Route crossing = own.route(from, to), on_rail = matched.route(from, to);
  EXPECT_LT(on_rail.switches, crossing.switches);
  const auto injection_nics = [&](const Topology& t, const Route& r) {
    std::vector<std::string> names;
    for (uint32_t id : r.resources)
      if (t.kind(id) == ResourceKind::injection) names.push_back(t.resource_name(id));
    return names;
  };
  // Both ends inject through NIC 2's links: the receiver's NIC, on both nodes.
  const auto nics = injection_nics(matched, on_rail);
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics, injection_nics(own, own.route(3 * per_node + 2, to)));
  EXPECT_NE(nics, injection_nics(own, crossing));
  // Inside a node nothing changes.
  EXPECT_EQ(matched.route(from, from + 1).resources, own.route(from, from + 1).resources);
}

}  // namespace
}  // namespace paratwin::topology
