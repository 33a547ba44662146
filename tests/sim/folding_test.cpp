// Folding (fast fidelity at scale): one actor stands for a node's ranks (and, folded by replica, for
// that node in every data-parallel replica); its phases carry the transfers of every rank it stands
// for, and collectives inside a node are timed on the node's links. It must divide the actors and
// predict within 3 % of simulating every rank; fast fidelity itself within 5 % of exact.

#include <gtest/gtest.h>

#include "sim/engine.hpp"
#include "tests/sim/four_d.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;
namespace ps = paratwin::sim;

namespace {

// {iteration time, actors, mean exposed communication}.
std::vector<double> simulate(const pw::Program& program, ps::Fidelity fidelity, bool fold,
                             ps::FoldBy by = ps::FoldBy::node) {
  return paratwin::test::run_simulation([&] {
    const pt::Topology topology(pt::resolve_machine("frontier").slice((program.grid.size() + 7) / 8));
    ps::SimOptions options;
    options.fidelity = fidelity;
    options.fold = fold;
    options.fold_by = by;
    const auto r = ps::simulate(program, topology, options);
    double exposed = 0;
    for (const auto& t : r.ranks) exposed += t.exposed_comm;
    return std::vector<double>{r.iteration_time, static_cast<double>(r.actors),
                               exposed / static_cast<double>(r.ranks.size())};
  });
}

}  // namespace

TEST(Folding, PredictsWithinThreePercentOfEveryRank) {
  for (const auto& [x, y, z] : {std::array<int64_t, 3>{2, 2, 2}, std::array<int64_t, 3>{4, 1, 2}}) {
    const auto program = paratwin::test::four_d(x, y, z, 4, true);
    const auto every = simulate(program, ps::Fidelity::fast, false);
    const auto by_node = simulate(program, ps::Fidelity::fast, true, ps::FoldBy::node);
    const auto by_replica = simulate(program, ps::Fidelity::fast, true, ps::FoldBy::replica);
    ASSERT_EQ(every.size(), 3u);
    ASSERT_EQ(by_node.size(), 3u);
    ASSERT_EQ(by_replica.size(), 3u);
    EXPECT_EQ(every[1], 32);
    EXPECT_EQ(by_node[1], 4);     // 32 GCDs on 4 nodes
    EXPECT_EQ(by_replica[1], 1);  // each replica is one node
    EXPECT_NEAR(by_node[0] / every[0], 1.0, 0.03) << "x=" << x << " y=" << y << " z=" << z;
    EXPECT_NEAR(by_replica[0] / every[0], 1.0, 0.03) << "x=" << x << " y=" << y << " z=" << z;
    std::printf(
        "x=%lld y=%lld z=%lld data=4: every rank %.6g s, by node %.6g s (%+.2f %%), by replica %.6g s "
        "(%+.2f %%); exposed %.4g / %.4g / %.4g s\n",
        static_cast<long long>(x), static_cast<long long>(y), static_cast<long long>(z), every[0], by_node[0],
        100 * (by_node[0] / every[0] - 1), by_replica[0], 100 * (by_replica[0] / every[0] - 1), every[2], by_node[2],
        by_replica[2]);
  }
}

TEST(Folding, ReplicasSpanningNodesFoldToOneNodesWorth) {
  // z = 2 across nodes: a replica of x=4 y=2 z=2 covers two nodes, so four replicas fold into two actors.
  const auto program = paratwin::test::four_d(4, 2, 2, 4, true);
  const auto every = simulate(program, ps::Fidelity::fast, false);
  const auto by_replica = simulate(program, ps::Fidelity::fast, true, ps::FoldBy::replica);
  ASSERT_EQ(by_replica.size(), 3u);
  EXPECT_EQ(by_replica[1], 2);
  EXPECT_NEAR(by_replica[0] / every[0], 1.0, 0.03);
  std::printf("x=4 y=2 z=2 data=4: every rank %.6g s, by replica %.6g s (%+.2f %%)\n", every[0], by_replica[0],
              100 * (by_replica[0] / every[0] - 1));
}

