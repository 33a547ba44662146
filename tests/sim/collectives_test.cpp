// Collective costs: a lone ring over p ranks on uniform links takes 2(p-1)/p·n/β + 2(p-1)α for an
// all-reduce and (p-1)/p·n/β + (p-1)α for reduce-scatter and all-gather (exact fidelity); `fast`
// stays within 2% of `exact` for large messages; two rings forced through one link each get half.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "tests/sim/iteration_time.hpp"
#include "tests/sim/one_collective.hpp"
#include "topology/topology.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

namespace {

constexpr double kBeta = 10e9, kAlpha = 2e-6;

// One node of p devices joined in a ring of links of β = 10 GB/s, α = 2 µs.
pt::Machine ring_machine(int p) {
  nlohmann::json links = nlohmann::json::array();
  for (int i = 0; i < (p == 2 ? 1 : p); ++i)  // two devices: one link, used in both directions
    links.push_back({{"between", {"gpu" + std::to_string(i), "gpu" + std::to_string((i + 1) % p)}},
                     {"GBps", kBeta / 1e9},
                     {"latency_us", kAlpha * 1e6}});
  nlohmann::json m = {
      {"name", "ring"},
      {"node",
       {{"device",
         {{"kind", "test"}, {"count", p}, {"peak_tflops", {{"bf16", 100}}}, {"memory_GB", 16}, {"memory_GBps", 1000}}},
        {"links", links}}},
      {"network", {{"topology", "none"}, {"nodes", 1}}},
      {"profile", {{"library", "nccl"}}}};
  return pt::parse_machine(m, "ring-machine");
}

// A program of one collective over all ranks ("data" axis) of `bytes`.
pw::Program one_collective(int p, pw::OpKind kind, double bytes) {
  return paratwin::test::one_collective(pw::Grid({{"pipe", 1}, {"data", p}}), p, kind, bytes);
}

double simulate_time(const pt::Machine& machine, const pw::Program& program, paratwin::sim::Fidelity fidelity) {
  paratwin::sim::SimOptions options;
  options.fidelity = fidelity;
  return paratwin::test::iteration_time(machine, program, options);
}

}  // namespace

TEST(Collectives, RingAllReduceMatchesTheFormula) {
  for (int p : {2, 4, 8}) {
    const double n = 64e6;
    const double expected = 2.0 * (p - 1) / p * n / kBeta + 2.0 * (p - 1) * kAlpha;
    const double t =
        simulate_time(ring_machine(p), one_collective(p, pw::OpKind::all_reduce, n), paratwin::sim::Fidelity::exact);
    EXPECT_NEAR(t, expected, 1e-9 * expected) << "p = " << p;
  }
}

TEST(Collectives, RingReduceScatterAndAllGatherMatchTheFormula) {
  const int p = 8;
  const double n = 64e6;
  const double expected = (p - 1.0) / p * n / kBeta + (p - 1) * kAlpha;
  for (auto kind : {pw::OpKind::reduce_scatter, pw::OpKind::all_gather}) {
    const double t = simulate_time(ring_machine(p), one_collective(p, kind, n), paratwin::sim::Fidelity::exact);
    EXPECT_NEAR(t, expected, 1e-9 * expected) << pw::to_string(kind);
  }
}

TEST(Collectives, FastFidelityWithinTwoPercentOfExactForLargeMessages) {
  const int p = 8;
  for (auto kind : {pw::OpKind::all_reduce, pw::OpKind::reduce_scatter, pw::OpKind::all_gather}) {
    const auto prog = one_collective(p, kind, 1e9);
    const double exact = simulate_time(ring_machine(p), prog, paratwin::sim::Fidelity::exact);
    const double fast = simulate_time(ring_machine(p), prog, paratwin::sim::Fidelity::fast);
    EXPECT_NEAR(fast / exact, 1.0, 0.02) << pw::to_string(kind);
  }
}

TEST(Collectives, TwoRingsThroughOneLinkEachGetHalf) {
  // Two nodes of two devices and one shared NIC each: the data-parallel groups {0, 2} and {1, 3} both
  // cross between the nodes through the same two NIC links.
  nlohmann::json m = {
      {"name", "two-nodes"},
      {"node",
       {{"device",
         {{"kind", "test"}, {"count", 2}, {"peak_tflops", {{"bf16", 100}}}, {"memory_GB", 16}, {"memory_GBps", 1000}}},
        {"routers", {"hub"}},
        {"links",
         {{{"between", {"gpu0", "hub"}}, {"GBps", 100}},
          {{"between", {"gpu1", "hub"}}, {"GBps", 100}},
          {{"between", {"nic0", "hub"}}, {"GBps", 100}}}},
        {"nics", {{{"name", "nic0"}, {"GBps", 10}, {"serves", {0, 1}}}}}}},
      {"network",
       {{"topology", "fat_tree"}, {"nodes", 2}, {"fat_tree", {{"down", {2}}, {"up", {1}}, {"link_GBps", 100}}}}},
      {"profile", {{"library", "nccl"}}}};
  const auto machine = pt::parse_machine(m, "two-nodes");
  const double n = 1e9;
  pw::Program prog = one_collective(2, pw::OpKind::all_reduce, n);
  prog.grid = pw::Grid({{"x", 2}, {"pipe", 1}, {"data", 2}});  // rings {0, 2} and {1, 3}
  prog.roles[0].ops[0].group = prog.grid.mask("data");
  prog.roles[0].ranks = 4;
  const double two = simulate_time(machine, prog, paratwin::sim::Fidelity::exact);
  // An all-reduce over two ranks moves n/2 bytes each way in each of its two steps. Alone, a ring would
  // take n/β through the 10 GB/s NICs; sharing both NIC directions with the other ring, 2n/β.
  EXPECT_NEAR(two, 2.0 * n / 10e9, 1e-4 * two);
}
