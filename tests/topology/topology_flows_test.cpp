// Flows simulated with SimGrid on the platforms of the built-in machines get the bandwidth the
// Topology's routes promise: a lone flow gets its route's bottleneck (1 GB in T seconds is
// 1e9 / (T − route latency) bytes/s), and flows that share a NIC, a rail or a socket link split it.
// Every simulation runs in a child process (simgrid_child.hpp): one SimGrid Engine per process.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/topology/simgrid_child.hpp"
#include "topology/machine.hpp"
#include "topology/platform.hpp"
#include "topology/topology.hpp"

namespace paratwin::topology {
namespace {

namespace sg4 = simgrid::s4u;

constexpr double kGB = 1e9;         // bytes
constexpr double kGBps = 1e9;       // bytes/s
constexpr double kRelative = 1e-6;  // simulated against analytical

struct Flow {
  int64_t from, to;
  double bytes = kGB;
};

// Simulates `rounds` one after the other; the flows of a round start together. Returns, flow by flow
// in the order given, the time from its round's start to its completion.
std::vector<double> simulate(const Machine& machine, const std::vector<std::vector<Flow>>& rounds) {
  return test::run_simulation([&] {
    const Topology topology(machine);
    const Platform platform = build_platform(topology);
    std::vector<double> done;
    sg4::Actor::create("driver", platform.hosts.front(), [&] {
      for (const auto& round : rounds) {
        const double start = sg4::Engine::get_clock();
        const size_t base = done.size();
        done.resize(base + round.size());
        std::vector<sg4::ActorPtr> flows;
        for (size_t i = 0; i < round.size(); ++i) {
          const Flow f = round[i];
          flows.push_back(
              sg4::Actor::create("flow", platform.hosts.at(static_cast<size_t>(f.from)), [&, f, i, base, start] {
                sg4::Comm::sendto(platform.hosts.at(static_cast<size_t>(f.from)),
                                  platform.hosts.at(static_cast<size_t>(f.to)), static_cast<uint64_t>(f.bytes));
                done[base + i] = sg4::Engine::get_clock() - start;
              }));
        }
        for (auto& a : flows) a->join();
      }
    });
    sg4::Engine::get_instance()->run();
    return done;
  });
}

// The bandwidth a lone flow of `bytes` got, given its simulated time and its route's latency.
double achieved(double bytes, double time, const PathInfo& p) {
  return bytes / (time - p.latency);
}

std::string pair_name(int64_t a, int64_t b) {
  return "(" + std::to_string(a) + "," + std::to_string(b) + ")";
}

// -------------------------------------------------------------------------------------------------
// The child runner itself: results come back in order, and a child that throws or crashes fails the
// calling test.

TEST(TopologyFlowsRunner, ReturnsTheChildsResultsAndReportsItsFailures) {
  EXPECT_EQ(test::run_simulation([] {
              return std::vector<double>{1.5, -2, 3e300};
            }),
            (std::vector<double>{1.5, -2, 3e300}));
  EXPECT_TRUE(test::run_simulation([] { return std::vector<double>{}; }).empty());
  EXPECT_NONFATAL_FAILURE(test::run_simulation([]() -> std::vector<double> { throw std::runtime_error("boom"); }),
                          "exited with status 3");
  EXPECT_NONFATAL_FAILURE(test::run_simulation([]() -> std::vector<double> {
                            std::raise(SIGABRT);
                            return {};
                          }),
                          "killed by signal");
}

// -------------------------------------------------------------------------------------------------
// Frontier, inside a node: every ordered GCD pair of node 0, each flow alone.

TEST(TopologyFlows, FrontierEveryGcdPairGetsItsRouteBottleneck) {
  const Machine m = resolve_machine("frontier").slice(2);
  const Topology topo(m);
  std::vector<std::vector<Flow>> rounds;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t a = 0; a < 8; ++a)
    for (int64_t b = 0; b < 8; ++b)
      if (a != b) {
        rounds.push_back({{a, b}});
        pairs.emplace_back(a, b);
      }
  const std::vector<double> t = simulate(m, rounds);
  ASSERT_EQ(t.size(), pairs.size());
  std::map<std::pair<int64_t, int64_t>, double> bw;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [a, b] = pairs[i];
    const PathInfo p = topo.path(a, b);
    bw[pairs[i]] = achieved(kGB, t[i], p);
    EXPECT_NEAR(bw[pairs[i]] / p.bandwidth, 1.0, kRelative)
        << "GCD pair " << pair_name(a, b) << ": simulated " << bw[pairs[i]] / kGBps << " GB/s, route bottleneck "
        << p.bandwidth / kGBps << " GB/s";
  }
  // The three Infinity Fabric widths of the MI250X node (frontier.json): 4, 2 and 1 links of 50 GB/s.
  auto expect_bw = [&](int64_t a, int64_t b, double gbps) {
    EXPECT_NEAR((bw[{a, b}]) / (gbps * kGBps), 1.0, kRelative) << pair_name(a, b);
    EXPECT_EQ(topo.path(a, b).links, 1) << pair_name(a, b) << " has a direct link";
  };
  expect_bw(0, 1, 200);  // same package
  expect_bw(1, 0, 200);
  expect_bw(2, 3, 200);
  expect_bw(0, 6, 100);
  expect_bw(6, 0, 100);
  expect_bw(2, 4, 100);
  expect_bw(0, 2, 50);
  expect_bw(1, 5, 50);
  expect_bw(5, 1, 50);
  // No direct link between GCD 0 and GCD 3: two hops, 200 then 50 GB/s (or 50 then 200).
  const PathInfo p03 = topo.path(0, 3);
  EXPECT_GT(p03.links, 1);
  EXPECT_EQ(p03.links, 2);
  EXPECT_DOUBLE_EQ(p03.bandwidth, 50 * kGBps);
  EXPECT_NEAR((bw[{0, 3}]) / p03.bandwidth, 1.0, kRelative);
}

