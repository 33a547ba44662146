// A calibrated library's costs (issue 7): per collective kind a step cost and a cost per byte moved
// instead of the profile's one step cost; an extra step cost while the rank computes; GEMM shapes
// timed one by one priced at their measured seconds.
#include <gtest/gtest.h>

#include "sim/collectives.hpp"
#include "sim/cost_model.hpp"
#include "topology/machine.hpp"

namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

TEST(StepCosts, PerKindStepAndBytesReplaceTheProfileStep) {
  auto machine = paratwin::topology::resolve_machine("localhost");
  machine.profile.collective_step = 10e-6;
  machine.profile.collective_costs["all_gather"] = {30e-6, 2e-9};
  machine.profile.overlapped_step_extra = 100e-6;
  const auto costs = ps::StepCosts::of(machine, "nccl");
  ps::Step step;
  step.sends = {{1, 1000}};
  step.recvs = {{1, 4000}};
  // all-gather: its own step cost plus 2 ns for each of the 4000 bytes (the larger direction).
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_gather), 30e-6 + 8e-6, 1e-15);
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_gather, true), 130e-6 + 8e-6, 1e-15);
  // all-reduce: no cost of its own, the profile's step.
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_reduce), 10e-6, 1e-15);
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_reduce, true), 110e-6, 1e-15);
}

TEST(CostModel, MeasuredGemmShapesAreTakenAsMeasured) {
  auto machine = paratwin::topology::resolve_machine("localhost");
  machine.profile.gemm_seconds["fp32"][{256, 1024, 256, 1, 0, 1}] = 1.5e-3;
  const ps::CostModel model(machine);
  pw::Op op;
  op.kind = pw::OpKind::gemm;
  op.dtype = pw::Dtype::fp32;
  op.gemm = {256, 1024, 256, 1, false, true};
  op.flops = 2.0 * 256 * 1024 * 256;
  EXPECT_DOUBLE_EQ(model.compute_seconds(op), 1.5e-3);
  op.gemm.trans_b = false;  // another shape: the curve
  EXPECT_NEAR(model.compute_seconds(op), op.flops / (0.08e12 * 0.8) + machine.profile.launch_overhead, 1e-12);
  op.dtype = pw::Dtype::bf16;  // measured in fp32 only
  op.gemm.trans_b = true;
  EXPECT_NE(model.compute_seconds(op), 1.5e-3);
}

// A batched GEMM (attention's per-head products) is one kernel: the efficiency curve reads the whole
// op's FLOPs, so 128 products of 1 GFLOP cost what one 128-GFLOP GEMM does (Perlmutter's A100 curve:
// max efficiency 280/312 from seed 002, its half point from the machine file), not 128 times a
// 1-GFLOP GEMM on the curve's low end.
TEST(CostModel, ABatchedGemmIsPricedByItsWholeFlops) {
  const auto machine = paratwin::topology::resolve_machine("perlmutter");
  const ps::CostModel model(machine);
  pw::Op batched;
  batched.kind = pw::OpKind::gemm;
  batched.dtype = pw::Dtype::bf16;
  batched.gemm = {2048, 2048, 128, 128, false, true};
  batched.flops = 2.0 * 2048 * 2048 * 128 * 128;
  pw::Op single = batched;
  single.gemm = {2048, 2048, 128 * 128, 1, false, true};
  EXPECT_DOUBLE_EQ(model.compute_seconds(batched), model.compute_seconds(single));
  const double half = machine.profile.gemm.at("bf16").half_flops;
  ASSERT_GT(half, 1e9);  // the curve matters at 1 GFLOP
  const double peak = 312e12, f = batched.flops, eff = 280.0 / 312.0 * f / (f + half);
  EXPECT_NEAR(model.compute_seconds(batched), f / (peak * eff) + machine.profile.launch_overhead,
              1e-9 * model.compute_seconds(batched));
}
