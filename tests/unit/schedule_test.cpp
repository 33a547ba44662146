// Pipeline schedules against [narayanan2021megatron] Figures 3 and 4 (p = 4 devices, m = 8 micro-batches; the
// interleaved schedule with v = 2 chunks, dark = chunk a, light = chunk b), and the invariants of
// AxoNN's message-driven schedule ([singh2022axonn]).
#include "workloads/schedule.hpp"

#include <gtest/gtest.h>

#include <map>

namespace pw = paratwin::workloads;

namespace {

std::string order(pw::Schedule kind, int64_t stage, int64_t chunks = 1, int64_t limit = 0) {
  const pw::ScheduleSpec spec{kind, 4, 8, chunks, limit};
  return pw::describe(pw::stage_schedule(spec, stage), chunks);
}

}  // namespace

TEST(Schedule, GPipeMatchesFigure3) {
  for (int s = 0; s < 4; ++s)
    EXPECT_EQ(order(pw::Schedule::gpipe, s), "F1 F2 F3 F4 F5 F6 F7 F8 B1 B2 B3 B4 B5 B6 B7 B8");
}

TEST(Schedule, OneFOneBMatchesFigure4Top) {
  EXPECT_EQ(order(pw::Schedule::one_f_one_b, 0), "F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8");
  EXPECT_EQ(order(pw::Schedule::one_f_one_b, 1), "F1 F2 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 F8 B6 B7 B8");
  EXPECT_EQ(order(pw::Schedule::one_f_one_b, 2), "F1 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 F8 B7 B8");
  EXPECT_EQ(order(pw::Schedule::one_f_one_b, 3), "F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8");
}

TEST(Schedule, InterleavedMatchesFigure4Bottom) {
  // Device 1 runs chunk a of micro-batches 1-4, chunk b of 1-4, then 5-6 of chunk a before its first
  // backward (warm-up (p-1)·2 + (v-1)·p = 10), then alternates, then drains.
  EXPECT_EQ(order(pw::Schedule::interleaved, 0, 2),
            "F1a F2a F3a F4a F1b F2b F3b F4b F5a F6a "
            "F7a B1b F8a B2b F5b B3b F6b B4b F7b B1a F8b B2a "
            "B3a B4a B5b B6b B7b B8b B5a B6a B7a B8a");
  EXPECT_EQ(order(pw::Schedule::interleaved, 3, 2),
            "F1a F2a F3a F4a F1b B1b F2b B2b F3b B3b F4b B4b F5a B1a F6a B2a F7a B3a F8a B4a "
            "F5b B5b F6b B6b F7b B7b F8b B8b B5a B6a B7a B8a");
}

// With one chunk per stage the interleaved schedule is plain 1F1B, warm-up and all.
TEST(Schedule, InterleavedWithOneChunkIsOneFOneB) {
  for (int64_t s = 0; s < 4; ++s)
    EXPECT_EQ(order(pw::Schedule::interleaved, s, 1), order(pw::Schedule::one_f_one_b, s));
}

TEST(Schedule, EverySlotOnceAndForwardBeforeBackward) {
  for (auto kind : {pw::Schedule::gpipe, pw::Schedule::one_f_one_b, pw::Schedule::interleaved, pw::Schedule::axonn}) {
    const int64_t chunks = kind == pw::Schedule::interleaved ? 2 : 1;
    const pw::ScheduleSpec spec{kind, 4, 8, chunks, 0};
    for (int64_t s = 0; s < 4; ++s) {
      std::map<std::pair<int, int>, int> seen;  // (mb, chunk) -> 1 after F, 2 after B
      for (const auto& slot : pw::stage_schedule(spec, s)) {
        auto& state = seen[{slot.micro_batch, slot.chunk}];
        EXPECT_EQ(state, slot.forward ? 0 : 1) << pw::to_string(kind) << " stage " << s;
        state = slot.forward ? 1 : 2;
      }
      EXPECT_EQ(seen.size(), static_cast<size_t>(8 * chunks));
      for (const auto& [key, state] : seen) EXPECT_EQ(state, 2);
    }
  }
}

TEST(Schedule, MessageDrivenRespectsThePipelineLimit) {
  for (int64_t limit : {1, 2, 4, 6}) {
    const pw::ScheduleSpec spec{pw::Schedule::axonn, 4, 8, 1, limit};
    int in_flight = 0, peak = 0;
    for (const auto& slot : pw::stage_schedule(spec, 0)) {
      in_flight += slot.forward ? 1 : -1;
      peak = std::max(peak, in_flight);
    }
    EXPECT_EQ(peak, limit) << "limit " << limit;
  }
  // The last stage turns every forward straight into its backward.
  EXPECT_EQ(order(pw::Schedule::axonn, 3), "F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8");
}
