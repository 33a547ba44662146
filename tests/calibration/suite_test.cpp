// Calibration suites and profiles: strict reading with file and JSON path in every error, and
// a profile's round trip into the machine model.
#include "calibration/suite.hpp"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "calibration/profile.hpp"
#include "calibration/profile_format.hpp"
#include "common/input_error.hpp"
#include "tests/calibration/temp_files.hpp"

namespace pc = paratwin::calibration;
namespace fs = std::filesystem;

namespace {

using Files = paratwin::test::TempFiles;

}  // namespace

TEST_F(Files, SuiteReadsWorkloadsRelativeToItsFile) {
  const auto path = write("s.json", R"({"name": "s", "iterations": 4, "tolerance_percent": 5,
      "workloads": [{"workload": "w.json", "label": "DP", "ranks": 2}, {"workload": "w.json", "label": "PP", "ranks": 4}]})");
  const auto s = pc::load_suite(path);
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.iterations, 4);
  EXPECT_DOUBLE_EQ(s.tolerance, 0.05);
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(s.entries[0].workload, (dir_ / "w.json").string());
  EXPECT_EQ(s.rank_counts(), (std::vector<int64_t>{2, 4}));
}

TEST_F(Files, SuiteErrorsNameFileAndPath) {
  const auto unknown = write("u.json", R"({"name": "s", "workloads": [{"workload": "w.json", "label": "DP", "ranks": 2,
      "rank": 3}]})");
  EXPECT_NE(error_of([&] { pc::load_suite(unknown); }).find("u.json: workloads[0].rank: unknown key"),
            std::string::npos)
      << error_of([&] { pc::load_suite(unknown); });
  const auto missing =
      write("m.json", R"({"name": "s", "workloads": [{"workload": "nope.json", "label": "DP", "ranks": 2}]})");
  EXPECT_NE(error_of([&] { pc::load_suite(missing); }).find("workloads[0].workload = \"nope.json\": no such file"),
            std::string::npos);
  const auto empty = write("e.json", R"({"name": "s", "workloads": []})");
  EXPECT_NE(error_of([&] { pc::load_suite(empty); }).find("workloads: must list at least one workload"),
            std::string::npos);
  const auto slash =
      write("n.json", R"({"name": "a/b", "workloads": [{"workload": "w.json", "label": "DP", "ranks": 2}]})");
  EXPECT_NE(error_of([&] { pc::load_suite(slash); }).find("name = \"a/b\""), std::string::npos);
}

// The H100 profile measured with the GPU backend (exec/README.md, 2026-11-27) carries bf16 and fp8 GEMM
// models and shapes; applied to Alps, the simulator's fp8 GEMM of a layer's size takes what was measured.
TEST(Profile, H100ProfileGivesFp8GemmsTheirMeasuredRate) {
  auto machine = paratwin::topology::resolve_machine("alps");
  pc::apply_profile(machine, std::string(PARATWIN_SOURCE_DIR) + "/results/calibration/h100-alps-cuda-fp8.json");
  ASSERT_TRUE(machine.profile.gemm.count("fp8"));
  ASSERT_TRUE(machine.profile.gemm.count("bf16"));
  EXPECT_DOUBLE_EQ(machine.node.device.peak_flops.at("fp8"), 1979e12);
  // 8192 x 2048 x 8192 (fc2-like) was timed in both dtypes: 762 and 1,384 TFLOP/s.
  const auto& shapes = machine.profile.gemm_seconds;
  const std::array<int64_t, 6> fc2 = {8192, 2048, 8192, 1, 0, 0};
  ASSERT_TRUE(shapes.at("fp8").count(fc2));
  const double ratio = shapes.at("bf16").at(fc2) / shapes.at("fp8").at(fc2);
  EXPECT_GT(ratio, 1.6);
  EXPECT_LT(ratio, 2.0);
}

