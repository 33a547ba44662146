// The executor's watchdog: a rank without progress for --timeout seconds is reported with what it
// waits on; steps and waits count as progress; 0 never expires.
#include "exec/watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "tests/unit/test_util.hpp"

namespace {

using paratwin::exec::Watchdog;
using namespace std::chrono_literals;

const paratwin::workloads::Program& tiny_dp() {
  static const auto program = paratwin::workloads::lower(paratwin::test::example("tiny-dp.json"));
  return program;
}

// The index of rank 0's first op of `kind`.
uint32_t first(paratwin::workloads::OpKind kind) {
  const auto& ops = tiny_dp().roles[static_cast<size_t>(tiny_dp().role_of(0))].ops;
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == kind) return i;
  ADD_FAILURE() << "no such op";
  return 0;
}

TEST(Watchdog, DefaultTimeoutFromThePrediction) {
  EXPECT_EQ(paratwin::exec::default_timeout(0.001), 60);
  EXPECT_EQ(paratwin::exec::default_timeout(10), 200);
  EXPECT_EQ(paratwin::exec::default_timeout(0), 600);
  EXPECT_EQ(paratwin::exec::default_timeout(-1), 600);
}

TEST(Watchdog, NamesTheRankTheStepAndTheOps) {
  std::promise<std::string> said;
  Watchdog watchdog(tiny_dp(), 0, 0.2, [&](const std::string& m) { said.set_value(m); });
  watchdog.step("measured iteration 2 of 3");
  watchdog.waiting({first(paratwin::workloads::OpKind::all_reduce)});
  auto message = said.get_future();
  ASSERT_EQ(message.wait_for(5s), std::future_status::ready);
  const std::string m = message.get();
  EXPECT_NE(m.find("rank 0 made no progress for "), std::string::npos) << m;
  EXPECT_NE(m.find("(--timeout 0.2) in measured iteration 2 of 3, waiting on op "), std::string::npos) << m;
  EXPECT_NE(m.find("(all_reduce, "), std::string::npos) << m;
  EXPECT_NE(m.find("group data) with ranks 0, 1"), std::string::npos) << m;
}

TEST(Watchdog, AStepWithoutOps) {
  std::promise<std::string> said;
  Watchdog watchdog(tiny_dp(), 1, 0.1, [&](const std::string& m) { said.set_value(m); });
  watchdog.step("the barrier that starts measured iteration 1 of 3");
  auto message = said.get_future();
  ASSERT_EQ(message.wait_for(5s), std::future_status::ready);
  const std::string m = message.get();
  EXPECT_NE(m.find("rank 1 made no progress"), std::string::npos) << m;
  EXPECT_TRUE(m.ends_with(" in the barrier that starts measured iteration 1 of 3")) << m;
}

TEST(Watchdog, ProgressKeepsItQuiet) {
  bool expired = false;
  {
    Watchdog watchdog(tiny_dp(), 0, 0.3, [&](const std::string&) { expired = true; });
    // Twice the timeout in all, never a third of it without progress.
    for (int i = 0; i < 6; ++i) {
      std::this_thread::sleep_for(100ms);
      watchdog.waiting({0});
    }
  }
  EXPECT_FALSE(expired);
}

TEST(Watchdog, ZeroNeverExpires) {
  bool expired = false;
  {
    Watchdog watchdog(tiny_dp(), 0, 0, [&](const std::string&) { expired = true; });
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_FALSE(expired);
}

}  // namespace