// -------------------------------------------------------------------------------------------------
// Summit, across sockets: no GPU-GPU NVLink between the two POWER9 sockets, so GPU 0 reaches GPU 3
// through the X-Bus (cpu0-cpu1, 64 GB/s).

TEST(TopologyFlows, SummitCrossSocketFlowTakesTheXBus) {
  const Machine m = resolve_machine("summit").slice(1);
  const Topology topo(m);
  const Route r = topo.route(0, 3);
  std::vector<std::string> names;
  for (uint32_t id : r.resources) names.push_back(topo.resource_name(id));
  EXPECT_NE(std::find(names.begin(), names.end(), "n0:cpu0>cpu1"), names.end())
      << "route gpu0 -> gpu3: " << testing::PrintToString(names);
  const PathInfo p = topo.path(0, 3);
  EXPECT_EQ(p.links, 3);  // gpu0-cpu0, cpu0-cpu1, cpu1-gpu3
  EXPECT_DOUBLE_EQ(p.bandwidth, 50 * kGBps);

  // Round 1: the lone flow gets the route's bottleneck (the 50 GB/s NVLink CPU-GPU bricks).
  // Round 2: two flows across the sockets at once (0 -> 3 and 1 -> 4) share the 64 GB/s X-Bus.
  const std::vector<double> t = simulate(m, {{{0, 3}}, {{0, 3}, {1, 4}}});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_NEAR(achieved(kGB, t[0], p) / p.bandwidth, 1.0, kRelative);
  const PathInfo p14 = topo.path(1, 4);
  ASSERT_DOUBLE_EQ(p14.latency, p.latency);  // equal latencies: the X-Bus is split evenly
  EXPECT_NEAR(achieved(kGB, t[1], p) / (32 * kGBps), 1.0, kRelative);
  EXPECT_NEAR(achieved(kGB, t[2], p14) / (32 * kGBps), 1.0, kRelative);
}

