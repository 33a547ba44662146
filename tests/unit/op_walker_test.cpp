// The op walker and its idle ledger: the schedule rules every driver shares, and one rule for what a
// wait of the compute stream is charged to.
#include "workloads/op_walker.hpp"

#include <gtest/gtest.h>

#include <queue>

namespace pw = paratwin::workloads;

namespace {

uint32_t add(pw::Role& r, pw::OpKind kind, pw::Stream s, std::vector<uint32_t> deps, pw::AxisMask group = 0) {
  pw::Op op;
  op.kind = kind;
  op.stream = s;
  op.group = group;
  op.name = "op";
  op.dep_begin = static_cast<uint32_t>(r.deps.size());
  for (auto d : deps) r.deps.push_back(d);
  op.dep_count = static_cast<uint32_t>(deps.size());
  r.ops.push_back(op);
  return static_cast<uint32_t>(r.ops.size() - 1);
}

// Runs the role as soon as streams and dependencies allow, each op taking cost[op] seconds, as the
// analytical model drives the walker; returns its events, in op order.
std::vector<pw::OpEvent> walk(pw::OpWalker& w, const std::vector<double>& cost, double& end) {
  std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>> running;
  std::vector<pw::OpEvent> events(cost.size());
  double now = 0;
  while (!w.finished()) {
    w.start_ready(pw::kStreamOrder, [&](int, uint32_t i) {
      w.started(i, now);
      running.emplace(now + cost[i], i);
      events[i] = {0, i, now, now + cost[i]};
    });
    const auto [t, i] = running.top();
    running.pop();
    now = t;
    w.finished(i, events[i].start, t);
  }
  end = now;
  w.close(end);
  return events;
}

// Compute waits for a tensor all-reduce and a pipeline message, then for a host copy; the data
// all-reduce ends the iteration after the last compute op.
struct Example {
  pw::Role role;
  uint32_t gemm0, all_reduce, recv, gemm1, copy, adam, grad_sync;
  Example() {
    role.name = "stage 0";
    gemm0 = add(role, pw::OpKind::gemm, pw::Stream::compute, {});
    all_reduce = add(role, pw::OpKind::all_reduce, pw::Stream::tensor, {gemm0}, 1);
    recv = add(role, pw::OpKind::recv, pw::Stream::recv_fwd, {});
    gemm1 = add(role, pw::OpKind::gemm, pw::Stream::compute, {all_reduce, recv});
    copy = add(role, pw::OpKind::host_transfer, pw::Stream::host, {gemm1});
    adam = add(role, pw::OpKind::optimizer, pw::Stream::compute, {copy});
    grad_sync = add(role, pw::OpKind::all_reduce, pw::Stream::data, {gemm1}, 2);
  }
};

}  // namespace

TEST(OpWalker, ChargesAWaitToWhatRanOnTheCriticalPath) {
  Example x;
  pw::OpWalker w(x.role);
  // gemm0 1 s; the all-reduce 2 s (ends at 3); the message arrives at 4; gemm1 1 s (4-5); the copy
  // 0.5 s; adam 1 s (5.5-6.5); the gradient all-reduce 3 s (5-8).
  std::vector<double> cost = {1, 2, 4, 1, 0.5, 1, 3};
  double end = 0;
  walk(w, cost, end);
  EXPECT_DOUBLE_EQ(end, 8);
  const auto& l = w.ledger();
  EXPECT_DOUBLE_EQ(l.compute, 3);
  EXPECT_DOUBLE_EQ(l.bubble, 3);          // 1-4: the message ended last, the all-reduce is not charged
  EXPECT_DOUBLE_EQ(l.other_idle, 0.5);    // 5-5.5: the host copy
  EXPECT_DOUBLE_EQ(l.exposed_comm, 1.5);  // 6.5-8: the gradient all-reduce ends the iteration
  EXPECT_DOUBLE_EQ(l.compute + l.bubble + l.other_idle + l.exposed_comm, end);
  ASSERT_EQ(l.exposed.size(), 1u);
  EXPECT_DOUBLE_EQ((l.exposed.at({static_cast<int>(pw::OpKind::all_reduce), 2})), 1.5);

  // The message first: now the all-reduce released gemm1, and its 2 s of wait are exposed.
  pw::OpWalker v(x.role);
  cost[x.recv] = 0.5;
  walk(v, cost, end);
  EXPECT_DOUBLE_EQ(v.ledger().bubble, 0);
  EXPECT_DOUBLE_EQ((v.ledger().exposed.at({static_cast<int>(pw::OpKind::all_reduce), 1})), 2);
}

