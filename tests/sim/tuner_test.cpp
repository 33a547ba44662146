// The NCCL/RCCL tuner: trees for all-reduces whose ring latency dominates (many nodes, small buffers),
// rings for large buffers on few nodes; nothing but rings inside a node; forced algorithms win.
#include "sim/tuner.hpp"

#include <gtest/gtest.h>

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
