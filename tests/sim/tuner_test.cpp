// The NCCL/RCCL tuner: trees for all-reduces whose ring latency dominates (many nodes, small buffers),
// rings for large buffers on few nodes; nothing but rings inside a node; forced algorithms win.
#include "sim/tuner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace ps = paratwin::sim;
namespace pt = paratwin::topology;
using paratwin::workloads::OpKind;

namespace {

ps::GroupLayout nodes_of(int32_t nodes, int32_t per_node) {
  ps::GroupLayout layout;
  for (int32_t n = 0; n < nodes; ++n)
    for (int32_t k = 0; k < per_node; ++k) layout.node.push_back(n);
  return layout;
}

}  // namespace

TEST(Tuner, TreesForManyNodesRingsForLargeBuffersOnFewNodes) {
  const pt::Topology topology(pt::resolve_machine("perlmutter").slice(128));
  ps::Tuner tuner(topology, "nccl");
  const auto wide = nodes_of(128, 1);
  // 16 MB over 128 nodes: a ring pays 254 steps of latency, a tree 2 x 7.
  EXPECT_EQ(tuner.choose(OpKind::all_reduce, wide, 16e6), ps::Algorithm::tree);
  EXPECT_LT(tuner.estimate(OpKind::all_reduce, ps::Algorithm::tree, wide, 16e6),
            tuner.estimate(OpKind::all_reduce, ps::Algorithm::ring, wide, 16e6));
  // 1 GB over 2 nodes of 4, one ring per NIC (NCCL's channels): the bandwidth terms decide and the
  // rings spread over all four NICs.
  auto narrow = nodes_of(2, 4);
  narrow.channel_offsets = {0, 1, 2, 3};
  EXPECT_EQ(tuner.choose(OpKind::all_reduce, narrow, 1e9), ps::Algorithm::ring);
  // Inside one node, and for the other kinds, the library's default.
  EXPECT_EQ(tuner.choose(OpKind::all_reduce, nodes_of(1, 4), 1e3), ps::Algorithm::ring);
  EXPECT_EQ(tuner.choose(OpKind::all_gather, wide, 16e6), ps::Algorithm::ring);
  EXPECT_EQ(tuner.choose(OpKind::broadcast, wide, 16e6), ps::Algorithm::ring);
}

TEST(Tuner, OnlyTheGpuLibrariesTuneAndForcedAlgorithmsWin) {
  const pt::Topology topology(pt::resolve_machine("perlmutter").slice(128));
  const auto wide = nodes_of(128, 1);
  ps::Tuner mpi(topology, "mpi");
  EXPECT_EQ(mpi.choose(OpKind::all_reduce, wide, 16e6), ps::Algorithm::ring);
  ps::Tuner forced(topology, "nccl", {{OpKind::all_reduce, ps::Algorithm::recursive}});
  EXPECT_EQ(forced.choose(OpKind::all_reduce, wide, 16e6), ps::Algorithm::recursive);
}

TEST(Tuner, TreeBandwidthCorrectedAsNcclDoes) {
  // NCCL src/graph/tuning.cc: a tree reaches 0.9 of its bus bandwidth, and only half of that for
  // buffers of 128 KiB to 4 MiB (the Simple protocol's correction table); none from 256 MiB on.
  // Without NCCL's protocol tables (which would take LL for the small buffer): the profile's step.
  auto machine = pt::resolve_machine("perlmutter");
  machine.profile.nccl.reset();
  const pt::Topology topology(machine.slice(128));
  ps::Tuner tuner(topology, "nccl");
  const auto wide = nodes_of(128, 1);
  // The latency term does not depend on the size: differences of two estimates in one correction
  // bucket leave seconds per byte.
  const auto bandwidth_seconds = [&](double bytes) {
    return tuner.estimate(OpKind::all_reduce, ps::Algorithm::tree, wide, bytes);
  };
  const double small = 1 << 20, large = 1 << 30;  // 1 MiB: factor 0.9 x 0.5; 1 GiB: 0.9
  const double per_byte_small = (bandwidth_seconds(small * 1.5) - bandwidth_seconds(small)) / (small * 0.5);
  const double per_byte_large = (bandwidth_seconds(large * 1.5) - bandwidth_seconds(large)) / (large * 0.5);
  EXPECT_NEAR(per_byte_small / per_byte_large, 2.0, 1e-9);
}

TEST(Tuner, TreeChainThroughAPcieNodeCarriesBothTrees) {
  // Frontera's GPUs hang off their sockets' root complexes: tree A's and tree B's chains through a
  // node cross each GPU's link twice per direction, so a node-filling tree's intra-node phase runs
  // at half the PCIe rate; on Perlmutter's NVLink mesh each chain edge has links of its own.
  const auto frontera = pt::resolve_machine("frontera");
  const pt::Topology topology(frontera.slice(4));
  ps::Tuner tuner(topology, "nccl");
  const double link = frontera.node.links.front().bandwidth;  // a GPU's PCIe link
  // The chain alone (one node's four GPUs): half the buffer over half a link per phase; 1 GiB, so no
  // size correction and a negligible latency.
  const double bytes = 1 << 30;
  const double phase = bytes / 2 / (link / 2);
  EXPECT_NEAR(tuner.estimate(OpKind::all_reduce, ps::Algorithm::tree, nodes_of(1, 4), bytes), 2 * phase / 0.9,
              0.01 * phase);
}

