// Step plans of the collective algorithms: every byte a member sends is received by its peer in the
// same step, and each algorithm moves the volume its textbook cost says.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "sim/collectives.hpp"
#include "topology/machine.hpp"

namespace ps = paratwin::sim;
using paratwin::workloads::OpKind;

namespace {

struct Totals {
  double sent = 0, received = 0, reduced = 0, local = 0;
  size_t steps = 0;
};

// Plans every member, checks that step k's sends match the peers' step-k receives, and sums member 0.
Totals check_plan(OpKind kind, ps::Algorithm algorithm, const ps::GroupLayout& layout, double bytes,
                  ps::Fidelity fidelity = ps::Fidelity::exact) {
  const int32_t p = layout.size();
  std::vector<std::vector<ps::Step>> plans;
  for (int32_t me = 0; me < p; ++me) plans.push_back(ps::plan(kind, algorithm, layout, me, bytes, 0, fidelity));
  for (int32_t me = 0; me < p; ++me) {
    if (plans[static_cast<size_t>(me)].size() != plans[0].size()) {
      ADD_FAILURE() << "member " << me << " has " << plans[static_cast<size_t>(me)].size() << " steps, member 0 has "
                    << plans[0].size();
      return {};
    }
    for (size_t k = 0; k < plans[static_cast<size_t>(me)].size(); ++k)
      for (const auto& t : plans[static_cast<size_t>(me)][k].sends) {
        double matched = 0;
        for (const auto& r : plans[static_cast<size_t>(t.peer)][k].recvs)
          if (r.peer == me) matched += r.bytes;
        EXPECT_DOUBLE_EQ(matched, t.bytes) << "step " << k << ": " << me << " -> " << t.peer;
      }
  }
  Totals out;
  out.steps = plans[0].size();
  for (const auto& s : plans[0]) {
    for (const auto& t : s.sends) out.sent += t.bytes;
    for (const auto& t : s.recvs) out.received += t.bytes;
    out.reduced += s.reduce_bytes;
    out.local += s.local_bytes;
  }
  return out;
}

ps::GroupLayout nodes_of(int32_t nodes, int32_t per_node, std::vector<int32_t> channel_offsets = {}) {
  ps::GroupLayout layout;
  for (int32_t n = 0; n < nodes; ++n)
    for (int32_t k = 0; k < per_node; ++k) layout.node.push_back(n);
  layout.channel_offsets = std::move(channel_offsets);
  return layout;
}

}  // namespace

TEST(Algorithms, RecursiveHalvingAndDoublingMoveTheRingVolumeInLogSteps) {
  const double n = 64e6;
  for (int32_t p : {2, 8, 32}) {
    const auto layout = ps::GroupLayout::flat(p);
    int log2p = 0;
    while ((1 << log2p) < p) ++log2p;
    const auto rs = check_plan(OpKind::reduce_scatter, ps::Algorithm::recursive, layout, n);
    EXPECT_EQ(rs.steps, static_cast<size_t>(log2p));
    EXPECT_DOUBLE_EQ(rs.sent, (p - 1.0) / p * n);
    EXPECT_DOUBLE_EQ(rs.reduced, (p - 1.0) / p * n);
    const auto ag = check_plan(OpKind::all_gather, ps::Algorithm::recursive, layout, n);
    EXPECT_EQ(ag.steps, static_cast<size_t>(log2p));
    EXPECT_DOUBLE_EQ(ag.received, (p - 1.0) / p * n);
    const auto ar = check_plan(OpKind::all_reduce, ps::Algorithm::recursive, layout, n);
    EXPECT_EQ(ar.steps, static_cast<size_t>(2 * log2p));
    EXPECT_DOUBLE_EQ(ar.sent, 2 * (p - 1.0) / p * n);
  }
  EXPECT_THROW(ps::plan(OpKind::all_gather, ps::Algorithm::recursive, 6, 0, n, 0, ps::Fidelity::exact),
               std::invalid_argument);
}

TEST(Algorithms, DoubleBinaryTreeSendsAndReceivesTheBufferOncePerPhase) {
  const double n = 64e6;
  for (int32_t p : {2, 5, 16}) {
    const auto t = check_plan(OpKind::all_reduce, ps::Algorithm::tree, ps::GroupLayout::flat(p), n);
    EXPECT_EQ(t.steps, 2u);
  }
  // Every member is inside at most one of the two trees: it sends at most half the buffer up per tree
  // and receives at most a full buffer (two children of one tree) while reducing.
  for (int32_t me = 0; me < 16; ++me) {
    const auto steps = ps::plan(OpKind::all_reduce, ps::Algorithm::tree, 16, me, n, 0, ps::Fidelity::exact);
    double up = 0;
    for (const auto& s : steps[0].sends) up += s.bytes;
    EXPECT_LE(up, n);
    EXPECT_LE(steps[0].reduce_bytes, n + 1e-6) << me;
  }
}

