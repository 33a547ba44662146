// A measured run put together on rank 0: each rank's measurements through the doubles MPI gathers,
// merged into the slowest rank's iterations, their median and the run summary, with collectives per
// rank as the simulator reports them.
#include "predict/measured_run.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/predict/tiny_pipeline.hpp"
#include "workloads/lower.hpp"

namespace pp = paratwin::predict;
namespace pw = paratwin::workloads;

namespace {

using paratwin::test::tiny_pipeline;

// What one rank measured over three iterations.
pp::RankMeasurement rank(double slowest, pw::AxisMask group) {
  pp::RankMeasurement m;
  m.iterations = {slowest, slowest / 2, slowest / 4};
  m.row = {1.0, 0.1, 0.2, 0.05};
  m.events = {{0, 3, 0.0, 0.5}, {0, 7, 0.5, 0.75}};
  m.collectives = {{pw::OpKind::all_reduce, group, "", 4, 8e6, 2e-3, 1e-3}};
  return m;
}

}  // namespace

TEST(MeasuredRun, RanksTravelAsDoublesAndComeBackWithTheirRank) {
  const auto r = tiny_pipeline();
  const auto pipe = r.program.grid.mask("pipe");
  const auto first = pp::pack(rank(1.0, pipe)), second = pp::pack(rank(2.0, pipe));
  std::vector<double> all = first;
  all.insert(all.end(), second.begin(), second.end());
  const std::vector<int> offsets = {0, static_cast<int>(first.size()), static_cast<int>(all.size())};
  const auto ranks = pp::unpack(all, offsets, 3);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[1].iterations, (std::vector<double>{2.0, 1.0, 0.5}));
  EXPECT_DOUBLE_EQ(ranks[1].row.other_idle, 0.05);
  ASSERT_EQ(ranks[1].events.size(), 2u);
  EXPECT_EQ(ranks[1].events[1].rank, 1);  // the rank it came from
  EXPECT_EQ(ranks[1].events[1].op, 7u);
  EXPECT_DOUBLE_EQ(ranks[1].events[1].end, 0.75);
  ASSERT_EQ(ranks[1].collectives.size(), 1u);
  EXPECT_EQ(ranks[1].collectives[0].kind, pw::OpKind::all_reduce);
  EXPECT_EQ(ranks[1].collectives[0].group, pipe);
  EXPECT_EQ(ranks[1].collectives[0].count, 4);
  EXPECT_DOUBLE_EQ(ranks[1].collectives[0].exposed, 1e-3);
}

TEST(MeasuredRun, TheSlowestRankTimesEachIterationAndCollectivesArePerRank) {
  const auto r = tiny_pipeline();
  const auto pipe = r.program.grid.mask("pipe");
  auto slow = rank(2.0, pipe);
  slow.iterations[2] = 3.0;  // its last iteration is the slowest of all
  const auto run = pp::merge_ranks(r.w, r.program, r.machine, {rank(1.0, pipe), slow});
  EXPECT_EQ(run.iterations, (std::vector<double>{2.0, 1.0, 3.0}));
  EXPECT_DOUBLE_EQ(run.median, 2.0);
  EXPECT_DOUBLE_EQ(run.summary.iteration_seconds, 2.0);
  EXPECT_EQ(run.events.size(), 4u);
  ASSERT_EQ(run.summary.collectives.size(), 1u);
  EXPECT_EQ(run.summary.collectives[0].count, 4);  // 8 calls over 2 ranks
  EXPECT_DOUBLE_EQ(run.summary.collectives[0].bytes, 8e6);
  EXPECT_EQ(run.summary.collectives[0].algorithm, "measured");

  const auto j = pp::to_json(run, "cpu", 1);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["warmup_iterations"], 1);
  EXPECT_EQ(j["iterations_s"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["iteration_s"].get<double>(), 2.0);

  EXPECT_EQ(pp::measured_heading(run, "tiny", 2, "cpu", 1, "perlmutter"),
            "tiny on 2 ranks, cpu backend, framework " + run.summary.framework +
                ", 3 iterations measured after 1 warm-up (on perlmutter)\n"
                "  iterations            2 s  1 s  3 s  (median 2 s)\n");
}
