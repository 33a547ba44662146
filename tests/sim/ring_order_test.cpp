// The ring a library builds inside a node (sim/ring_order.hpp) follows the fastest links.
#include "sim/ring_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "topology/topology.hpp"

namespace pt = paratwin::topology;

TEST(RingOrder, FrontierNodeRingBeatsIndexOrder) {
  const pt::Topology topology(pt::resolve_machine("frontier").slice(1));
  std::vector<int64_t> devices(8);
  std::iota(devices.begin(), devices.end(), 0);
  const auto perm = paratwin::sim::fastest_ring(topology, devices);
  ASSERT_EQ(perm.size(), 8u);
  EXPECT_EQ(perm.front(), 0);
  auto sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int32_t k = 0; k < 8; ++k) EXPECT_EQ(sorted[static_cast<size_t>(k)], k);  // a permutation
  std::vector<int64_t> ring;
  for (int32_t p : perm) ring.push_back(devices[static_cast<size_t>(p)]);
  const double best = topology.rings({ring}).bandwidth;
  const double by_index = topology.rings({devices}).bandwidth;
  // Index order crosses GCD pairs without a direct Infinity Fabric link (two hops); the chosen ring is
  // at least as fast per flow and uses one link per edge.
  EXPECT_GE(best, by_index * (1 - 1e-12));
  EXPECT_GE(best, 50e9 * (1 - 1e-12));
  int links = 0, index_links = 0;
  for (size_t k = 0; k < ring.size(); ++k) {
    links += topology.path(ring[k], ring[(k + 1) % ring.size()]).links;
    index_links += topology.path(devices[k], devices[(k + 1) % devices.size()]).links;
  }
  EXPECT_EQ(links, 8);
  EXPECT_GT(index_links, links);
}

TEST(RingOrder, SmallGroupsKeepTheirOrder) {
  const pt::Topology topology(pt::resolve_machine("frontier").slice(1));
  EXPECT_EQ(paratwin::sim::fastest_ring(topology, {0, 5, 3}), (std::vector<int32_t>{0, 1, 2}));
}