// NCCL's tree over nodes: a chain inside each node, the two binary trees between the nodes entering
// at the chain's two ends, so a node sends at most half the buffer per tree to other nodes.
TEST(Algorithms, NodeAwareTreeChainsInsideNodesAndCrossesBetweenThemPerTree) {
  const double n = 64e6;
  const auto layout = nodes_of(4, 4);
  const auto t = check_plan(OpKind::all_reduce, ps::Algorithm::tree, layout, n);
  EXPECT_EQ(t.steps, 2u);
  for (int32_t node = 0; node < 4; ++node) {
    double out = 0;
    for (int32_t k = 0; k < 4; ++k) {
      const int32_t me = 4 * node + k;
      const auto steps = ps::plan(OpKind::all_reduce, ps::Algorithm::tree, layout, me, n, 0, ps::Fidelity::exact);
      for (const auto& s : steps[0].sends) {
        if (s.peer / 4 != node) {
          out += s.bytes;
        } else {
          EXPECT_EQ(std::abs(s.peer - me), 1) << "inside a node the tree is a chain";
        }
      }
      // Middle members of the chain only pass halves along it.
      if (k == 1 || k == 2) {
        EXPECT_EQ(steps[0].sends.size(), 2u);
      }
    }
    EXPECT_LE(out, n / 2 * 2);  // one parent per tree, half the buffer each
  }
  // The whole group's plans at once are every member's own plan.
  const auto all = ps::plan_group(OpKind::all_reduce, ps::Algorithm::tree, layout, n, 0, ps::Fidelity::fast);
  for (int32_t me = 0; me < 16; ++me) {
    const auto own = ps::plan(OpKind::all_reduce, ps::Algorithm::tree, layout, me, n, 0, ps::Fidelity::fast);
    ASSERT_EQ(all[static_cast<size_t>(me)].size(), own.size());
    for (size_t k = 0; k < own.size(); ++k) {
      EXPECT_EQ(all[static_cast<size_t>(me)][k].sends.size(), own[k].sends.size());
      EXPECT_EQ(all[static_cast<size_t>(me)][k].recvs.size(), own[k].recvs.size());
      EXPECT_DOUBLE_EQ(all[static_cast<size_t>(me)][k].reduce_bytes, own[k].reduce_bytes);
      for (size_t i = 0; i < own[k].sends.size(); ++i)
        EXPECT_EQ(all[static_cast<size_t>(me)][k].sends[i].peer, own[k].sends[i].peer);
    }
  }
  // One member per node: the plain double binary tree; depth log2(nodes) in latencies.
  const auto flat =
      ps::plan(OpKind::all_reduce, ps::Algorithm::tree, ps::GroupLayout::flat(16), 3, n, 0, ps::Fidelity::fast);
  EXPECT_EQ(flat[0].extra_latencies, 3);
}

TEST(Algorithms, RingChannelsLeaveEachNodeThroughDifferentMembers) {
  // 4 nodes of 8, 4 channels entering at 0, 2, 4, 6: the rings leave node 0 through members 7, 1, 3, 5
  // and every channel carries a quarter of the data.
  const auto layout = nodes_of(4, 8, {0, 2, 4, 6});
  const double n = 32e6;
  const auto ag = check_plan(OpKind::all_gather, ps::Algorithm::ring, layout, n);
  EXPECT_EQ(ag.steps, 31u);
  std::map<int32_t, double> leaving;  // member of node 0 -> bytes sent to node 1 in step 0
  for (int32_t me = 0; me < 8; ++me) {
    const auto steps = ps::plan(OpKind::all_gather, ps::Algorithm::ring, layout, me, n, 0, ps::Fidelity::exact);
    for (const auto& t : steps[0].sends)
      if (t.peer >= 8) leaving[me] += t.bytes;
  }
  ASSERT_EQ(leaving.size(), 4u);
  for (int32_t m : {7, 1, 3, 5}) EXPECT_DOUBLE_EQ(leaving[m], n / 32 / 4) << m;
  // The fast plan carries the same bytes.
  const auto fast = check_plan(OpKind::all_gather, ps::Algorithm::ring, layout, n, ps::Fidelity::fast);
  EXPECT_EQ(fast.steps, 1u);
  EXPECT_DOUBLE_EQ(fast.sent, ag.sent);
}

