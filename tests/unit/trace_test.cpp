// The trace writer: valid, compact JSON whatever it is fed; the same op slices the whole-string writer
// used to make; flows with one start and one end each; idle slices where the walker charged waits;
// counters of the bytes in flight; and the ranks traced by default.
#include "reports/trace.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <sstream>

#include "reports/trace_writer.hpp"
#include "test_util.hpp"
#include "workloads/lower.hpp"
#include "workloads/op_walker.hpp"

namespace reports = paratwin::reports;
namespace pw = paratwin::workloads;
using nlohmann::json;
using paratwin::test::example;

namespace {

pw::Program lowered(const std::string& file) {
  return pw::lower(example(file));
}

// Every rank's ops as soon as its own streams and dependencies allow, each taking 1 µs: a recorded run
// (ranks are not synchronised, which the trace does not need).
std::vector<pw::OpEvent> walk_all(const pw::Program& p) {
  std::vector<pw::OpEvent> events;
  for (int64_t rank = 0; rank < p.grid.size(); ++rank) {
    const auto& role = p.roles[static_cast<size_t>(p.role_of(rank))];
    pw::OpWalker w(role);
    std::priority_queue<std::pair<double, uint32_t>, std::vector<std::pair<double, uint32_t>>, std::greater<>> running;
    std::map<uint32_t, double> began;
    double now = 0;
    while (!w.finished()) {
      w.start_ready(pw::kStreamOrder, [&](int, uint32_t i) {
        w.started(i, now);
        running.emplace(now + 1e-6, i);
        began[i] = now;
      });
      const auto [t, i] = running.top();
      running.pop();
      now = t;
      w.finished(i, began[i], t);
      events.push_back({rank, i, began[i], t});
    }
  }
  return events;
}

std::vector<json> of_phase(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

}  // namespace

TEST(Trace, MeasuredRunIsValidJsonWithEveryOpAsASlice) {
  const auto p = lowered("tiny-pp-1f1b.json");
  const auto events = walk_all(p);
  const std::string text = reports::chrome_trace(p, events);
  const json trace = json::parse(text);  // throws on invalid JSON
  EXPECT_EQ(text.substr(0, text.find("\n],")).find(": "), std::string::npos) << "compact: no spaces after keys";
  EXPECT_EQ(trace["displayTimeUnit"], "ms");

  // The whole-string writer's slices: one per op (memory events aside), on the op's stream, with its
  // name and times in µs.
  std::multiset<std::tuple<int64_t, int, std::string, int64_t, int64_t>> expected, got;
  for (const auto& e : events) {
    const auto& op = p.roles[static_cast<size_t>(p.role_of(e.rank))].ops[e.op];
    if (op.kind == pw::OpKind::alloc || op.kind == pw::OpKind::free) continue;
    expected.emplace(e.rank, static_cast<int>(op.stream), op.name, std::llround(e.start * 1e9),
                     std::llround((e.end - e.start) * 1e9));
  }
  for (const auto& x : of_phase(trace, "X"))
    got.emplace(x["pid"].get<int64_t>(), x["tid"].get<int>(), x["name"].get<std::string>(),
                std::llround(x["ts"].get<double>() * 1e3), std::llround(x["dur"].get<double>() * 1e3));
  EXPECT_EQ(got, expected);

  std::set<int64_t> named;
  for (const auto& m : of_phase(trace, "M"))
    if (m["name"] == "process_name" && m["args"]["name"].get<std::string>().rfind("rank ", 0) == 0)
      named.insert(m["pid"].get<int64_t>());
  EXPECT_EQ(named, (std::set<int64_t>{0, 1}));
}

TEST(Trace, EveryFlowHasOneStartAndOneEndOnSlices) {
  const auto p = lowered("tiny-pp-1f1b.json");
  const json trace = json::parse(reports::chrome_trace(p, walk_all(p)));
  std::map<int64_t, std::string> phases;  // id -> "s", "t"..., "f" in file order
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "s" || e["ph"] == "t" || e["ph"] == "f")
      phases[e["id"].get<int64_t>()] += e["ph"].get<std::string>();
  std::set<std::tuple<int64_t, int, int64_t>> slice_starts;
  for (const auto& x : of_phase(trace, "X"))
    slice_starts.emplace(x["pid"], x["tid"], std::llround(x["ts"].get<double>() * 1e3));
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    EXPECT_TRUE(slice_starts.count({e["pid"], e["tid"], std::llround(e["ts"].get<double>() * 1e3)}))
        << "a flow event not at a slice's start: " << e.dump();
  }
  // Every message between the two stages: a send on one, its consumer on the other.
  int64_t sends = 0;
  for (const auto& role : p.roles)
    sends += paratwin::test::count_where(role, [](const pw::Op& op) { return op.kind == pw::OpKind::send; });
  EXPECT_EQ(static_cast<int64_t>(phases.size()), sends);
  for (const auto& [id, ph] : phases) EXPECT_EQ(ph, "sf") << "flow " << id;
  for (const auto& f : of_phase(trace, "f")) EXPECT_EQ(f["bp"], "e");
}