// -------------------------------------------------------------------------------------------------
// A lone inter-node flow, device 0 of node 0 to device 0 of node 1, gets its NIC side's limit.

struct NicCase {
  const char* machine;
  double gbps;  // the per-flow limit the machine file implies
  const char* why;
};

void PrintTo(const NicCase& c, std::ostream* os) {
  *os << c.machine;
}

class TopologyFlowsInterNode : public testing::TestWithParam<NicCase> {};

TEST_P(TopologyFlowsInterNode, LoneFlowGetsItsNicBandwidth) {
  const NicCase c = GetParam();
  const Machine m = resolve_machine(c.machine).slice(2);
  const Topology topo(m);
  const int64_t to = m.devices_per_node();  // device 0 of node 1
  const PathInfo p = topo.path(0, to);
  // The limit derived from the file: the NIC's bandwidth, or the fat tree's link bandwidth when a
  // NIC has several ports into the tree (up[0] > 1: each port is one tree link, one per flow).
  double limit = m.node.nics.at(static_cast<size_t>(m.nic_of(0))).bandwidth;
  if (m.network.kind == NetworkKind::fat_tree && m.network.fat_tree.up.at(0) > 1)
    limit = std::min(limit, m.network.fat_tree.link_bandwidth);
  EXPECT_DOUBLE_EQ(limit, c.gbps * kGBps) << c.why;
  EXPECT_DOUBLE_EQ(p.bandwidth, c.gbps * kGBps) << c.why;
  const std::vector<double> t = simulate(m, {{{0, to}}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_NEAR(achieved(kGB, t[0], p) / p.bandwidth, 1.0, kRelative) << c.why;
}

INSTANTIATE_TEST_SUITE_P(
    Machines, TopologyFlowsInterNode,
    testing::Values(NicCase{"frontier", 25, "Slingshot-11 Cassini NIC 25 GB/s (GCD 0 reaches it through GCD 1)"},
                    // summit.json: one dual-port EDR adapter of 25 GB/s whose two ports are two 12.5 GB/s
                    // links into the fat tree (up[0] = 2); D-mod-K puts one flow on one port, so a lone
                    // flow gets one EDR link, 12.5 GB/s, the papers' inter-node peak (network.note (1)).
                    NicCase{"summit", 12.5, "one EDR rail port of the dual-port adapter"},
                    NicCase{"perlmutter", 25, "one Slingshot-11 NIC per GPU, 25 GB/s (PCIe 32 GB/s before it)"},
                    NicCase{"selene", 25, "one HDR InfiniBand NIC per GPU, 25 GB/s"},
                    NicCase{"alps", 25, "one Slingshot-11 NIC per GH200, 25 GB/s"}),
    [](const testing::TestParamInfo<NicCase>& info) { return std::string(info.param.machine); });

// -------------------------------------------------------------------------------------------------
// Frontier: the 8 GCDs of node 0 send 1 GB each at once to the 8 GCDs of node 1. GCDs 2k and 2k+1
// share NIC k, so the 4 NICs of 25 GB/s carry 8 GB in 2 GB / 25 GB/s = 80 ms: 100 GB/s aggregate.

TEST(TopologyFlows, FrontierEightGcdsShareFourNics) {
  const Machine m = resolve_machine("frontier").slice(2);
  const Topology topo(m);
  std::vector<Flow> round;
  double min_latency = 1, max_latency = 0;
  for (int64_t g = 0; g < 8; ++g) {
    round.push_back({g, 8 + g});
    min_latency = std::min(min_latency, topo.path(g, 8 + g).latency);
    max_latency = std::max(max_latency, topo.path(g, 8 + g).latency);
  }
  const std::vector<double> t = simulate(m, {round});
  ASSERT_EQ(t.size(), 8u);
  const double last = *std::max_element(t.begin(), t.end());
  // Work-conserving sharing: whatever the split between the two GCDs of a NIC, the NIC is busy from
  // the moment the first of them gets past its latency until its 2 GB are through at 25 GB/s. The
  // latencies (1.45 us through GCD 2k+1, 2.45 us from GCD 2k) are all that separates 8 GB / T from
  // 100 GB/s.
  EXPECT_NEAR(8 * kGB / last / (100 * kGBps), 1.0, 1e-4);
  EXPECT_GE(last, 2 * kGB / (25 * kGBps) + min_latency - 1e-9);
  EXPECT_LE(last, 2 * kGB / (25 * kGBps) + max_latency + 1e-9);
  // No GCD finishes before its 1 GB could have gone at the whole NIC's 25 GB/s.
  for (double x : t) EXPECT_GE(x, kGB / (25 * kGBps));
}

// -------------------------------------------------------------------------------------------------
// Summit: the 6 GPUs of node 0 send at once. summit.json models the dual-port adapter as one 25 GB/s
// NIC with two 12.5 GB/s rail links chosen per destination (D-mod-K): flows to one node all take the
// same rail and share 12.5 GB/s; flows to two nodes of different rails share both, 25 GB/s (the
// node's injection bandwidth). The PCIe links (16 GB/s per socket, 3 GPUs each) are not the limit.

TEST(TopologyFlows, SummitSixGpusShareTheDualRailNic) {
  const Machine m = resolve_machine("summit").slice(3);
  const Topology topo(m);
  std::vector<Flow> one_node, two_nodes;
  for (int64_t g = 0; g < 6; ++g) {
    one_node.push_back({g, 6 + g});
    two_nodes.push_back({g, (g % 2 == 0 ? 6 : 12) + g});  // nodes 1 and 2: rails 1 and 0
  }
  // The NIC's tree link (its rail) is the first network resource of a route.
  auto rail = [&](int64_t from, int64_t to) {
    for (uint32_t id : topo.route(from, to).resources)
      if (topo.kind(id) == ResourceKind::network) return id;
    return UINT32_MAX;
  };
  for (int64_t g = 1; g < 6; ++g) ASSERT_EQ(rail(g, 6 + g), rail(0, 6)) << "GPU " << g << " -> node 1";
  ASSERT_NE(rail(0, 6), rail(1, 13)) << "nodes 1 and 2 are reached on different rails";
  const std::vector<double> t = simulate(m, {one_node, two_nodes});
  ASSERT_EQ(t.size(), 12u);
  const double one = *std::max_element(t.begin(), t.begin() + 6);
  const double two = *std::max_element(t.begin() + 6, t.end());
  EXPECT_NEAR(6 * kGB / one / (12.5 * kGBps), 1.0, 1e-3) << "6 GPUs -> node 1: one rail";
  EXPECT_NEAR(6 * kGB / two / (25 * kGBps), 1.0, 1e-3) << "6 GPUs -> nodes 1 and 2: both rails";
  // The aggregate can't pass the NIC's 25 GB/s.
  EXPECT_LE(6 * kGB / two, m.node.nics[0].bandwidth * (1 + 1e-9));
}

// -------------------------------------------------------------------------------------------------
// The whole of Frontier, 9,408 nodes in 74 groups, is a platform; a flow from the first device to the
// last (different groups, one global hop) completes at the NIC bandwidth.

TEST(TopologyFlows, WholeFrontierFirstToLastDevice) {
  const Machine m = resolve_machine("frontier");
  ASSERT_EQ(m.network.nodes, 9408);
  ASSERT_EQ(m.network.dragonfly.groups, 74);
  const Topology topo(m);
  const int64_t last = topo.devices() - 1;
  const PathInfo p = topo.path(0, last);
  EXPECT_EQ(p.global_hops, 1);
  EXPECT_DOUBLE_EQ(p.bandwidth, 25 * kGBps);
  const std::vector<double> t = simulate(m, {{{0, last}}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_NEAR(achieved(kGB, t[0], p) / p.bandwidth, 1.0, kRelative);
}

}  // namespace
}  // namespace paratwin::topology