// A profile written before schema version 1 (no "schema_version", a timed shape's "seconds"): read as
// version 1 (calibration/profile_format.hpp).
TEST_F(Files, ProfileRoundTripsIntoTheMachine) {
  const auto path = write("p.json", R"({"machine": "localhost", "fit": {
      "peak_tflops": {"fp32": 0.1}, "gemm": {"fp32": {"max_efficiency": 0.9, "tile_overhead_k": 8, "operand_reuse": 2, "fixed_us": 3}},
      "launch_overhead_us": 2, "memory_GBps": 40, "collective_step_us": 50, "link_GBps": 4,
      "compute_slowdown_communicating": 0.2, "overlapped_step_extra_us": 100,
      "message_cost": {"step_us": 30, "per_byte_ns": 0.05},
      "collective_costs": [{"kind": "all_gather", "step_us": 80, "per_byte_ns": 0.1, "rms_relative_error": 0.1}],
      "gemm_shapes": [{"dtype": "fp32", "m": 256, "n": 1024, "k": 256, "batch": 1, "trans_a": false,
                       "trans_b": true, "seconds": 0.0015}]}})");
  auto machine = paratwin::topology::resolve_machine("localhost");
  pc::apply_profile(machine, path);
  EXPECT_DOUBLE_EQ(machine.node.device.peak_flops.at("fp32"), 0.1e12);
  EXPECT_DOUBLE_EQ(machine.profile.gemm.at("fp32").max_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(machine.profile.gemm.at("fp32").tile_overhead_k, 8);
  EXPECT_DOUBLE_EQ(machine.profile.gemm.at("fp32").operand_reuse, 2);
  EXPECT_DOUBLE_EQ(machine.profile.gemm.at("fp32").fixed_seconds, 3e-6);
  EXPECT_DOUBLE_EQ(machine.profile.launch_overhead, 2e-6);
  EXPECT_DOUBLE_EQ(machine.node.device.hbm_bandwidth, 40e9);
  EXPECT_DOUBLE_EQ(machine.profile.collective_step, 50e-6);
  for (const auto& l : machine.node.links) EXPECT_DOUBLE_EQ(l.bandwidth, 4e9);
  EXPECT_DOUBLE_EQ(machine.profile.compute_slowdown_communicating, 0.2);
  EXPECT_DOUBLE_EQ(machine.profile.overlapped_step_extra, 100e-6);
  EXPECT_DOUBLE_EQ(machine.profile.message_cost.step, 30e-6);
  EXPECT_DOUBLE_EQ(machine.profile.message_cost.per_byte, 0.05e-9);
  EXPECT_DOUBLE_EQ(machine.profile.collective_costs.at("all_gather").step, 80e-6);
  EXPECT_DOUBLE_EQ(machine.profile.collective_costs.at("all_gather").per_byte, 0.1e-9);
  EXPECT_DOUBLE_EQ((machine.profile.gemm_seconds.at("fp32").at({256, 1024, 256, 1, 0, 1})), 0.0015);

  const auto bad = write("b.json", R"({"machine": "localhost", "fit": {
      "peak_tflops": {"fp32": 0.1}, "gemm": {"fp32": {"max_efficiency": 0.9, "tile_overhead_k": 0, "operand_reuse": 0, "fixed_us": 0}},
      "launch_overhead_us": 2, "memory_GBps": 40, "collective_costs": [{"kind": "gossip", "step_us": 1, "per_byte_ns": 0}]}})");
  EXPECT_NE(error_of([&] { pc::apply_profile(machine, bad); }).find("b.json: fit.collective_costs[0].kind"),
            std::string::npos)
      << error_of([&] { pc::apply_profile(machine, bad); });
}

