// The accuracy ratchet: the committed baselines' error against the published values of every reference
// suite is no worse than its committed figure (results/baselines/accuracy.json), and the ratchet fails
// when a prediction moves away from the published value.
#include "validation/accuracy_ratchet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/input_error.hpp"
#include "validation/baselines.hpp"

namespace pv = paratwin::validation;

namespace {

const std::string kReference = std::string(PARATWIN_SOURCE_DIR) + "/results/reference";
const std::string kBaselines = std::string(PARATWIN_SOURCE_DIR) + "/results/baselines";

struct Committed {
  std::vector<pv::ReferenceSuite> suites = pv::load_reference_dir(kReference);
  std::map<std::string, pv::Baseline> baselines = pv::committed_baselines(suites, kBaselines);
  pv::Accuracy bar = pv::committed_accuracy(kBaselines);
};

std::string names(const std::vector<pv::RatchetBreach>& breaches) {
  std::string out;
  for (const auto& b : breaches) out += b.suite + " " + b.figure + "; ";
  return out;
}

// The prediction the ratchet judges for `label`: the simulated value if any, else the analytical one.
double& judged_value(pv::Baseline& b, const std::string& label) {
  pv::BaselinePoint* chosen = nullptr;
  for (auto& p : b.points)
    if (p.label == label && (chosen == nullptr || p.model == "simulate")) chosen = &p;
  EXPECT_NE(chosen, nullptr) << label;
  return *chosen->value;
}

}  // namespace

TEST(AccuracyRatchet, EverySuiteIsHeldAndNoneIsWorseThanItsCommittedFigure) {
  const Committed c;
  ASSERT_FALSE(c.bar.empty()) << pv::accuracy_file(kBaselines) << " is missing";
  ASSERT_EQ(c.baselines.size(), c.suites.size());
  const auto now = pv::accuracy_of(c.suites, c.baselines);
  ASSERT_EQ(now.size(), c.suites.size());
  const auto breaches = pv::ratchet_breaches(c.bar, now);
  EXPECT_TRUE(breaches.empty()) << pv::ratchet_report(breaches, now.size(), pv::accuracy_file(kBaselines));
  // And no figure is stale the other way: the bar is what the baselines give, so an improvement that was
  // not written down (a hand-edited baseline) cannot leave room to get worse later.
  for (const auto& [suite, a] : now) {
    EXPECT_NEAR(c.bar.at(suite).mean_abs_percent, a.mean_abs_percent, 1e-3) << suite;
    EXPECT_NEAR(c.bar.at(suite).max_abs_percent, a.max_abs_percent, 1e-3) << suite;
    EXPECT_EQ(c.bar.at(suite).failed, a.failed) << suite;
  }
}

TEST(AccuracyRatchet, FailsWhenOnePredictionMovesAwayFromThePublishedValue) {
  Committed c;
  // selene-weak's 1.7B point: published 44 % of peak; moved 10 % further from it.
  const auto& suite =
      *std::find_if(c.suites.begin(), c.suites.end(), [](const auto& s) { return s.name == "selene-weak"; });
  const auto& point = suite.points.front();
  double& v = judged_value(c.baselines.at("selene-weak"), point.label);
  v += (v >= point.published ? 1 : -1) * 0.10 * point.published;
  const auto breaches = pv::ratchet_breaches(c.bar, pv::accuracy_of(c.suites, c.baselines));
  ASSERT_FALSE(breaches.empty());
  EXPECT_EQ(names(breaches), "selene-weak mean_abs_error_percent; selene-weak max_abs_error_percent; ");
  EXPECT_NE(pv::ratchet_report(breaches, 1, "accuracy.json").find("--accept-worse-accuracy"), std::string::npos);
}

TEST(AccuracyRatchet, FailsWhenAPredictionFails) {
  Committed c;
  auto& b = c.baselines.at("alps-weak");
  for (auto& p : b.points) p.value.reset();
  const auto breaches = pv::ratchet_breaches(c.bar, pv::accuracy_of(c.suites, c.baselines));
  ASSERT_FALSE(breaches.empty());
  EXPECT_EQ(breaches.front().suite, "alps-weak");
  EXPECT_EQ(breaches.front().figure, "failed");
}

TEST(AccuracyRatchet, ImprovementsLowerTheBarAndWorseFiguresRaiseItOnlyWhenAccepted) {
  const pv::Accuracy bar = {{"a", {4, 0, 10.0, 20.0}}, {"b", {3, 0, 5.0, 6.0}}};
  const pv::Accuracy now = {{"a", {4, 0, 8.0, 25.0}}, {"c", {2, 0, 1.0, 1.5}}};
  EXPECT_EQ(names(pv::ratchet_breaches(bar, now)), "a max_abs_error_percent; c missing; ");
  const auto lowered = pv::lowered_bar(bar, now, false);
  EXPECT_DOUBLE_EQ(lowered.at("a").mean_abs_percent, 8.0);  // improved: the bar comes down
  EXPECT_DOUBLE_EQ(lowered.at("a").max_abs_percent, 20.0);  // worse: the bar stays
  EXPECT_DOUBLE_EQ(lowered.at("b").mean_abs_percent, 5.0);  // not run: kept
  EXPECT_DOUBLE_EQ(lowered.at("c").mean_abs_percent, 1.0);  // new suite: its figure
  EXPECT_DOUBLE_EQ(pv::lowered_bar(bar, now, true).at("a").max_abs_percent, 25.0);
  // Within the rounding of the committed decimals is not a breach.
  EXPECT_TRUE(pv::ratchet_breaches(bar, {{"b", {3, 0, 5.0004, 6.0}}}).empty());
}

TEST(AccuracyRatchet, FileRoundTripsAndBadFilesAreNamed) {
  const pv::Accuracy bar = {{"a", {4, 1, 10.12345, 20.5}}};
  const auto back = pv::parse_accuracy(pv::accuracy_json(bar), "accuracy.json");
  EXPECT_DOUBLE_EQ(back.at("a").mean_abs_percent, 10.123);
  EXPECT_EQ(back.at("a").failed, 1u);
  try {
    pv::parse_accuracy(R"({"schema_version": 1, "suites": {"a": {"points": 1, "failed": 0,
      "mean_abs_error_percent": 1, "max_abs_error_percent": 1, "typo": 2}}})",
                       "x/accuracy.json");
    FAIL() << "an unknown key was accepted";
  } catch (const paratwin::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x/accuracy.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("typo"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pv::parse_accuracy(R"({"schema_version": 2, "suites": {}})", "a.json"), paratwin::InputError);
}