TEST(OpWalker, TiesGoToTheFirstListedDependency) {
  Example x;
  pw::OpWalker w(x.role);
  double end = 0;
  walk(w, {1, 2, 3, 1, 0, 0, 0}, end);  // the all-reduce and the message both end at 3
  EXPECT_DOUBLE_EQ(w.ledger().exposed_comm, 2);
  EXPECT_DOUBLE_EQ(w.ledger().bubble, 0);
}

TEST(OpWalker, KeepsStreamOrderAndDependencies) {
  Example x;
  pw::OpWalker w(x.role);
  EXPECT_EQ(w.ready(static_cast<int>(pw::Stream::compute)), x.gemm0);
  EXPECT_EQ(w.ready(static_cast<int>(pw::Stream::tensor)), -1);  // waits for gemm0
  EXPECT_THROW(w.started(x.gemm1, 0), std::logic_error);         // not its stream's next
  std::vector<uint32_t> order;
  w.start_ready(pw::kCommunicationFirst, [&](int, uint32_t i) {
    order.push_back(i);
    w.started(i, 0);
  });
  EXPECT_EQ(order, (std::vector<uint32_t>{x.recv, x.gemm0}));     // communication first
  EXPECT_EQ(w.ready(static_cast<int>(pw::Stream::compute)), -1);  // busy
  EXPECT_THROW(w.finished(x.all_reduce, 0, 1), std::logic_error);
}

TEST(OpWalker, ReplayingARunsEventsGivesItsLedger) {
  Example x;
  pw::OpWalker w(x.role, 0);
  double end = 0;
  const auto events = walk(w, {1, 2, 4, 1, 0.5, 1, 3}, end);
  const auto replayed = pw::replay_ledger(x.role, events, 0, end);
  EXPECT_DOUBLE_EQ(replayed.compute, w.ledger().compute);
  EXPECT_DOUBLE_EQ(replayed.exposed_comm, w.ledger().exposed_comm);
  EXPECT_DOUBLE_EQ(replayed.bubble, w.ledger().bubble);
  EXPECT_DOUBLE_EQ(replayed.other_idle, w.ledger().other_idle);
  EXPECT_EQ(replayed.exposed, w.ledger().exposed);

  auto broken = events;
  broken[x.gemm1].start = 2;  // before the message it needs ended
  EXPECT_THROW(pw::replay_ledger(x.role, broken, 0, end), std::invalid_argument);
  broken = events;
  broken.pop_back();
  EXPECT_THROW(pw::replay_ledger(x.role, broken, 0, end), std::invalid_argument);
  EXPECT_THROW(pw::replay_ledger(x.role, events, 0, 7), std::invalid_argument);  // an op ends after the end
}

TEST(OpWalker, FollowsTheCriticalPathBackThroughTheWait) {
  // The stage's activations arrive (0-4), are all-gathered over the tensor group (4-5), then used.
  pw::Role role;
  role.name = "stage 1";
  const auto gemm0 = add(role, pw::OpKind::gemm, pw::Stream::compute, {});
  const auto recv = add(role, pw::OpKind::recv, pw::Stream::recv_fwd, {});
  const auto gather = add(role, pw::OpKind::all_gather, pw::Stream::tensor, {recv}, 1);
  add(role, pw::OpKind::gemm, pw::Stream::compute, {gather, gemm0});
  pw::OpWalker w(role);
  double end = 0;
  walk(w, {1, 4, 1, 1}, end);
  EXPECT_DOUBLE_EQ(w.ledger().bubble, 3);        // 1-4: the message was in flight
  EXPECT_DOUBLE_EQ(w.ledger().exposed_comm, 1);  // 4-5: the all-gather ran
  EXPECT_DOUBLE_EQ(w.ledger().other_idle, 0);

  // A gap between release and start (an executor's dispatch) is other idle.
  pw::OpWalker v(role);
  v.started(gemm0, 0);
  v.finished(gemm0, 0, 1);
  v.started(recv, 0);
  v.finished(recv, 0, 4);
  v.started(gather, 4.5);
  v.finished(gather, 4.5, 5.5);
  const auto& pieces = v.started(3, 6);
  ASSERT_EQ(pieces.size(), 4u);  // latest first: dispatch, the all-gather, dispatch, the message
  EXPECT_DOUBLE_EQ(v.ledger().other_idle, 1);
  EXPECT_DOUBLE_EQ(v.ledger().exposed_comm, 1);
  EXPECT_DOUBLE_EQ(v.ledger().bubble, 3);
  EXPECT_EQ(pieces[1].blocker, gather);
  EXPECT_EQ(pieces[3].blocker, recv);
}