TEST(Algorithms, HierarchicalAllGatherIsInterNodeThenIntraNodeThenShuffle) {
  const auto layout = nodes_of(8, 4, {0, 2});  // 32 members
  const double n = 32e6;
  const auto ag = check_plan(OpKind::all_gather, ps::Algorithm::hierarchical, layout, n);
  // log2(8) = 3 recursive-doubling steps inter-node, then 3 ring steps intra-node.
  EXPECT_EQ(ag.steps, 6u);
  EXPECT_DOUBLE_EQ(ag.received, (8 - 1.0) / 32 * n + (4 - 1.0) / 4 * n);
  EXPECT_DOUBLE_EQ(ag.local, 2 * n);
  const auto first = ps::plan(OpKind::all_gather, ps::Algorithm::hierarchical, layout, 0, n, 0, ps::Fidelity::exact);
  EXPECT_EQ(first[0].sends[0].peer, 4);  // node 1, same place in its node
  EXPECT_EQ(first[3].sends[0].peer, 1);  // intra-node ring
  const auto rs = check_plan(OpKind::reduce_scatter, ps::Algorithm::hierarchical, layout, n);
  EXPECT_DOUBLE_EQ(rs.reduced, (4 - 1.0) / 4 * n + (8 - 1.0) / 32 * n);
  const auto ar = check_plan(OpKind::all_reduce, ps::Algorithm::hierarchical, layout, n);
  EXPECT_EQ(ar.steps, 12u);
  // Nodes that are not a power of two: ring between nodes.
  const auto odd = check_plan(OpKind::all_gather, ps::Algorithm::hierarchical, nodes_of(3, 4), n);
  EXPECT_EQ(odd.steps, 2u + 3u);
}

// One member per node (AxoNN's z groups on Frontier): PCCL's inter-node phase alone (Thesis §6.2.3),
// recursive doubling and halving, not a flat ring; the output already in member order, so no shuffle.
TEST(Algorithms, HierarchicalWithOneMemberPerNodeIsRecursiveDoublingAndHalving) {
  const double n = 8e6;
  const auto layout = nodes_of(8, 1);
  const auto ag = check_plan(OpKind::all_gather, ps::Algorithm::hierarchical, layout, n);
  EXPECT_EQ(ag.steps, 3u);  // log2(8), where a ring takes 7
  EXPECT_DOUBLE_EQ(ag.received, 7.0 / 8 * n);
  EXPECT_DOUBLE_EQ(ag.local, 0);
  const auto first = ps::plan(OpKind::all_gather, ps::Algorithm::hierarchical, layout, 0, n, 0, ps::Fidelity::exact);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].sends[0].peer, 1);  // distance 1, 2, 4
  EXPECT_EQ(first[1].sends[0].peer, 2);
  EXPECT_EQ(first[2].sends[0].peer, 4);
  const auto rs = check_plan(OpKind::reduce_scatter, ps::Algorithm::hierarchical, layout, n);
  EXPECT_EQ(rs.steps, 3u);
  EXPECT_DOUBLE_EQ(rs.reduced, 7.0 / 8 * n);
  const auto ar = check_plan(OpKind::all_reduce, ps::Algorithm::hierarchical, layout, n);
  EXPECT_EQ(ar.steps, 6u);
  // The same in fast fidelity: recursive steps are not aggregated.
  EXPECT_EQ(check_plan(OpKind::all_gather, ps::Algorithm::hierarchical, layout, n, ps::Fidelity::fast).steps, 3u);
  // Nodes that are not a power of two: a ring between them; uneven nodes: one ring.
  EXPECT_EQ(check_plan(OpKind::all_gather, ps::Algorithm::hierarchical, nodes_of(3, 1), n).steps, 2u);
  ps::GroupLayout uneven;
  uneven.node = {0, 0, 1};
  EXPECT_EQ(check_plan(OpKind::all_gather, ps::Algorithm::hierarchical, uneven, n).steps, 2u);
}

TEST(Algorithms, AllToAllPairwiseOrDirect) {
  const double n = 64e6;
  const auto pairwise = check_plan(OpKind::all_to_all, ps::Algorithm::pairwise, ps::GroupLayout::flat(8), n);
  EXPECT_EQ(pairwise.steps, 7u);
  EXPECT_DOUBLE_EQ(pairwise.sent, 7.0 / 8 * n);
  const auto direct = check_plan(OpKind::all_to_all, ps::Algorithm::direct, ps::GroupLayout::flat(8), n);
  EXPECT_EQ(direct.steps, 1u);
  EXPECT_DOUBLE_EQ(direct.received, 7.0 / 8 * n);
}

