// Predicted versus measured: op classes from the two traces, exposed / bubble / idle from
// the summaries, errors against the measured median and each iteration; mismatched runs refused.
#include "calibration/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/input_error.hpp"

namespace pc = paratwin::calibration;
using nlohmann::json;

namespace {

json summary(double iteration, const json& breakdown, const std::string& workload = "w") {
  return {{"workload", workload},
          {"machine", "localhost"},
          {"ranks", 2},
          {"iteration_s", iteration},
          {"ranks_compute_exposed_bubble_other_s", breakdown}};
}

json event(const char* kind, int rank, int stream, double start_us, double duration_us) {
  return {{"name", kind},       {"cat", kind}, {"ph", "X"},     {"ts", start_us},
          {"dur", duration_us}, {"pid", rank}, {"tid", stream}, {"args", json::object()}};
}

// Two ranks: 60 and 40 µs of GEMM, a 10 µs all-reduce each, a send on rank 0, a memory event.
json trace(double scale) {
  json events = json::array({json{{"name", "process_name"}, {"ph", "M"}, {"pid", 0}},
                             event("gemm", 0, 0, 100, 60 * scale), event("gemm", 1, 0, 100, 40 * scale),
                             event("all_reduce", 0, 4, 160, 10 * scale), event("all_reduce", 1, 4, 160, 10 * scale),
                             event("send", 0, 2, 170, 4 * scale), event("alloc", 0, 0, 100, 0)});
  return {{"traceEvents", events}};
}

const pc::ClassRow* row(const pc::Comparison& c, const std::string& name) {
  for (const auto& r : c.classes)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST(Compare, ClassesPerRankAndErrors) {
  auto measured = summary(2.0, json::array({{1, 0.5, 0.25, 0}, {1, 0.25, 0.25, 0.5}}));
  measured["iterations_s"] = {2.0, 2.5, 1.6};
  measured["backend"] = "cpu";
  const auto predicted = summary(1.8, json::array({{1, 0.5, 0, 0}, {1, 0.5, 0, 0}}));
  const auto c = pc::compare_runs(predicted, trace(1.5), measured, trace(1.0), "p.json", "m.json");
  EXPECT_EQ(c.workload, "w");
  EXPECT_EQ(c.ranks, 2);
  EXPECT_NEAR(c.error(), -0.1, 1e-12);                                      // against the median, 2.0 s
  EXPECT_NEAR(c.worst_iteration_error(), std::fabs(1.8 / 2.5 - 1), 1e-12);  // against 2.5 s (1.8/1.6 is closer)
  const auto* gemm = row(c, "GEMM");
  ASSERT_NE(gemm, nullptr);
  EXPECT_NEAR(gemm->measured, 50e-6, 1e-15);  // (60 + 40) / 2 ranks
  EXPECT_NEAR(gemm->predicted, 75e-6, 1e-15);
  EXPECT_NEAR(gemm->error(), 0.5, 1e-12);
  EXPECT_NEAR(row(c, "point-to-point")->measured, 2e-6, 1e-15);  // one send over 2 ranks
  EXPECT_NEAR(row(c, "exposed communication")->measured, 0.375, 1e-12);
  EXPECT_NEAR(row(c, "bubble")->predicted, 0, 0);
  EXPECT_NEAR(row(c, "bubble")->error(), -1, 1e-12);
  EXPECT_NEAR(row(c, "other idle")->measured, 0.25, 1e-12);
  EXPECT_EQ(row(c, "reduce-scatter"), nullptr);  // neither run had one
  const std::string csv = pc::comparison_csv(c);
  EXPECT_NE(csv.find("w,2,iteration,1.8,2,-0.1\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("w,2,bubble,0,0.25,-1\n"), std::string::npos) << csv;
  const std::string md = pc::comparison_markdown(c);
  EXPECT_NE(md.find("| iteration (measured: median of 3) | 1.8 | 2 | -10.0 % |"), std::string::npos) << md;
  const std::string gp = pc::timeline_script(c, trace(1.5), trace(1.0), "t.png");
  EXPECT_NE(gp.find("set output 't.png'"), std::string::npos);
  EXPECT_NE(gp.find("rank 1 compute"), std::string::npos);
}

TEST(Compare, RefusesRunsOfDifferentWorkloadsOrFiles) {
  auto measured = summary(2.0, json::array({{1, 0, 0, 0}, {1, 0, 0, 0}}));
  measured["iterations_s"] = {2.0};
  const auto other = summary(1.0, json::array({{1, 0, 0, 0}, {1, 0, 0, 0}}), "other");
  try {
    pc::compare_runs(other, trace(1), measured, trace(1), "p.json", "m.json");
    FAIL() << "no error";
  } catch (const paratwin::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: workload = \"other\", but m.json measured \"w\""), std::string::npos)
        << e.what();
  }
  const auto predicted = summary(1.0, json::array({{1, 0, 0, 0}, {1, 0, 0, 0}}));
  EXPECT_THROW(pc::compare_runs(predicted, json::object(), measured, trace(1), "p.json", "m.json"),
               paratwin::InputError);
  auto no_iterations = measured;
  no_iterations.erase("iterations_s");
  EXPECT_THROW(pc::compare_runs(predicted, trace(1), no_iterations, trace(1), "p.json", "m.json"),
               paratwin::InputError);
}
