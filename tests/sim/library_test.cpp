// Library profiles: Cray MPICH sends all of a node's traffic through one NIC ([singh2025dissertation] §6.1.2) and
// reduces on the CPU (§6.1.3); NCCL/RCCL use the NIC serving each device and reduce on the GPU.
#include <gtest/gtest.h>

#include "sim/collectives.hpp"
#include "sim/engine.hpp"
#include "tests/sim/iteration_time.hpp"
#include "tests/sim/one_collective.hpp"
#include "topology/topology.hpp"

namespace pw = paratwin::workloads;
namespace pt = paratwin::topology;

namespace {

// Eight data-parallel pairs across two Frontier nodes: GCD k of node 0 with GCD k of node 1, all at once.
pw::Program eight_rings(pw::OpKind kind, double bytes) {
  return paratwin::test::one_collective(pw::Grid({{"x", 8}, {"pipe", 1}, {"data", 2}}), 8, kind, bytes);
}

double run(const std::string& library, pw::OpKind kind) {
  paratwin::sim::SimOptions sim;
  sim.library = library;
  return paratwin::test::iteration_time(pt::resolve_machine("frontier").slice(2), eight_rings(kind, 1e9), sim,
                                        paratwin::sim::topology_options(library));
}

}  // namespace

TEST(Library, CrayMpichSharesOneNicPerNode) {
  // All-gather: no reduction. RCCL: two flows per NIC direction; Cray MPICH: eight through NIC 0.
  const double rccl = run("rccl", pw::OpKind::all_gather);
  const double mpich = run("cray-mpich", pw::OpKind::all_gather);
  // One ring step: half the gigabyte at half a NIC, plus RCCL's 39 µs per step (frontier.json).
  EXPECT_NEAR(rccl, 0.5e9 / (25e9 / 2) + 39e-6, 1e-4 * rccl);
  EXPECT_NEAR((mpich - 39e-6) / (rccl - 39e-6), 4.0, 0.01);
}

TEST(Library, CrayMpichReducesOnTheCpu) {
  // Reduce-scatter: the same transfers as the all-gather, plus the CPU reduction of the received half
  // (3 bytes of host memory traffic per byte reduced).
  const double ag = run("cray-mpich", pw::OpKind::all_gather);
  const double rs = run("cray-mpich", pw::OpKind::reduce_scatter);
  const double host_bw = pt::resolve_machine("frontier").node.host.memory_bandwidth;
  EXPECT_NEAR(rs - ag, 3 * 0.5e9 / host_bw, 1e-3 * rs);
  EXPECT_NEAR(run("rccl", pw::OpKind::reduce_scatter), run("rccl", pw::OpKind::all_gather), 1e-9);
}
