// PCCL in the analytical model, as in the engine (both ask sim::Tuner): AxoNN's z groups with one GCD
// per node run PCCL's inter-node recursive doubling and halving (Thesis, [singh2025dissertation] §6.2.3), faster than
// RCCL's ring for these latency-bound buffers, while the data all-reduce stays RCCL's (PCCL implements
// only all-gather and reduce-scatter, §6.2), so search ranks what simulate runs.
#include <gtest/gtest.h>

#include <string>

#include "sim/analytical_model.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"
#include "workloads/workload.hpp"

namespace ps = paratwin::sim;
namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;

namespace {

const ps::AxisCost& cost(const ps::AnalyticalEstimate& e, pw::OpKind kind, const std::string& group) {
  for (const auto& c : e.collectives)
    if (c.kind == kind && c.group == group) return c;
  throw std::logic_error("no " + std::string(pw::to_string(kind)) + " over " + group);
}

}  // namespace

TEST(PcclChoice, AnalyticalZGroupsOfOneGcdPerNodeRunRecursiveDoublingAndTheDataAllReduceStaysRccls) {
  // tests/e2e/good/tiny-axonn-z-across-nodes.json: x 4 and y 2 fill a Frontier node.
  auto w = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-gpt-3d.json");
  w.parallel.tensor.x = 4;
  w.parallel.tensor.z = 4;
  w.parallel.data = 2;
  w.placement.order = {"x", "y", "z", "pipe", "data"};
  w.placement.devices_per_node = 8;
  const pt::Topology topology(pt::resolve_machine("frontier").slice(8));
  ps::AnalyticalOptions rccl, pccl;
  rccl.library = "rccl";
  pccl.library = "pccl";
  const auto a = ps::estimate(w, topology, rccl), b = ps::estimate(w, topology, pccl);
  for (const auto kind : {pw::OpKind::all_gather, pw::OpKind::reduce_scatter}) {
    const double ring = cost(a, kind, "z").seconds, doubling = cost(b, kind, "z").seconds;
    std::printf("%s z: rccl ring %.4g s, pccl recursive %.4g s\n", pw::to_string(kind), ring, doubling);
    EXPECT_LT(doubling, 0.9 * ring) << pw::to_string(kind);
  }
  EXPECT_DOUBLE_EQ(cost(b, pw::OpKind::all_reduce, "data").seconds, cost(a, pw::OpKind::all_reduce, "data").seconds);
}