TEST(Trace, CollectiveFlowsJoinTracedMembersInTheOrderTheyJoined) {
  const auto p = lowered("tiny-gpt-3d.json");  // 8 ranks, x, y and z groups
  const json trace = json::parse(reports::chrome_trace(p, walk_all(p)));
  std::map<int64_t, std::vector<json>> flows;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "s" || e["ph"] == "t" || e["ph"] == "f") flows[e["id"].get<int64_t>()].push_back(e);
  ASSERT_FALSE(flows.empty());
  for (const auto& [id, steps] : flows) {
    ASSERT_GE(steps.size(), 2u);
    EXPECT_EQ(steps.front()["ph"], "s");
    EXPECT_EQ(steps.back()["ph"], "f");
    for (size_t i = 1; i + 1 < steps.size(); ++i) EXPECT_EQ(steps[i]["ph"], "t");
    for (size_t i = 1; i < steps.size(); ++i) EXPECT_GE(steps[i]["ts"].get<double>(), steps[i - 1]["ts"].get<double>());
    EXPECT_EQ(steps.front()["name"], "coll");
  }
}

TEST(Trace, IdleSlicesAreTheWalkersPiecesBackFromTheirEnd) {
  const auto p = lowered("tiny-pp-1f1b.json");
  std::ostringstream out;
  reports::ChromeTraceWriter w(p, out);
  w.traced(1, {1});
  const auto& ops = p.roles[1].ops;
  uint32_t recv = 0;
  while (ops[recv].kind != pw::OpKind::recv) ++recv;
  // Waited 2 µs for a message, before that 1 µs for something else: until 10 µs.
  w.idle(1, {{pw::IdleCause::message, 2e-6, static_cast<int64_t>(recv)}, {pw::IdleCause::other, 1e-6, -1}}, 10e-6);
  w.finish();
  const json trace = json::parse(out.str());
  const auto slices = of_phase(trace, "X");
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]["name"], "bubble");
  EXPECT_EQ(slices[0]["tid"], pw::kStreams);
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(slices[0]["dur"].get<double>(), 2);
  EXPECT_EQ(slices[0]["args"]["on"], ops[recv].name);
  EXPECT_EQ(slices[1]["name"], "other idle");
  EXPECT_DOUBLE_EQ(slices[1]["ts"].get<double>(), 7);
  EXPECT_DOUBLE_EQ(slices[1]["dur"].get<double>(), 1);
  bool idle_named = false;
  for (const auto& m : of_phase(trace, "M"))
    idle_named = idle_named || (m["name"] == "thread_name" && m["args"]["name"] == "idle");
  EXPECT_TRUE(idle_named);
}

