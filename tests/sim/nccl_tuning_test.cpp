// NCCL's own cost model (src/graph/tuning.cc of NVIDIA/nccl, v2.15.5 and v2.22.3): the latency of a
// ring is the base latency plus one hop latency per step, the network's for the steps that cross
// nodes; LL trades bandwidth (a quarter, at most llMaxBw) for latency, and NCCL picks the protocol
// with the lowest estimate. The simulator's plans then carry that latency and the protocol's bytes.
#include "sim/nccl_tuning.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>

#include "sim/collectives.hpp"
#include "topology/machine.hpp"

namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

namespace {

ps::NcclHardware perlmutter_like() {
  ps::NcclHardware hw;
  hw.version = "2.15";
  hw.compute_capability = 80;
  hw.cpu = "amd";
  hw.ll128 = false;
  hw.intra_bus_GBps = 240;
  hw.inter_bus_GBps = 100;
  return hw;
}

}  // namespace

TEST(NcclTuning, RingLatencyIsBasePlusIntraAndNetworkHops) {
  // 1 GiB all-gather over 32 ranks on 8 nodes: bandwidth-bound, so Simple; 31 steps, 7 across nodes:
  // 8.4 + 24 x 3.4 (NVLink) + 7 x 9.6 (network) microseconds.
  const auto c = ps::nccl_choice(perlmutter_like(), pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 32, 8, 1 << 30);
  EXPECT_EQ(c.protocol, ps::NcclProtocol::simple);
  EXPECT_NEAR(c.latency, (8.4 + 24 * 3.4 + 7 * 9.6) * 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(c.bandwidth_share, 1.0);
}

TEST(NcclTuning, SmallBuffersOnManyNodesTakeLL) {
  // 16 MiB over 2,048 ranks on 512 nodes: Simple's 2,047 hops cost 10 ms, LL's about 2.7 ms at a
  // quarter of the bus bandwidth capped at llMaxBw (19 GB/s on AMD hosts, more than two nodes).
  const auto hw = perlmutter_like();
  const auto c = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 2048, 512, 16 << 20);
  EXPECT_EQ(c.protocol, ps::NcclProtocol::ll);
  EXPECT_NEAR(c.latency, (3.6 + 1536 * 0.47 * 1.8 + 511 * 2.7) * 1e-6, 1e-12);
  EXPECT_NEAR(c.bandwidth_share, 19.0 / 100.0, 1e-12);
  // And a latency-bound 1 MiB on one node is LL too: a third of the bus (all-gather inside a node).
  const auto one = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 4, 1, 1 << 20);
  EXPECT_EQ(one.protocol, ps::NcclProtocol::ll);
  EXPECT_NEAR(one.bandwidth_share, 1.0 / 3.0, 1e-12);
}

TEST(NcclTuning, LL128OnlyWhereEnabledAndSupported) {
  auto hw = perlmutter_like();
  hw.ll128 = true;
  const auto c = ps::nccl_choice(hw, pw::OpKind::all_reduce, ps::NcclAlgorithm::ring, 16, 2, 64 << 20);
  EXPECT_EQ(c.protocol, ps::NcclProtocol::ll128);
  EXPECT_NEAR(c.bandwidth_share, 0.92, 1e-12);
  hw.compute_capability = 75;  // Turing: no LL128 in NCCL
  EXPECT_NE(ps::nccl_choice(hw, pw::OpKind::all_reduce, ps::NcclAlgorithm::ring, 16, 2, 64 << 20).protocol,
            ps::NcclProtocol::ll128);
}

TEST(NcclTuning, Version222AddsTheHostsPostingCostPerStep) {
  // v2.18+: on a multi-node ring every step costs at least the network overhead (2 us on AMD hosts,
  // three times that for Simple); the network Simple hop is 14 us.
  auto hw = perlmutter_like();
  hw.version = "2.22";
  const auto c = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 32, 8, 1 << 30);
  EXPECT_EQ(c.protocol, ps::NcclProtocol::simple);
  EXPECT_NEAR(c.latency, (8.4 + 24 * 6.0 + 7 * 14.0) * 1e-6, 1e-12);
}

