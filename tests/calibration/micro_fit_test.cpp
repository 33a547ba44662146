// The micro-benchmark plan and the profile fitted to its times: times made with known costs (launch
// overhead and memory bandwidth of the sweeps, a collective step and link bandwidth, a message's α-β,
// the compute core's slowdown while communicating) give those costs back.
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/micro_plan.hpp"
#include "topology/machine.hpp"

namespace pc = paratwin::calibration;
namespace pw = paratwin::workloads;

namespace {

constexpr double kLaunch = 2e-6, kMemory = 20e9;  // sweeps: launch + bytes / bandwidth
constexpr double kStep = 5e-6, kLink = 10e9;      // collectives: steps · step + bus bytes / link
constexpr double kMessageAlpha = 3e-6, kMessageBw = 8e9;
constexpr double kSlowdown = 0.4;  // of the GEMMs' speed while a collective is in flight

// Steps and bus factor of a ring over p ranks (nccl-tests' conventions).
std::pair<double, double> ring(pw::OpKind kind, double p) {
  if (kind == pw::OpKind::all_reduce) return {2 * (p - 1), 2 * (p - 1) / p};
  if (kind == pw::OpKind::broadcast) return {std::ceil(std::log2(p)), 1.0};
  return {p - 1, (p - 1) / p};
}

pc::MicroTimes synthetic_times(const pc::MicroPlan& plan) {
  const auto& ops = plan.program.roles[0].ops;
  pc::MicroTimes t;
  t.seconds.assign(ops.size(), 0);
  for (uint32_t i = 0; i < plan.flush; ++i) {
    const auto& op = ops[i];
    if (op.kind == pw::OpKind::gemm)
      t.seconds[i] = kLaunch + op.flops / 90e9;
    else if (op.kind == pw::OpKind::elementwise)
      t.seconds[i] = kLaunch + op.bytes / kMemory;
    else {
      const auto [steps, factor] = ring(op.kind, static_cast<double>(plan.program.grid.group_size(op.group)));
      t.seconds[i] = steps * kStep + factor * op.bytes / kLink;
    }
  }
  for (uint32_t i = plan.first_interference; i < ops.size(); ++i) {
    const double alone = 1e-3, in_flight = 0.5e-3;
    t.interference.push_back({i, alone, alone + kSlowdown * in_flight, in_flight});
  }
  for (double bytes : plan.message_sizes) t.message_seconds.push_back(kMessageAlpha + bytes / kMessageBw);
  return t;
}

}  // namespace

TEST(MicroPlan, OpsInTheirRanges) {
  pc::MicroOptions options;
  options.quick = true;
  options.shapes = {{256, 768, 256, 1, false, true}};
  const auto plan = pc::plan_micro(2, false, options);
  const auto& ops = plan.program.roles.at(0).ops;
  EXPECT_EQ(plan.first_shape, 0u);
  EXPECT_EQ(plan.first_sweep_gemm, 1u);  // the workload shape, then the sweep
  EXPECT_TRUE(ops[0].gemm.trans_b);
  EXPECT_STREQ(ops[plan.flush].name, "flush");
  EXPECT_EQ(ops[plan.lead_in].kind, pw::OpKind::gemm);
  EXPECT_LT(plan.first_interference, ops.size());
  for (uint32_t i = plan.first_interference; i < ops.size(); ++i) EXPECT_TRUE(pw::is_collective(ops[i].kind));
  EXPECT_FALSE(plan.message_sizes.empty());
  // A GPU plan times every GEMM in bf16 and fp8 as well; fp8 only the shapes its kernels take (m and k
  // multiples of 16).
  const auto gpu = pc::plan_micro(1, true, options);
  EXPECT_EQ(gpu.first_sweep_gemm, 3u);
  EXPECT_TRUE(gpu.gpu);
  options.shapes.push_back({100, 768, 256, 1, false, true});
  const auto odd = pc::plan_micro(1, true, options);
  EXPECT_EQ(odd.first_sweep_gemm, 5u);  // fp32 and bf16 of both shapes, fp8 of the first
  for (uint32_t i = odd.first_sweep_gemm; i < odd.flush; ++i) {
    const auto& op = odd.program.roles[0].ops[i];
    if (op.kind == pw::OpKind::gemm && op.dtype == paratwin::workloads::Dtype::fp8) {
      EXPECT_EQ(op.gemm.m % 16, 0);
    }
  }
}

TEST(MicroFit, RecoversTheCostsThatMadeTheTimes) {
  pc::MicroOptions options;
  options.quick = true;
  const auto plan = pc::plan_micro(2, false, options);
  const auto profile =
      pc::fit_micro(plan, synthetic_times(plan), paratwin::topology::resolve_machine("localhost"), "cpu", 2);
  const auto& fit = profile.at("fit");
  EXPECT_EQ(profile["backend"], "cpu");
  EXPECT_EQ(profile["ranks"], 2);
  EXPECT_NEAR(fit["launch_overhead_us"].get<double>(), kLaunch * 1e6, 1e-3);
  EXPECT_NEAR(fit["memory_GBps"].get<double>(), kMemory / 1e9, 1e-6);
  EXPECT_NEAR(fit["collective_step_us"].get<double>(), kStep * 1e6, 1e-3);
  EXPECT_NEAR(fit["link_GBps"].get<double>(), kLink / 1e9, 1e-6);
  for (const auto& c : fit["collective_costs"]) {
    EXPECT_NEAR(c["step_us"].get<double>(), kStep * 1e6, 1e-3) << c["kind"];
    EXPECT_NEAR(c["per_byte_ns"].get<double>(), 0, 1e-6) << c["kind"];
  }
  EXPECT_NEAR(fit["messages"]["alpha_us"].get<double>(), kMessageAlpha * 1e6, 1e-3);
  EXPECT_NEAR(fit["messages"]["GBps"].get<double>(), kMessageBw / 1e9, 1e-6);
  EXPECT_NEAR(fit["message_cost"]["per_byte_ns"].get<double>(), (1 / kMessageBw - 1 / kLink) * 1e9, 1e-6);
  EXPECT_NEAR(fit["compute_slowdown_communicating"].get<double>(), kSlowdown, 1e-9);
  EXPECT_TRUE(fit["gemm"].contains("fp32"));
  EXPECT_FALSE(profile["measurements"].empty());
}
