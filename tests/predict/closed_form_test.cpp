// The simulation beside the closed form (predict/closed_form.hpp): rows matched by kind and group, and
// a cause named only where it moves a figure by more than 5 % and the iteration by more than 1 %.
#include "predict/closed_form.hpp"

#include <gtest/gtest.h>

#include <string>

namespace paratwin::predict {
namespace {

using workloads::OpKind;

reports::CollectiveSummary simulated_row(OpKind kind, const std::string& group, double own, double waiting) {
  reports::CollectiveSummary c;
  c.kind = kind;
  c.group = group;
  c.count = 10;
  c.call_seconds = own;
  c.waiting = waiting;
  c.seconds = own + waiting;
  return c;
}

sim::AxisCost closed_form_row(OpKind kind, const std::string& group, double seconds) {
  sim::AxisCost c;
  c.kind = kind;
  c.group = group;
  c.seconds = seconds;
  return c;
}

Prediction simulated(double iteration, std::vector<reports::CollectiveSummary> rows, double bubble = 0) {
  Prediction p;
  p.iteration_seconds = iteration;
  p.bubble_seconds = bubble;
  reports::RunSummary s;
  s.collectives = std::move(rows);
  p.summary = s;
  return p;
}

Prediction closed_form(double iteration, std::vector<sim::AxisCost> rows, double bubble = 0) {
  Prediction p;
  p.model = Model::analytical;
  p.iteration_seconds = iteration;
  p.bubble_seconds = bubble;
  sim::AnalyticalEstimate e;
  e.collectives = std::move(rows);
  p.estimate = e;
  return p;
}

bool names(const ClosedFormComparison& c, const std::string& text) {
  for (const auto& r : c.reasons)
    if (r.find(text) != std::string::npos) return true;
  return false;
}

TEST(ClosedForm, AgreeingModelsNameNoCause) {
  const auto c = compare_with_closed_form(simulated(10, {simulated_row(OpKind::all_gather, "data", 2.02, 0.001)}),
                                          closed_form(10.02, {closed_form_row(OpKind::all_gather, "data", 2.0)}));
  EXPECT_NEAR(c.difference(), 10 / 10.02 - 1, 1e-12);
  ASSERT_EQ(c.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(c.collectives[0].simulated, 2.02);
  EXPECT_DOUBLE_EQ(c.collectives[0].closed_form, 2.0);
  EXPECT_TRUE(c.reasons.empty());
  EXPECT_NE(closed_form_text(c).find("no cause moves the simulation 5.0 %"), std::string::npos);
}

TEST(ClosedForm, SlowerCallsAreContentionAndWaitsAreSkew) {
  // all_gather: 30 % slower than alone; reduce_scatter: as alone but 0.5 s waiting for its last member;
  // all_reduce over tensor: 20 % slower, but 0.05 s of a 12 s iteration (under 1 %): not a cause.
  const auto c = compare_with_closed_form(simulated(12, {simulated_row(OpKind::all_gather, "data", 2.6, 0),
                                                         simulated_row(OpKind::reduce_scatter, "data", 1.0, 0.5),
                                                         simulated_row(OpKind::all_reduce, "tensor", 0.3, 0)}),
                                          closed_form(10, {closed_form_row(OpKind::all_gather, "data", 2.0),
                                                           closed_form_row(OpKind::reduce_scatter, "data", 1.0),
                                                           closed_form_row(OpKind::all_reduce, "tensor", 0.25)}));
  EXPECT_NEAR(c.difference(), 0.2, 1e-12);
  ASSERT_EQ(c.reasons.size(), 2u);
  EXPECT_TRUE(names(c, "all_gather over data: its calls take +30.0 % longer")) << c.reasons[0];
  EXPECT_TRUE(names(c, "contention"));
  EXPECT_TRUE(names(c, "reduce_scatter over data: members reach its calls apart, 500.0 ms"));
  EXPECT_FALSE(names(c, "tensor"));
  const auto j = to_json(c);
  EXPECT_EQ(j.at("reasons").size(), 2u);
  EXPECT_EQ(j.at("collectives").size(), 3u);
}

TEST(ClosedForm, RowsOfOneModelOnlyAndTheBubble) {
  // A collective only the simulation has (e.g. timed inside a node by the closed form under another
  // group) keeps 0 on the other side; a bubble 2 s over the formula's is named.
  const auto c = compare_with_closed_form(simulated(12, {simulated_row(OpKind::send, "pipe", 0.1, 0)}, 3.0),
                                          closed_form(10, {closed_form_row(OpKind::all_reduce, "data", 0.4)}, 1.0));
  ASSERT_EQ(c.collectives.size(), 2u);
  EXPECT_EQ(c.collectives[0].group, "pipe");
  EXPECT_DOUBLE_EQ(c.collectives[0].closed_form, 0);
  EXPECT_DOUBLE_EQ(c.collectives[1].simulated, 0);
  EXPECT_TRUE(names(c, "pipeline bubble: 3.0000 s simulated, 1.0000 s by formula"));
}

}  // namespace
}  // namespace paratwin::predict