// NCCL's broadcast and reduce: a pipelined chain along the ring, every link carrying the buffer once;
// the chain's depth costs one chunk slot per hop.
TEST(Algorithms, PipelinedChainCarriesTheBufferOncePerLink) {
  const double chunk = 512.0 * 1024;
  for (int32_t p : {2, 5, 8}) {
    for (double n : {16 * chunk, 0.25 * chunk}) {
      const auto layout = ps::GroupLayout::flat(p);
      const double chunks = n > chunk ? n / chunk : 1;
      // Rooted at member 0: it sends everything and receives nothing; the last member only receives.
      const auto b = check_plan(OpKind::broadcast, ps::Algorithm::ring, layout, n);
      EXPECT_EQ(b.steps, static_cast<size_t>(chunks + p - 2)) << p << " members, " << n << " bytes";
      EXPECT_DOUBLE_EQ(b.sent, n);
      EXPECT_DOUBLE_EQ(b.received, 0);
      const auto r = check_plan(OpKind::reduce, ps::Algorithm::ring, layout, n);
      EXPECT_EQ(r.steps, b.steps);
      EXPECT_DOUBLE_EQ(r.received, n);
      EXPECT_DOUBLE_EQ(r.reduced, n);
      EXPECT_DOUBLE_EQ(r.sent, 0);
      // Fast fidelity: one step, the pipeline fill added to the buffer, p - 1 hops of latency.
      const auto f = ps::plan(OpKind::broadcast, ps::Algorithm::ring, layout, 1, n, 0, ps::Fidelity::fast);
      ASSERT_EQ(f.size(), 1u);
      EXPECT_EQ(f[0].extra_latencies, p - 2);
      EXPECT_DOUBLE_EQ(f[0].recvs.at(0).bytes, n + (p - 2) * std::min(n, chunk));
    }
  }
  // One chain per channel: a member's depth differs from channel to channel, and every channel's
  // slots still match its sender's.
  ps::GroupLayout channels;
  channels.node = {0, 0, 0, 0, 1, 1, 1, 1};
  channels.channel_offsets = {0, 1, 2, 3};
  for (auto kind : {OpKind::broadcast, OpKind::reduce}) {
    const auto c = check_plan(kind, ps::Algorithm::ring, channels, 16 * chunk);
    EXPECT_DOUBLE_EQ(kind == OpKind::broadcast ? c.sent : c.received, 16 * chunk);
  }
  // A middle member forwards each chunk one slot after it arrives.
  const auto mid = ps::plan(OpKind::broadcast, ps::Algorithm::ring, 4, 2, 2 * chunk, 1, ps::Fidelity::exact);
  ASSERT_EQ(mid.size(), 4u);
  EXPECT_TRUE(mid[0].recvs.size() == 1 && mid[0].sends.empty());
  EXPECT_TRUE(mid[1].recvs.size() == 1 && mid[1].sends.size() == 1);
  EXPECT_TRUE(mid[2].recvs.empty() && mid[2].sends.size() == 1);
}

TEST(Algorithms, LibrariesChooseTheirAlgorithms) {
  EXPECT_EQ(ps::default_algorithm(OpKind::all_gather, "rccl"), ps::Algorithm::ring);
  EXPECT_EQ(ps::default_algorithm(OpKind::reduce_scatter, "pccl"), ps::Algorithm::hierarchical);
  EXPECT_EQ(ps::default_algorithm(OpKind::all_gather, "pccl"), ps::Algorithm::hierarchical);
  // PCCL implements all-gather and reduce-scatter only (Thesis §6.2): the rest is the vendor library's.
  EXPECT_EQ(ps::default_algorithm(OpKind::all_reduce, "pccl"), ps::Algorithm::ring);
  const auto frontier = paratwin::topology::resolve_machine("frontier");
  const auto perlmutter = paratwin::topology::resolve_machine("perlmutter");
  EXPECT_EQ(ps::library_running(OpKind::all_reduce, "pccl", frontier), "rccl");
  EXPECT_EQ(ps::library_running(OpKind::broadcast, "pccl", perlmutter), "nccl");
  EXPECT_EQ(ps::library_running(OpKind::all_gather, "pccl", frontier), "pccl");
  EXPECT_EQ(ps::library_running(OpKind::all_reduce, "cray-mpich", frontier), "cray-mpich");
  EXPECT_EQ(ps::default_algorithm(OpKind::broadcast, "nccl"), ps::Algorithm::ring);
  EXPECT_EQ(ps::default_algorithm(OpKind::reduce, "rccl"), ps::Algorithm::ring);
  EXPECT_EQ(ps::default_algorithm(OpKind::broadcast, "cray-mpich"), ps::Algorithm::binomial_tree);
  EXPECT_FALSE(ps::supports(ps::Algorithm::tree, OpKind::all_gather));
  EXPECT_THROW(ps::plan(OpKind::all_gather, ps::Algorithm::tree, 4, 0, 1e6, 0, ps::Fidelity::exact),
               std::invalid_argument);
  EXPECT_EQ(ps::parse_algorithm("hierarchical"), ps::Algorithm::hierarchical);
  EXPECT_FALSE(ps::parse_algorithm("butterfly").has_value());
}