// Physically impossible profiles are refused with the file, the JSON path and the bound: a GEMM timed
// at 0 s (it made simulate report 646.7 % of peak), a GEMM far faster than the profile's own peak, and
// a peak many times the machine file's.
TEST_F(Files, ProfilesWithImpossibleTimesAreRefused) {
  const auto profile = [&](const std::string& name, double peak_tflops, double seconds) {
    return write(name, R"({"schema_version": 1, "machine": "localhost", "fit": {
        "peak_tflops": {"fp32": )" +
                           std::to_string(peak_tflops) + R"(},
        "gemm": {"fp32": {"max_efficiency": 0.9, "tile_overhead_k": 8, "operand_reuse": 2, "fixed_us": 3}},
        "launch_overhead_us": 2, "memory_GBps": 40,
        "gemm_shapes": [{"dtype": "fp32", "m": 256, "n": 1024, "k": 256, "batch": 1, "trans_a": false,
                         "trans_b": true, "time_s": )" +
                           std::to_string(seconds) + "}]}}");
  };
  auto machine = paratwin::topology::resolve_machine("localhost");
  // 2 x 256 x 1024 x 256 FLOP = 0.134 GFLOP: 1.5 ms is 0.089 TFLOP/s, within 1.5 x a 0.1 TFLOP/s peak.
  EXPECT_NO_THROW(pc::apply_profile(machine, profile("ok.json", 0.1, 0.0015)));
  const auto zero = profile("zero.json", 0.1, 0);
  EXPECT_NE(error_of([&] {
              pc::apply_profile(machine, zero);
            }).find("zero.json: fit.gemm_shapes[0].time_s = 0: a GEMM takes time"),
            std::string::npos)
      << error_of([&] { pc::apply_profile(machine, zero); });
  const auto fast = profile("fast.json", 0.1, 0.0005);  // 0.27 TFLOP/s
  EXPECT_NE(error_of([&] { pc::apply_profile(machine, fast); })
                .find("fast.json: fit.gemm_shapes[0].time_s = 0.0005 gives 0.2684 TFLOP/s, more than 1.5 x the "
                      "fp32 peak of 0.1 TFLOP/s"),
            std::string::npos)
      << error_of([&] { pc::apply_profile(machine, fast); });
  auto fresh = paratwin::topology::resolve_machine("localhost");  // nominal fp32 peak 0.08 TFLOP/s
  const auto peak = profile("peak.json", 0.5, 0.0015);
  EXPECT_NE(error_of([&] { pc::apply_profile(fresh, peak); })
                .find("peak.json: fit.peak_tflops.fp32 = 0.5 TFLOP/s is more than 4 x the 0.08 TFLOP/s peak of "
                      "localhost's device"),
            std::string::npos)
      << error_of([&] { pc::apply_profile(fresh, peak); });
}

// Version 1 reads one set of names: a newer version is refused, and so is a version-1 shape that says
// "seconds" (only a document without "schema_version" is upgraded).
TEST_F(Files, ProfileVersionsAreCheckedAndOldNamesUpgradedOnlyInOldProfiles) {
  const auto profile = [&](const std::string& name, const std::string& version, const std::string& time_key) {
    return write(name, R"({)" + version + R"("machine": "localhost", "fit": {
        "peak_tflops": {"fp32": 0.1},
        "gemm": {"fp32": {"max_efficiency": 0.9, "tile_overhead_k": 8, "operand_reuse": 2, "fixed_us": 3}},
        "launch_overhead_us": 2, "memory_GBps": 40,
        "gemm_shapes": [{"dtype": "fp32", "m": 256, "n": 1024, "k": 256, "batch": 1, "trans_a": false,
                         "trans_b": true, ")" +
                           time_key + R"(": 0.0015}]}})");
  };
  auto machine = paratwin::topology::resolve_machine("localhost");
  EXPECT_NO_THROW(pc::apply_profile(machine, profile("v1.json", R"("schema_version": 1, )", "time_s")));
  EXPECT_NO_THROW(pc::apply_profile(machine, profile("v0.json", "", "seconds")));
  EXPECT_NE(error_of([&] {
              pc::apply_profile(machine, profile("v9.json", R"("schema_version": 9, )", "time_s"));
            }).find("v9.json: schema_version = 9 is out of range [1, 1]"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              pc::apply_profile(machine, profile("mixed.json", R"("schema_version": 1, )", "seconds"));
            }).find("mixed.json: fit.gemm_shapes[0].time_s: is required but missing"),
            std::string::npos);
}

// The older names of every measurement become version 1's; nothing else changes.
TEST(ProfileFormat, UpgradeRenamesTheOldTimeKeys) {
  auto old = nlohmann::json::parse(R"({"machine": "localhost", "measurements": [
      {"kind": "gemm", "m": 1, "n": 2, "k": 3, "flops": 12, "seconds": 1e-6},
      {"kind": "gemm_with_collective", "gemm_alone_seconds": 1, "gemm_shared_seconds": 2,
       "collective_seconds_alone": 3, "collective_seconds_while_computing": 4}],
      "fit": {"gemm_shapes": [{"m": 1, "seconds": 5}]}})");
  pc::upgrade_profile(old);
  EXPECT_EQ(old, nlohmann::json::parse(R"({"schema_version": 1, "machine": "localhost", "measurements": [
      {"kind": "gemm", "m": 1, "n": 2, "k": 3, "flops": 12, "time_s": 1e-6},
      {"kind": "gemm_with_collective", "gemm_alone_s": 1, "gemm_shared_s": 2,
       "collective_alone_s": 3, "collective_while_computing_s": 4}],
      "fit": {"gemm_shapes": [{"m": 1, "time_s": 5}]}})"));
  auto current = old;
  current["measurements"][0]["seconds"] = 7;  // a version-1 document is left as it is
  auto same = current;
  pc::upgrade_profile(same);
  EXPECT_EQ(same, current);
}
