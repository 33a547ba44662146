// Validation of Programs: the checks must catch broken op lists, unmatched messages and deadlocks.
#include "workloads/program_graph.hpp"

#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

pw::Program two_stages() {
  pw::Program p;
  p.grid = pw::Grid({{"pipe", 2}});
  p.roles.resize(2);
  for (int s = 0; s < 2; ++s) {
    p.roles[s].stage = s;
    p.roles[s].name = "stage " + std::to_string(s);
    p.roles[s].ranks = 1;
  }
  return p;
}

uint32_t add(pw::Role& r, pw::OpKind kind, pw::Stream s, std::vector<uint32_t> deps, int peer = -1, uint64_t tag = 0) {
  pw::Op op;
  op.kind = kind;
  op.stream = s;
  op.peer_stage = peer;
  op.tag = tag;
  op.bytes = 8;
  op.flops = 1;
  op.name = "test";
  op.dep_begin = static_cast<uint32_t>(r.deps.size());
  for (auto d : deps) r.deps.push_back(d);
  op.dep_count = static_cast<uint32_t>(deps.size());
  r.ops.push_back(op);
  return static_cast<uint32_t>(r.ops.size() - 1);
}

}  // namespace

TEST(ProgramGraph, AcceptsAMatchedExchange) {
  auto p = two_stages();
  const auto c = add(p.roles[0], pw::OpKind::gemm, pw::Stream::compute, {});
  add(p.roles[0], pw::OpKind::send, pw::Stream::send_fwd, {c}, 1, 7);
  const auto r = add(p.roles[1], pw::OpKind::recv, pw::Stream::recv_fwd, {}, 0, 7);
  add(p.roles[1], pw::OpKind::gemm, pw::Stream::compute, {r});
  EXPECT_NO_THROW(pw::validate_program(p));
  const auto path = pw::critical_path(p, [](const pw::Role&, const pw::Op& op) { return op.flops; });
  EXPECT_DOUBLE_EQ(path.length, 3.0);  // gemm, the message, gemm
  EXPECT_EQ(path.ops.size(), 3u);
}

TEST(ProgramGraph, RejectsUnmatchedSend) {
  auto p = two_stages();
  add(p.roles[0], pw::OpKind::send, pw::Stream::send_fwd, {}, 1, 7);
  EXPECT_THROW(pw::validate_program(p), pw::ProgramError);
}

TEST(ProgramGraph, RejectsSizeMismatch) {
  auto p = two_stages();
  add(p.roles[0], pw::OpKind::send, pw::Stream::send_fwd, {}, 1, 7);
  add(p.roles[1], pw::OpKind::recv, pw::Stream::recv_fwd, {}, 0, 7);
  p.roles[1].ops[0].bytes = 16;
  EXPECT_THROW(pw::validate_program(p), pw::ProgramError);
}

TEST(ProgramGraph, RejectsForwardDependency) {
  auto p = two_stages();
  add(p.roles[0], pw::OpKind::gemm, pw::Stream::compute, {1});
  add(p.roles[0], pw::OpKind::gemm, pw::Stream::compute, {});
  EXPECT_THROW(pw::validate_program(p), pw::ProgramError);
}

TEST(ProgramGraph, DetectsDeadlock) {
  // Each stage first waits for the other's message, then sends its own: a cycle.
  auto p = two_stages();
  for (int s = 0; s < 2; ++s) {
    const auto r = add(p.roles[s], pw::OpKind::recv, pw::Stream::recv_fwd, {}, 1 - s, static_cast<uint64_t>(s));
    add(p.roles[s], pw::OpKind::send, pw::Stream::send_fwd, {r}, 1 - s, static_cast<uint64_t>(1 - s));
  }
  try {
    pw::validate_program(p);
    FAIL() << "deadlock not detected";
  } catch (const pw::ProgramError& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos);
  }
}

TEST(ProgramGraph, StreamOrderCanDeadlockToo) {
  // Both stages receive before they send on the same stream order: compute waits on the recv.
  auto p = two_stages();
  for (int s = 0; s < 2; ++s) {
    const auto r = add(p.roles[s], pw::OpKind::recv, pw::Stream::recv_fwd, {}, 1 - s, static_cast<uint64_t>(s));
    const auto c = add(p.roles[s], pw::OpKind::gemm, pw::Stream::compute, {r});
    add(p.roles[s], pw::OpKind::send, pw::Stream::send_fwd, {c}, 1 - s, static_cast<uint64_t>(1 - s));
  }
  EXPECT_THROW(pw::validate_program(p), pw::ProgramError);
}

TEST(ProgramGraph, TopologicalOrderHonoursStreamsAndDeps) {
  auto p = two_stages();
  auto& r = p.roles[0];
  const auto a = add(r, pw::OpKind::gemm, pw::Stream::compute, {});
  const auto b = add(r, pw::OpKind::all_reduce, pw::Stream::tensor, {a});
  const auto c = add(r, pw::OpKind::gemm, pw::Stream::compute, {});
  add(r, pw::OpKind::gemm, pw::Stream::compute, {b});
  r.ops[b].group = 1;
  const auto order = pw::topological_order(r);
  auto pos = [&](uint32_t i) { return std::find(order.begin(), order.end(), i) - order.begin(); };
  EXPECT_LT(pos(a), pos(b));
  EXPECT_LT(pos(a), pos(c));
  EXPECT_LT(pos(b), pos(3));
  EXPECT_LT(pos(c), pos(3));
}

TEST(ProgramGraph, EverySchedulesProgramValidates) {
  for (const char* schedule : {"gpipe", "1f1b", "interleaved", "axonn"}) {
    auto j = paratwin::test::base_gpt();
    j["model"]["layers"] = 8;
    j["training"]["global_batch"] = 8;
    j["parallelism"] = {
        {"pipeline",
         {{"stages", 4}, {"schedule", schedule}, {"chunks", std::string(schedule) == "interleaved" ? 2 : 1}}}};
    EXPECT_NO_THROW(pw::lower(paratwin::test::workload(j))) << schedule;
  }
}