// RCCL runs each ring both ways (GroupLayout::counter_rotating): every channel's ring is followed by
// its reverse, each carrying half the channel's share, and a member sends to both neighbours; a ring of
// two members is its own reverse.
TEST(Algorithms, CounterRotatingRingsRunEachRingBothWays) {
  auto layout = nodes_of(2, 4, {0, 1});
  layout.counter_rotating = true;
  const auto orders = ps::ring_orders(layout);
  ASSERT_EQ(orders.size(), 4u);
  for (size_t c = 0; c < orders.size(); c += 2)
    EXPECT_EQ(orders[c + 1], std::vector<int32_t>(orders[c].rbegin(), orders[c].rend()));
  const double n = 64e6;
  const auto one_way = check_plan(OpKind::all_gather, ps::Algorithm::ring, nodes_of(2, 4, {0, 1}), n);
  const auto both = check_plan(OpKind::all_gather, ps::Algorithm::ring, layout, n);
  EXPECT_EQ(both.steps, one_way.steps);
  EXPECT_DOUBLE_EQ(both.sent, one_way.sent);
  const auto first = ps::plan(OpKind::all_gather, ps::Algorithm::ring, layout, 0, n, -1, ps::Fidelity::exact);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front().sends.size(), 4u);  // both neighbours of member 0 on each channel's ring pair

  auto pair = ps::GroupLayout::flat(2);
  pair.counter_rotating = true;
  EXPECT_EQ(ps::ring_orders(pair).size(), 1u);
}

// NCCL's PAT (src/include/collectives.h, v2.23+): ceil(log2 p) steps of doubling distance, any p, moving
// what a ring moves ((p - 1)/p of the buffer per member); the reduce-scatter reduces all it receives and
// runs the distances falling.
TEST(Algorithms, PatMovesTheRingVolumeInLogStepsForAnyGroup) {
  const double n = 64e6;
  for (int32_t p : {2, 5, 8, 12, 1024}) {
    const auto layout = ps::GroupLayout::flat(p);
    int log2p = 0;
    while ((1 << log2p) < p) ++log2p;
    const auto ag = check_plan(OpKind::all_gather, ps::Algorithm::pat, layout, n);
    EXPECT_EQ(ag.steps, static_cast<size_t>(log2p)) << p;
    EXPECT_NEAR(ag.sent, (p - 1.0) / p * n, 1e-6 * n) << p;
    EXPECT_NEAR(ag.received, (p - 1.0) / p * n, 1e-6 * n) << p;
    EXPECT_EQ(ag.reduced, 0);
    const auto rs = check_plan(OpKind::reduce_scatter, ps::Algorithm::pat, layout, n);
    EXPECT_EQ(rs.steps, static_cast<size_t>(log2p)) << p;
    EXPECT_NEAR(rs.sent, (p - 1.0) / p * n, 1e-6 * n) << p;
    EXPECT_NEAR(rs.reduced, (p - 1.0) / p * n, 1e-6 * n) << p;
  }
  // Step 0 of the all-gather: one chunk to the previous rank; the reduce-scatter's last step mirrors it.
  const auto ag = ps::plan(OpKind::all_gather, ps::Algorithm::pat, 8, 3, n, -1, ps::Fidelity::fast);
  ASSERT_EQ(ag.size(), 3u);
  EXPECT_EQ(ag[0].sends[0].peer, 2);
  EXPECT_EQ(ag[2].sends[0].peer, 7);
  EXPECT_DOUBLE_EQ(ag[2].sends[0].bytes, 4 * n / 8);
  const auto rs = ps::plan(OpKind::reduce_scatter, ps::Algorithm::pat, 8, 3, n, -1, ps::Fidelity::fast);
  EXPECT_EQ(rs[2].sends[0].peer, 4);
  EXPECT_FALSE(ps::supports(ps::Algorithm::pat, OpKind::all_reduce));
  EXPECT_EQ(ps::parse_algorithm("pat"), ps::Algorithm::pat);
}