TEST(Trace, CountersFollowTheBytesInFlightOneValuePerInstant) {
  const auto p = lowered("tiny-pp-1f1b.json");
  std::ostringstream out;
  reports::ChromeTraceWriter w(p, out);
  w.traced(0, {0});
  const auto& ops = p.roles[0].ops;
  std::vector<uint32_t> sends;
  for (uint32_t i = 0; i < ops.size() && sends.size() < 2; ++i)
    if (ops[i].kind == pw::OpKind::send) sends.push_back(i);
  ASSERT_EQ(sends.size(), 2u);
  const double b0 = ops[sends[0]].bytes, b1 = ops[sends[1]].bytes;
  w.started(0, sends[0], 1e-6);
  w.started(0, sends[1], 1e-6);  // the same instant: one value
  w.finished({0, sends[0], 1e-6, 3e-6});
  w.finished({0, sends[1], 1e-6, 4e-6});
  w.finish();
  const auto counters = of_phase(json::parse(out.str()), "C");
  ASSERT_EQ(counters.size(), 3u);
  // Stage 1 is on this node or another one, as the placement says: all bytes in one series.
  const bool same_node = p.placement().slot_of(0).node == p.placement().slot_of(1).node;
  const char* series = same_node ? "intra-node" : "network";
  const char* other = same_node ? "network" : "intra-node";
  const auto bytes = [](const json& c, const char* s) { return std::llround(c["args"][s].get<double>()); };
  EXPECT_EQ(counters[0]["name"], "in flight");
  EXPECT_EQ(counters[0]["pid"].get<int64_t>(), 1000000000) << "node 0's counters";
  EXPECT_DOUBLE_EQ(counters[0]["ts"].get<double>(), 1);
  EXPECT_EQ(bytes(counters[0], series), std::llround(b0 + b1));
  EXPECT_EQ(bytes(counters[0], other), 0);
  EXPECT_EQ(bytes(counters[1], series), std::llround(b1));
  EXPECT_EQ(bytes(counters[2], series), 0);
  EXPECT_DOUBLE_EQ(counters[2]["ts"].get<double>(), 4);
}

TEST(Trace, StandsForIsInTheMetadataWhenFolded) {
  const auto p = lowered("tiny-gpt-3d.json");
  std::ostringstream out;
  reports::ChromeTraceWriter w(p, out, "about");
  w.traced(0, {0, 1, 2, 3});
  w.finish();
  const json trace = json::parse(out.str());
  EXPECT_EQ(trace["otherData"]["stands_for"]["rank 0"], "0-3");
  EXPECT_EQ(trace["otherData"]["about"], "about");
  EXPECT_EQ(of_phase(trace, "M")[0]["args"]["name"], "rank 0 (stage 0; stands for 4 ranks)");
}

TEST(Trace, DescribesRankListsAsRuns) {
  EXPECT_EQ(reports::describe_ranks({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(reports::describe_ranks({0, 64, 128, 192}), "0, 64, ..., 192 (every 64)");
  EXPECT_EQ(reports::describe_ranks({3, 5}), "3, 5");
  EXPECT_EQ(reports::describe_ranks({7}), "7");
  EXPECT_EQ(reports::describe_ranks({0, 1, 2, 10, 20}), "0-2, 10, 20");
}

TEST(Trace, SameEventsGiveTheSameBytes) {
  const auto p = lowered("tiny-gpt-3d.json");
  const auto events = walk_all(p);
  EXPECT_EQ(reports::chrome_trace(p, events), reports::chrome_trace(p, events));
}

TEST(DefaultTraceRanks, OneRankPerPipelineStage) {
  const auto p = lowered("tiny-pp-1f1b.json");  // 2 stages, no tensor parallelism
  EXPECT_EQ(reports::default_trace_ranks(p), (std::vector<int64_t>{0, 1}));
}

TEST(DefaultTraceRanks, PipelineColumnAndStageZerosTensorGroup) {
  // 8 tensor ranks per stage, 8 stages: stage 0's group (0-7) and the first rank of every stage.
  const auto p = lowered("gpt-175b-selene-64-sp-selective.json");
  EXPECT_EQ(reports::default_trace_ranks(p), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 40, 48, 56}));
}

TEST(DefaultTraceRanks, LargeTensorGridsGiveTheirAxisLines) {
  // x 4, y 2, z 8 (64 ranks, more than kSmallTensorGroup): the x line 0-3, the y line 0 and 4, the z
  // line 0, 8, ..., 56; data replica 0 only.
  auto w = example("gpt-80b-frontier-8192.json");
  w.parallel.data = 2;
  const auto ranks = reports::default_trace_ranks(pw::lower(w));
  EXPECT_EQ(ranks, (std::vector<int64_t>{0, 1, 2, 3, 4, 8, 16, 24, 32, 40, 48, 56}));
}

TEST(DefaultTraceRanks, TedTracesExpertZero) {
  // tensor 2 x expert 2 x data 1: stage 0's tensor group, expert coordinate 0.
  const auto p = lowered("tiny-moe-ted.json");
  EXPECT_EQ(p.grid.axes()[0].name, "tensor");
  EXPECT_EQ(reports::default_trace_ranks(p), (std::vector<int64_t>{0, 1}));
}