// Folded by replica, a phase carries every replica's transfers but lists one copy of the replicas'
// own node and NIC links (each counted as on its busiest copy): they carry equal loads, so the
// solver's answer must not move, with far fewer route entries.
TEST(Folding, OneCopyOfTheReplicasOwnLinksPredictsTheSame) {
  for (const auto& [x, y, z] : {std::array<int64_t, 3>{4, 2, 2}, std::array<int64_t, 3>{2, 2, 4}}) {
    const auto program = paratwin::test::four_d(x, y, z, 4, true);
    const auto run = [&](bool one_copy) {
      return paratwin::test::run_simulation([&] {
        const pt::Topology topology(pt::resolve_machine("frontier").slice((program.grid.size() + 7) / 8));
        ps::SimOptions options;
        options.fidelity = ps::Fidelity::fast;
        options.fold = true;
        options.one_copy_of_replica_links = one_copy;
        const auto r = ps::simulate(program, topology, options);
        return std::vector<double>{r.iteration_time, static_cast<double>(r.flows), static_cast<double>(r.transfers)};
      });
    };
    const auto every_copy = run(false), one_copy = run(true);
    ASSERT_EQ(every_copy.size(), 3u);
    ASSERT_EQ(one_copy.size(), 3u);
    EXPECT_NEAR(one_copy[0] / every_copy[0], 1.0, 1e-3) << "x=" << x << " y=" << y << " z=" << z;
    EXPECT_EQ(one_copy[2], every_copy[2]);  // the same transfers, in fewer flows
    EXPECT_LT(one_copy[1], every_copy[1]);
    std::printf("x=%lld y=%lld z=%lld data=4: every copy %.9g s in %.0f flows, one copy %.9g s in %.0f flows\n",
                static_cast<long long>(x), static_cast<long long>(y), static_cast<long long>(z), every_copy[0],
                every_copy[1], one_copy[0], one_copy[1]);
  }
}

// Megatron PTD-P on a rail-optimized fat tree (DGX H100): a node per pipeline stage of a replica, so the
// pipeline messages cross the network inside each replica. Folded by replica, a message's phase carries
// every replica's transfers but lists one copy of the links that belong to a node — its NIC links and
// the fat tree's links from its NICs' ports to their leaf switches: the same answer, with a fraction of
// the route entries.
TEST(Folding, OneCopyOfTheReplicasPortLinksPredictsTheSame) {
  const nlohmann::json j = {
      {"name", "ptdp-fat-tree"},
      {"model", {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"seq_len", 2048}, {"vocab", 32000}}},
      {"training", {{"global_batch", 32}, {"micro_batch", 1}, {"dtype", "bf16"}, {"checkpointing", "selective"}}},
      {"parallelism",
       {{"data", {{"size", 4}}},
        {"tensor", {{"mode", "megatron"}, {"size", 8}}},
        {"sequence_parallel", true},
        {"pipeline", {{"stages", 4}, {"schedule", "1f1b"}}}}},
      {"optimizations", {{"overlap_gradient_sync", true}}}};
  const auto program = pw::lower(pw::parse_workload(j, "ptdp-fat-tree"));
  const auto run = [&](bool fold, bool one_copy) {
    return paratwin::test::run_simulation([&] {
      const pt::Topology topology(pt::resolve_machine("dgx-h100").slice(16));
      ps::SimOptions options;
      options.fidelity = ps::Fidelity::fast;
      options.fold = fold;
      options.one_copy_of_replica_links = one_copy;
      const auto r = ps::simulate(program, topology, options);
      return std::vector<double>{r.iteration_time, static_cast<double>(r.route_entries),
                                 static_cast<double>(r.transfers), static_cast<double>(r.actors)};
    });
  };
  const auto every_rank = run(false, true), every_copy = run(true, false), one_copy = run(true, true);
  ASSERT_EQ(every_copy.size(), 4u);
  ASSERT_EQ(one_copy.size(), 4u);
  ASSERT_EQ(every_rank.size(), 4u);
  EXPECT_EQ(one_copy[3], 4);  // one actor per stage
  EXPECT_NEAR(one_copy[0] / every_copy[0], 1.0, 1e-6);
  EXPECT_EQ(one_copy[2], every_copy[2]);
  EXPECT_LT(one_copy[1], every_copy[1] / 3);  // four replicas' own links listed once
  EXPECT_NEAR(one_copy[0] / every_rank[0], 1.0, 0.01);
  std::printf(
      "t8 p4 d4 on 16 DGX H100 nodes: every rank %.9g s, folded with every copy %.9g s (%.0f route entries), "
      "one copy %.9g s (%.0f)\n",
      every_rank[0], every_copy[0], every_copy[1], one_copy[0], one_copy[1]);
}