TEST(NcclTuning, TreeLatencyClimbsTheNodesLogarithmically) {
  // Simple tree all-reduce, 64 ranks on 16 nodes: 2 x ((4 - 1) x 28 + log2(16) x 28) us, base 0.
  auto hw = perlmutter_like();
  const auto c = ps::nccl_choice(hw, pw::OpKind::all_reduce, ps::NcclAlgorithm::tree, 64, 16, 1 << 30);
  EXPECT_EQ(c.protocol, ps::NcclProtocol::simple);
  EXPECT_NEAR(c.latency, 2 * (3 * 28 + 4 * 28) * 1e-6, 1e-12);
}

TEST(NcclTuning, RefusesWhatItDoesNotModel) {
  auto hw = perlmutter_like();
  EXPECT_THROW(ps::nccl_choice(hw, pw::OpKind::broadcast, ps::NcclAlgorithm::ring, 8, 2, 1e6), std::invalid_argument);
  EXPECT_THROW(ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::tree, 8, 2, 1e6), std::invalid_argument);
  hw.version = "2.99";
  EXPECT_THROW(ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 8, 2, 1e6), std::invalid_argument);
}

// Perlmutter's profile names NCCL's tables: a ring's plan carries the protocol's latency, spread over
// its steps so that they add up to NCCL's, and LL's bytes on the wire; another library's does not.
TEST(NcclTuning, PlansCarryTheProtocolsLatencyAndBytes) {
  const auto machine = paratwin::topology::resolve_machine("perlmutter");
  const auto costs = ps::StepCosts::of(machine, "nccl");
  ASSERT_TRUE(costs.nccl.has_value());
  EXPECT_EQ(costs.nccl->version, "2.15");
  EXPECT_TRUE(costs.nccl->nvlink);
  EXPECT_NEAR(costs.nccl->inter_bus_GBps, 100, 1e-9);
  ps::GroupLayout layout;
  for (int32_t i = 0; i < 64; ++i) layout.node.push_back(i / 4);
  const double bytes = 1 << 20;
  const auto choice = costs.nccl_choice_for(pw::OpKind::all_gather, ps::Algorithm::ring, layout, bytes);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->protocol, ps::NcclProtocol::ll);
  for (const auto fidelity : {ps::Fidelity::exact, ps::Fidelity::fast}) {
    const auto plain = ps::plan(pw::OpKind::all_gather, ps::Algorithm::ring, layout, 5, bytes, -1, fidelity);
    const auto steps = costs.plan(pw::OpKind::all_gather, ps::Algorithm::ring, layout, 5, bytes, -1, fidelity);
    ASSERT_EQ(steps.size(), plain.size());
    double latency = 0, wire = 0, data = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      latency += costs.after_transfers(steps[s], 1e-6, pw::OpKind::all_gather);
      for (const auto& t : steps[s].sends) wire += t.bytes;
      for (const auto& t : plain[s].sends) data += t.bytes;
    }
    EXPECT_NEAR(latency, choice->latency, 1e-12);  // the path latency is inside NCCL's hop latency
    EXPECT_NEAR(wire, data / choice->bandwidth_share, 1e-6 * data);
  }
  // Cray-MPICH on the same machine keeps the profile's step cost.
  const auto mpich = ps::StepCosts::of(machine, "cray-mpich");
  EXPECT_FALSE(mpich.nccl.has_value());
  const auto steps = mpich.plan(pw::OpKind::all_gather, ps::Algorithm::ring, layout, 5, bytes, -1, ps::Fidelity::exact);
  EXPECT_LT(steps.front().library_step, 0);
}