TEST(Tuner, RingLatencyPlateauForLargeMultiNodeAllReduces) {
  auto machine = pt::resolve_machine("perlmutter");
  machine.profile.nccl.reset();  // the profile's step cost, Simple's plateau
  const pt::Topology topology(machine.slice(128));
  ps::Tuner tuner(topology, "nccl");
  const auto wide = nodes_of(128, 1);
  // Below 128/16 x 64 KiB = 512 KiB the ring pays its plain latency; from there on 1.9 times it.
  const double below = 400e3, above = 600e3;
  // Seconds per byte from two large buffers, both on the plateau.
  const double per_byte = (tuner.estimate(OpKind::all_reduce, ps::Algorithm::ring, wide, 2e9) -
                           tuner.estimate(OpKind::all_reduce, ps::Algorithm::ring, wide, 1e9)) /
                          1e9;
  const double latency_below = tuner.estimate(OpKind::all_reduce, ps::Algorithm::ring, wide, below) - per_byte * below;
  const double latency_above = tuner.estimate(OpKind::all_reduce, ps::Algorithm::ring, wide, above) - per_byte * above;
  EXPECT_NEAR(latency_above / latency_below, 1.9, 1e-6);
}

// With NCCL's tables (Perlmutter's profile) the tuner's latency is NCCL's for the protocol it picks:
// a small all-reduce over 128 nodes costs the LL ring's or tree's latency, not 2(p-1) profile steps.
TEST(Tuner, NcclTablesPriceTheLatency) {
  const pt::Topology topology(pt::resolve_machine("perlmutter").slice(128));
  ps::Tuner tuner(topology, "nccl");
  const auto wide = nodes_of(128, 1);
  const auto costs = ps::StepCosts::of(topology.machine(), "nccl");
  for (const auto algorithm : {ps::Algorithm::ring, ps::Algorithm::tree}) {
    const auto choice = costs.nccl_choice_for(OpKind::all_reduce, algorithm, wide, 4096);
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->protocol, ps::NcclProtocol::ll);
    const double estimate = tuner.estimate(OpKind::all_reduce, algorithm, wide, 4096);
    EXPECT_GE(estimate, choice->latency);
    EXPECT_LT(estimate, choice->latency * 1.2);  // 4 KiB: the bandwidth term is small
  }
}

// PCCL implements all-gather and reduce-scatter only (Thesis §6.2): its all-reduce is the vendor
// library's, tuned the same way (RCCL's on Frontier, NCCL's on Perlmutter), and its own collectives
// are hierarchical whatever the layout.
TEST(Tuner, PcclLeavesTheAllReduceToTheVendorLibrary) {
  for (const auto& [machine, vendor] : {std::pair{"frontier", "rccl"}, std::pair{"perlmutter", "nccl"}}) {
    const pt::Topology topology(pt::resolve_machine(machine).slice(64));
    ps::Tuner pccl(topology, "pccl"), own(topology, vendor);
    for (const auto& layout : {nodes_of(64, 1), nodes_of(8, 4), nodes_of(2, 4)})
      for (double bytes : {1e4, 16e6, 1e9}) {
        EXPECT_EQ(pccl.choose(OpKind::all_reduce, layout, bytes), own.choose(OpKind::all_reduce, layout, bytes))
            << machine << ", " << layout.size() << " members, " << bytes << " B";
        EXPECT_EQ(pccl.choose(OpKind::all_gather, layout, bytes), ps::Algorithm::hierarchical);
        EXPECT_EQ(pccl.choose(OpKind::reduce_scatter, layout, bytes), ps::Algorithm::hierarchical);
      }
    EXPECT_EQ(pccl.choose(OpKind::all_reduce, nodes_of(64, 1), 16e6), ps::Algorithm::tree) << machine;
  }
}

// NCCL v2.23+ runs PAT for an all-gather or reduce-scatter over one rank per node when its cost model
// says so (small buffers over many nodes); older releases and groups of several ranks per node run rings.
TEST(Tuner, PatForOneRankPerNodeFromNccl223) {
  for (const char* version : {"2.15", "2.22", "2.23", "2.27"}) {
    auto machine = pt::resolve_machine("perlmutter");
    machine.profile.nccl->tuning = version;
    const pt::Topology topology(machine.slice(256));
    ps::Tuner tuner(topology, "nccl");
    const bool pat = std::string(version) >= "2.23";
    const auto wide = nodes_of(256, 1);
    const auto expected = pat ? ps::Algorithm::pat : ps::Algorithm::ring;
    EXPECT_EQ(tuner.choose(OpKind::all_gather, wide, 16 << 20), expected) << version;
    EXPECT_EQ(tuner.choose(OpKind::reduce_scatter, wide, 16 << 20), expected) << version;
    EXPECT_EQ(tuner.choose(OpKind::all_gather, nodes_of(128, 2), 16 << 20), ps::Algorithm::ring) << version;
    EXPECT_EQ(tuner.choose(OpKind::all_gather, nodes_of(16, 1), 4.0 * (1 << 30)), ps::Algorithm::ring) << version;
    EXPECT_EQ(std::isfinite(tuner.estimate(OpKind::all_gather, ps::Algorithm::pat, wide, 16 << 20)), pat) << version;
    // PCCL runs its own all-gather whatever NCCL would.
    ps::Tuner pccl(topology, "pccl");
    EXPECT_EQ(pccl.choose(OpKind::all_gather, wide, 16 << 20), ps::Algorithm::hierarchical) << version;
  }
}