// A folded node's tensor-parallel collectives are timed in closed form; overlapped with compute
// (overlap_tensor_comm) they must slow it as the simulated ones do on a machine whose profile has
// compute_slowdown_communicating (DGX H100: 15.9 %). Before they did, this fold was 2-3 % fast.
TEST(Folding, ClosedFormNodeCollectivesSlowTheComputeBesideThem) {
  const nlohmann::json j = {
      {"name", "ptdp-overlapped-tensor"},
      {"model", {{"layers", 8}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 2048}, {"vocab", 32000}}},
      {"training", {{"global_batch", 16}, {"micro_batch", 1}, {"dtype", "bf16"}, {"checkpointing", "none"}}},
      {"parallelism",
       {{"data", {{"size", 2}, {"zero", 1}}},
        {"tensor", {{"mode", "megatron"}, {"size", 8}}},
        {"sequence_parallel", true},
        {"pipeline", {{"stages", 2}, {"schedule", "1f1b"}}}}},
      {"optimizations", {{"overlap_gradient_sync", true}, {"overlap_tensor_comm", true}}}};
  const auto program = pw::lower(pw::parse_workload(j, "ptdp-overlapped-tensor"));
  const auto run = [&](bool fold) {
    return paratwin::test::run_simulation([&] {
      const pt::Topology topology(pt::resolve_machine("dgx-h100").slice(4));
      ps::SimOptions options;
      options.fidelity = ps::Fidelity::fast;
      options.fold = fold;
      const auto r = ps::simulate(program, topology, options);
      return std::vector<double>{r.iteration_time, static_cast<double>(r.actors)};
    });
  };
  const auto every_rank = run(false), folded = run(true);
  ASSERT_EQ(every_rank.size(), 2u);
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(every_rank[1], 32);
  EXPECT_LT(folded[1], 32);
  EXPECT_NEAR(folded[0] / every_rank[0], 1.0, 0.002);
  std::printf(
      "t8 p2 d2, tensor collectives overlapped, on 4 DGX H100 nodes: every rank %.9g s, folded %.9g s (%+.3f %%)\n",
      every_rank[0], folded[0], 100 * (folded[0] / every_rank[0] - 1));
}

// Fast fidelity (one SimGrid activity per phase and node pair, a phase starting when its last member
// arrives) against exact (one transfer per algorithm step and peer, rendezvous pair by pair).
TEST(Fidelity, FastWithinFivePercentOfExactOverAWholeIteration) {
  for (const auto& [x, y, z] : {std::array<int64_t, 3>{2, 2, 2}, std::array<int64_t, 3>{4, 1, 2}}) {
    const auto program = paratwin::test::four_d(x, y, z, 2, true);
    const auto exact = simulate(program, ps::Fidelity::exact, false);
    const auto fast = simulate(program, ps::Fidelity::fast, false);
    ASSERT_EQ(exact.size(), 3u);
    ASSERT_EQ(fast.size(), 3u);
    EXPECT_NEAR(fast[0] / exact[0], 1.0, 0.05) << "x=" << x << " y=" << y << " z=" << z;
    std::printf("x=%lld y=%lld z=%lld data=2: exact %.6g s, fast %.6g s (%+.2f %%); exposed %.4g vs %.4g s\n",
                static_cast<long long>(x), static_cast<long long>(y), static_cast<long long>(z), exact[0], fast[0],
                100 * (fast[0] / exact[0] - 1), exact[2], fast[2]);
  }
}
