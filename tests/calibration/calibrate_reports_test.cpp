// What `calibrate` prints and writes around a comparison: one comparison's table, a suite's README and
// classes.csv, and the lines a fitted profile reads as (micro and refit).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "calibration/comparison_text.hpp"
#include "calibration/micro_report.hpp"
#include "calibration/suite_report.hpp"

namespace pc = paratwin::calibration;

namespace {

pc::Comparison comparison(double predicted, double measured) {
  pc::Comparison c;
  c.workload = "tiny-dp";
  c.machine = "localhost";
  c.backend = "cpu";
  c.ranks = 2;
  c.predicted = predicted;
  c.measured = {measured, measured * 1.1, measured * 0.9};
  c.measured_median = measured;
  c.classes = {{"GEMM", 0.8, 1.0}, {"bubble", 0.1, 0.0}};
  return c;
}

pc::Suite two_workloads() {
  pc::Suite s;
  s.file = "calibration/suites/localhost.json";
  s.name = "localhost";
  s.description = "Small workloads on this machine.";
  s.entries = {{"suites/tiny-dp.json", "DP", 2}, {"suites/tiny-tp.json", "TP", 4}};
  return s;
}

}  // namespace

TEST(CalibrateReports, AComparisonPrintsItsIterationAndClasses) {
  const auto text = pc::comparison_text(comparison(0.9, 1.0));
  EXPECT_NE(text.find("  iteration             predicted 0.9 s, measured 1 s (median of 3), error -10.0 %\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  GEMM                             0.8             1    -20.0%\n"), std::string::npos) << text;
  // Against nothing measured, no error to show.
  EXPECT_NE(text.find("  bubble                           0.1             0         -\n"), std::string::npos) << text;
}

TEST(CalibrateReports, ASuiteReadmeSaysHowToRegenerateItAndWhatPassed) {
  const auto suite = two_workloads();
  const std::vector<pc::SuiteResult> results = {{suite.entries[0], comparison(1.05, 1.0)},
                                                {suite.entries[1], comparison(1.5, 1.0)}};
  EXPECT_EQ(pc::outside_tolerance(suite, results), 1);  // +50 % against 10 %
  const auto md = pc::suite_readme(suite, results, "", "2026-11-26");
  EXPECT_EQ(md.rfind("# Calibration suite `localhost`: predicted versus measured\n\nSmall workloads", 0), 0u) << md;
  EXPECT_NE(md.find("```\nparatwin calibrate suite calibration/suites/localhost.json\n```"), std::string::npos) << md;
  EXPECT_NE(md.find("Measured 2026-11-26 on localhost with the cpu backend: 10 iterations after 2 warm-up"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Predictions outside 10 % of the measured median: 1 of 2.\n"), std::string::npos) << md;
  EXPECT_NE(md.find("![tiny-tp per op class](tiny-tp/bars.svg)\n![tiny-tp timelines](tiny-tp/timeline.png)"),
            std::string::npos)
      << md;
  // Another folder is part of the command that regenerates it.
  EXPECT_NE(pc::suite_readme(suite, {results[0]}, "out/x", "d").find("localhost.json --out out/x\n"),
            std::string::npos);
  EXPECT_NE(pc::suite_readme(suite, {results[0]}, "", "d").find("Every prediction is within 10 % of the measured"),
            std::string::npos);

  const auto csv = pc::suite_classes_csv(results);
  EXPECT_EQ(csv.rfind("workload,ranks,class,predicted_seconds,measured_seconds,relative_error\n", 0), 0u);
  // Each comparison's rows under the one header.
  const auto second = pc::comparison_csv(results[1].comparison);
  EXPECT_NE(csv.find(second.substr(second.find('\n') + 1)), std::string::npos) << csv;
}

TEST(CalibrateReports, AProfileReadsAsItsFittedCosts) {
  const auto profile = nlohmann::json::parse(R"({
    "fit": {"gemm": {"fp32": {"max_efficiency": 0.9, "tile_overhead_k": 12, "operand_reuse": 4, "fixed_us": 3,
                               "packing_GBps": 20.4}},
            "peak_tflops": {"fp32": 0.1}, "launch_overhead_us": 2, "memory_GBps": 10,
            "collectives": [{"kind": "all_reduce", "group_size": 2, "alpha_us_per_step": 5, "busbw_GBps": 3,
                             "rms_relative_error": 0.05}],
            "link_GBps": 3, "collective_step_us": 5, "gemm_shapes": [{}, {}]},
    "fit_error": {"gemm_rms_relative": 0.03, "gemm_max_relative": 0.08, "sweep_rms_relative": 0.02}})");
  const auto gemm = pc::gemm_fit_text(profile);
  EXPECT_EQ(gemm,
            "  GEMM fp32: peak 0.1 TFLOP/s, main loop at 0.900 of it, tile overhead 12 K steps, operand reuse 4, "
            "fixed 3 us, packing 20 GB/s (rms error 3.0 %, max 8.0 %)\n");
  const auto all = pc::micro_fit_text(profile);
  EXPECT_EQ(all.rfind(gemm, 0), 0u);
  EXPECT_NE(all.find("  element-wise: launch 2 us, memory 10 GB/s (rms error 2.0 %)\n"), std::string::npos) << all;
  EXPECT_NE(all.find("  all_reduce          2              5            3       5.0%\n"), std::string::npos) << all;
  EXPECT_NE(all.find("  2 GEMM shapes of the workloads timed one by one\n"), std::string::npos) << all;
  // What the profile does not hold is not mentioned.
  EXPECT_EQ(all.find("messages between rank pairs"), std::string::npos);
  EXPECT_EQ(all.find("slower while a collective"), std::string::npos);
}
