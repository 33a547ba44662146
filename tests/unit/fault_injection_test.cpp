// exec --fail-at RANK:OP_NAME is checked against the Program: a fault that could never fire is refused.
#include "exec/fault_injection.hpp"

#include <gtest/gtest.h>

#include "common/input_error.hpp"
#include "tests/unit/test_util.hpp"

namespace {

using paratwin::InputError;
using paratwin::exec::parse_fault;

const paratwin::workloads::Program& tiny_dp() {
  static const auto program = paratwin::workloads::lower(paratwin::test::example("tiny-dp.json"));
  return program;
}

std::string refusal(const std::string& text) {
  try {
    parse_fault(text, tiny_dp());
  } catch (const InputError& e) {
    EXPECT_EQ(e.path(), "--fail-at");
    return e.what();
  }
  return "accepted";
}

TEST(FaultInjection, ParsesRankAndOp) {
  const auto fault = parse_fault("1:fc1", tiny_dp());
  EXPECT_EQ(fault.rank, 1);
  EXPECT_EQ(fault.op, "fc1");
  EXPECT_EQ(parse_fault("0:fc1", tiny_dp()).rank, 0);
}

TEST(FaultInjection, OpNameMayHoldAColon) {
  EXPECT_NE(refusal("1:fc1:x").find("rank 1 has no op named \"fc1:x\""), std::string::npos);
}

TEST(FaultInjection, RefusesWhatWouldNeverFire) {
  EXPECT_NE(refusal("1:nosuchop").find("rank 1 has no op named \"nosuchop\" (its ops: "), std::string::npos);
  EXPECT_NE(refusal("1:nosuchop").find("(its ops: embedding, ln1, qkv, "), std::string::npos);
  EXPECT_NE(refusal("7:fc1").find("rank 7 does not exist: the workload has 2 ranks, 0 to 1"), std::string::npos);
  EXPECT_NE(refusal("-1:fc1").find("rank -1 does not exist"), std::string::npos);
}

TEST(FaultInjection, RefusesMalformedText) {
  for (const char* text : {"1:", ":fc1", "fc1", "", ":"})
    EXPECT_NE(refusal(text).find("expected RANK:OP_NAME"), std::string::npos) << text;
  for (const char* text : {"x:fc1", "1x:fc1", " 1:fc1", "1.0:fc1", "99999999999999999999:fc1"})
    EXPECT_NE(refusal(text).find("is not a rank number"), std::string::npos) << text;
}

TEST(FaultInjection, ListsAFewOpNames) {
  const std::string why = refusal("0:nosuchop");
  EXPECT_NE(why.find(", ...)"), std::string::npos) << why;
}

}  // namespace
