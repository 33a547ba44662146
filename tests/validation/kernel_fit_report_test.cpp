// `paratwin validate --fit` around the fit: the points of a machine by framework profile, which are fitted
// and which held out, a fit that recovers the value that made its point, what it says, and the profile
// file with the fitted value.
#include "validation/kernel_fit_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/input_error.hpp"
#include "common/report_text.hpp"

namespace pv = paratwin::validation;

namespace {

pv::ReferenceSuite one_point(const std::string& name) {
  pv::ReferenceSuite s;
  s.name = name;
  s.metric = pv::Metric::percent_of_peak;
  pv::ReferencePoint p;
  p.label = "GPT 1.7B, 32 GPUs";
  p.workload = std::string(PARATWIN_EXAMPLES_DIR) + "/gpt-1.7b-selene-32.json";
  p.machine = "selene";
  p.published = 40;
  s.points.push_back(p);
  return s;
}

}  // namespace

TEST(KernelFitReport, PointsByFrameworkAndWhichAreFitted) {
  std::vector<pv::ReferenceSuite> suites{one_point("a"), one_point("b")};
  suites[1].points[0].calibration = true;
  const auto by_framework = pv::fit_points(suites, "selene", "");
  ASSERT_EQ(by_framework.size(), 1u);
  const auto& points = by_framework.at("megatron-lm-2021");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_TRUE(points[1].calibration);
  EXPECT_EQ(pv::fit_points(suites, "selene", "megatron-lm-2021").size(), 1u);
  try {
    pv::fit_points(suites, "frontier", "megatron-lm-2022");
    FAIL() << "no point runs there";
  } catch (const paratwin::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--machine = frontier: no end-to-end point of the selected suites runs on it with framework "
              "megatron-lm-2022");
  }

  const auto declared = pv::plan_fit("megatron-lm-2021", "selene", points);
  EXPECT_TRUE(declared.declared);
  ASSERT_EQ(declared.fit_set.size(), 1u);
  EXPECT_EQ(declared.fit_set[0].suite, 1u);
  ASSERT_EQ(declared.held.size(), 1u);
  EXPECT_EQ(pv::fit_heading(declared), "\nframework megatron-lm-2021 on selene: kernel_efficiency " +
                                           paratwin::formatted(declared.before, "%.3f") +
                                           " in workloads/frameworks/megatron-lm-2021.json\n");
  const auto all = pv::plan_fit("megatron-lm-2021", "selene", {points[0]});
  EXPECT_FALSE(all.declared);
  EXPECT_EQ(all.fit_set.size(), 1u);
  EXPECT_NE(pv::fit_heading(all).find("no declared calibration point (points[].calibration): fitted to all 1 points"),
            std::string::npos);
}

TEST(KernelFitReport, AFitRecoversTheValueThatMadeItsPointAndSaysSo) {
  std::vector<pv::ReferenceSuite> suites{one_point("a")};
  const auto gpus = pv::point_gpus(suites);
  pv::ReferenceOptions options;
  pv::KernelEfficiencyFit fitter(suites, gpus, "megatron-lm-2021", options, 0);
  const auto plan = pv::plan_fit("megatron-lm-2021", "selene", pv::fit_points(suites, "selene", "").begin()->second);
  // Published: what the analytical model predicts with 0.6.
  suites[0].points[0].published = *fitter.predict(plan.fit_set, 0.6, "analytical")[0].predicted;
  std::string said;
  const auto outcome = pv::run_fit(suites, fitter, plan, "analytical", [&](const std::string& s) { said += s; });
  EXPECT_NEAR(outcome.after, 0.6, 0.002);
  ASSERT_EQ(outcome.fitted_after.size(), 1u);
  EXPECT_NEAR(outcome.fitted_after[0].relative_error(), 0, 0.005);
  EXPECT_EQ(said.rfind("  fitted: " + paratwin::formatted(plan.before, "%.3f") + " -> " +
                           paratwin::formatted(outcome.after, "%.3f") +
                           " (least squares on the relative error of 1 point(s))\n  the points fitted to, before",
                       0),
            0u)
      << said;
  EXPECT_NE(said.find("  after (mean |error| 0.0 %):\n    a: GPT 1.7B, 32 GPUs  "), std::string::npos) << said;
  EXPECT_NE(said.find("  leave-one-suite-out: a: no other suite to fit to\n"), std::string::npos) << said;
}

TEST(KernelFitReport, TheProfileKeepsItsKeysAndNamesThePointsFittedTo) {
  const auto suite = one_point("a");
  pv::ValidationRow row;
  row.suite = &suite;
  row.point = &suite.points[0];
  const auto text = pv::profile_with_kernel_efficiency(
      R"({"name": "x", "kernel_efficiency": {"value": 1, "source": "guess"}, "zeta": 2})", 0.75, "selene", {row, row});
  const auto doc = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(doc.begin().key(), "name");  // the file's order stays
  EXPECT_EQ(doc.back(), 2);
  EXPECT_DOUBLE_EQ(doc["kernel_efficiency"]["value"].get<double>(), 0.75);
  EXPECT_EQ(doc["kernel_efficiency"]["source"],
            "fitted by `paratwin validate --fit --machine selene` (least squares on the relative error) to a: GPT "
            "1.7B, 32 GPUs; a: GPT 1.7B, 32 GPUs");
  EXPECT_EQ(text.back(), '\n');
}