// PAT (NVIDIA/nccl v2.23.4-1 src/graph/tuning.cc, ncclPatEnable and the PAT latency): all-gather and
// reduce-scatter only, Simple only, only for a communicator of one rank per node, only from v2.23.
TEST(NcclTuning, PatOnlyFromVersion223ForOneRankPerNode) {
  auto hw = perlmutter_like();
  for (const char* version : {"2.15", "2.22"}) {
    hw.version = version;
    EXPECT_FALSE(ps::nccl_pat_enabled(hw, pw::OpKind::all_gather, 256, 256)) << version;
    EXPECT_EQ(ps::nccl_collective_algorithm(hw, pw::OpKind::all_gather, 256, 256, 16 << 20), ps::NcclAlgorithm::ring);
    EXPECT_THROW(ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::pat, 256, 256, 1e6),
                 std::invalid_argument);
  }
  for (const char* version : {"2.23", "2.27"}) {
    hw.version = version;
    EXPECT_TRUE(ps::nccl_pat_enabled(hw, pw::OpKind::all_gather, 256, 256)) << version;
    EXPECT_TRUE(ps::nccl_pat_enabled(hw, pw::OpKind::reduce_scatter, 2, 2)) << version;
    // Two ranks per node: nNodes != nRanks. All-reduce: no PAT in NCCL.
    EXPECT_FALSE(ps::nccl_pat_enabled(hw, pw::OpKind::all_gather, 512, 256)) << version;
    EXPECT_FALSE(ps::nccl_pat_enabled(hw, pw::OpKind::all_reduce, 256, 256)) << version;
    // 16 MiB over 256 nodes: PAT's 8 + 8 x 14 / 3.5 + 2.8 x 256 = 756.8 us of latency beats the ring's
    // best (LL: 6.6 + 255 x 5.0 us, the network tree row at one rank per node, at 19 GB/s).
    EXPECT_EQ(ps::nccl_collective_algorithm(hw, pw::OpKind::all_gather, 256, 256, 16 << 20), ps::NcclAlgorithm::pat)
        << version;
    EXPECT_EQ(ps::nccl_collective_algorithm(hw, pw::OpKind::reduce_scatter, 256, 256, 16 << 20), ps::NcclAlgorithm::pat)
        << version;
    EXPECT_EQ(ps::nccl_collective_algorithm(hw, pw::OpKind::all_gather, 512, 256, 16 << 20), ps::NcclAlgorithm::ring)
        << version;
    // 4 GiB over 16 nodes: bandwidth-bound, and PAT has only 0.85 (0.75) of the bus: the ring.
    EXPECT_EQ(ps::nccl_collective_algorithm(hw, pw::OpKind::all_gather, 16, 16, 4.0 * (1 << 30)),
              ps::NcclAlgorithm::ring)
        << version;
  }
}

TEST(NcclTuning, PatLatencyIsLogarithmicInNodesPlusALinearPart) {
  auto hw = perlmutter_like();
  for (const auto& [version, share] : {std::pair{"2.23", 0.85}, std::pair{"2.27", 0.75}}) {
    hw.version = version;
    const double bytes = 16 << 20;
    const auto c = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::pat, 256, 256, bytes);
    EXPECT_EQ(c.protocol, ps::NcclProtocol::simple);
    EXPECT_NEAR(c.latency, (8 + 8 * 14 / 3.5 + 2.8 * 256) * 1e-6, 1e-12) << version;
    EXPECT_DOUBLE_EQ(c.bandwidth_share, share);
    EXPECT_NEAR(c.estimate, c.latency + bytes / (100e9 * share), 1e-12) << version;
  }
}

TEST(NcclTuning, Version223PricesAOneRankPerNodeRingAtTheTreesNetworkRow) {
  // v2.23+: "with ppn=1 latencies are fully exposed, use the Tree network latency": Simple 14 us, LL 5.0.
  auto hw = perlmutter_like();
  hw.version = "2.23";
  const auto simple = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 8, 8, 1 << 30);
  EXPECT_EQ(simple.protocol, ps::NcclProtocol::simple);
  EXPECT_NEAR(simple.latency, (8.4 + 7 * 14.0) * 1e-6, 1e-12);
  const auto ll = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 64, 64, 4096);
  EXPECT_EQ(ll.protocol, ps::NcclProtocol::ll);
  EXPECT_NEAR(ll.latency, (6.6 + 63 * 5.0) * 1e-6, 1e-12);
  // Two ranks per node: the ring's own network row (LL 2.7 us) and the host's posting cost inside nodes.
  const auto two = ps::nccl_choice(hw, pw::OpKind::all_gather, ps::NcclAlgorithm::ring, 128, 64, 4096);
  EXPECT_NEAR(two.latency, (6.6 + 64 * 2.0 + 63 * 2.7) * 1e-6, 1e-12);
}
