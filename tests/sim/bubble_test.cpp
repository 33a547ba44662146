// With free communication the measured pipeline bubble equals [narayanan2021megatron]'s (p-1)/m for GPipe and 1F1B
// and (p-1)/(v·m) for the interleaved schedule (§2.2), to 1e-6.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

// Every transformer-layer GEMM costs its FLOPs at 1 TFLOP/s; everything else (embedding, logits,
// element-wise work, the optimizer) is free, so all stages are equal as the formula assumes.
double layer_gemms_only(const pw::Op& op) {
  return op.kind == pw::OpKind::gemm && op.layer >= 0 ? op.flops / 1e12 : 0.0;
}

double measured_bubble(const std::string& schedule, int64_t chunks, int64_t micro_batches) {
  nlohmann::json j = {{"name", "bubble"},
                      {"model", {{"layers", 16}, {"hidden", 256}, {"heads", 8}, {"seq_len", 64}, {"vocab", 512}}},
                      {"training", {{"global_batch", micro_batches}, {"micro_batch", 1}, {"checkpointing", "full"}}},
                      {"parallelism", {{"pipeline", {{"stages", 4}, {"schedule", schedule}, {"chunks", chunks}}}}}};
  const auto program = pw::lower(pw::parse_workload(j, ""));
  const auto result = paratwin::test::run_simulation([&] {
    auto machine = paratwin::topology::resolve_machine("frontier").slice(1);
    const paratwin::topology::Topology topology(machine);
    paratwin::sim::SimOptions options;
    options.free_communication = true;
    options.compute_seconds = layer_gemms_only;
    const auto r = paratwin::sim::simulate(program, topology, options);
    std::vector<double> out{r.iteration_time};
    for (const auto& t : r.ranks) out.push_back(t.compute);
    return out;
  });
  if (result.empty()) return -1;
  // The bubble is the iteration time a stage does not compute, over its compute time (t_pb / t_id).
  const double T = result[0], compute = result[1];
  for (size_t r = 2; r < result.size(); ++r) EXPECT_NEAR(result[r], compute, 1e-9 * compute) << "stages differ";
  return (T - compute) / compute;
}

}  // namespace

TEST(Bubble, GPipeIsPMinusOneOverM) {
  EXPECT_NEAR(measured_bubble("gpipe", 1, 8), 3.0 / 8, 1e-6);
}

TEST(Bubble, OneFOneBIsPMinusOneOverM) {
  EXPECT_NEAR(measured_bubble("1f1b", 1, 8), 3.0 / 8, 1e-6);
  EXPECT_NEAR(measured_bubble("1f1b", 1, 16), 3.0 / 16, 1e-6);
}

TEST(Bubble, InterleavedIsPMinusOneOverVM) {
  EXPECT_NEAR(measured_bubble("interleaved", 2, 8), 3.0 / (2 * 8), 1e-6);
  EXPECT_NEAR(measured_bubble("interleaved", 4, 8), 3.0 / (4 * 8), 1e-6);
}
