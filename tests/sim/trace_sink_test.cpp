// The engine's trace: streamed as the simulation runs, its idle slices are the breakdown the engine
// reports (the same walker charges both), and a folded simulation traces the actors of the ranks asked
// for, each with the ranks it stands for.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "reports/trace.hpp"
#include "reports/trace_writer.hpp"
#include "sim/engine.hpp"
#include "tests/sim/megatron_pipeline.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace reports = paratwin::reports;
namespace pw = paratwin::workloads;
using nlohmann::json;

namespace {

// Simulates with a trace of `ranks` (empty: the default ones) streamed into a file (the child's
// results are numbers only); returns the trace, per rank the engine's exposed communication, bubble
// and other idle (seconds), and whether the result kept events in memory.
json simulate_traced(const pw::Program& program, bool fast, std::vector<int64_t> ranks, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".trace.json";
  const auto numbers = paratwin::test::run_simulation([&] {
    const paratwin::topology::Topology topology(paratwin::topology::resolve_machine("perlmutter").slice(2));
    paratwin::sim::SimOptions options;
    options.fidelity = fast ? paratwin::sim::Fidelity::fast : paratwin::sim::Fidelity::exact;
    options.fold = fast;
    options.trace_ranks = ranks.empty() ? reports::default_trace_ranks(program) : ranks;
    std::ofstream out(path);
    reports::ChromeTraceWriter writer(program, out);
    options.trace_sink = &writer;
    const auto r = paratwin::sim::simulate(program, topology, options);
    writer.finish();
    std::vector<double> v{r.events.empty() ? 0.0 : 1.0};
    for (const auto& t : r.ranks) v.insert(v.end(), {t.exposed_comm, t.bubble, t.other_idle});
    return v;
  });
  json breakdown = json::array();
  for (size_t i = 1; i + 2 < numbers.size(); i += 3) breakdown.push_back({numbers[i], numbers[i + 1], numbers[i + 2]});
  std::ifstream in(path);
  return {{"trace", json::parse(in)}, {"breakdown", breakdown}, {"kept_events", numbers.empty() || numbers[0] != 0}};
}

}  // namespace

TEST(TraceSink, IdleSlicesAddUpToTheEnginesBreakdown) {
  const auto program = paratwin::test::megatron_pipeline("trace");
  const json r = simulate_traced(program, false, {}, "exact");
  EXPECT_FALSE(r["kept_events"].get<bool>()) << "a streamed trace keeps no events in memory";
  std::map<int64_t, std::map<std::string, double>> idle;  // rank -> slice name -> µs
  std::map<int64_t, std::map<std::string, int>> pieces;   // rank -> slice name -> slices
  std::set<int64_t> processes;
  int64_t flows = 0;
  for (const auto& e : r["trace"]["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"].get<int64_t>() < 1000000000)
      processes.insert(e["pid"].get<int64_t>());  // ranks (node counters come after them)
    if (e["ph"] == "s") ++flows;
    if (e["ph"] == "X" && e["tid"] == pw::kStreams) {
      idle[e["pid"]][e["name"]] += e["dur"].get<double>();
      ++pieces[e["pid"]][e["name"]];
    }
  }
  // Default: stage 0's tensor group (0, 1) and stage 1's first rank (2).
  EXPECT_EQ(processes, (std::set<int64_t>{0, 1, 2}));
  EXPECT_GT(flows, 0);
  double bubble = 0;
  for (const int64_t rank : processes) {
    const auto& b = r["breakdown"][static_cast<size_t>(rank)];
    // Each slice's ends are rounded to the trace's 0.1 µs.
    const auto tolerance = [&](const char* name) { return 0.1 * (pieces[rank][name] + 1); };
    EXPECT_NEAR(idle[rank]["exposed comm"], b[0].get<double>() * 1e6, tolerance("exposed comm")) << "rank " << rank;
    EXPECT_NEAR(idle[rank]["bubble"], b[1].get<double>() * 1e6, tolerance("bubble")) << "rank " << rank;
    EXPECT_NEAR(idle[rank]["other idle"], b[2].get<double>() * 1e6, tolerance("other idle")) << "rank " << rank;
    bubble += b[1].get<double>();
  }
  EXPECT_GT(bubble, 0);
}

TEST(TraceSink, FoldedTracesTheActorsAndSaysWhomTheyStandFor) {
  // Tensor 4 (one Perlmutter node) x data 2: one actor, rank 0's, stands for all 8 ranks; rank 1 is
  // traced through it.
  json j = {{"name", "folded"},
            {"model", {{"layers", 2}, {"hidden", 1024}, {"heads", 16}, {"seq_len", 512}, {"vocab", 8192}}},
            {"training", {{"global_batch", 8}, {"micro_batch", 2}}},
            {"parallelism", {{"data", {{"size", 2}}}, {"tensor", {{"mode", "megatron"}, {"size", 4}}}}}};
  const auto program = pw::lower(pw::parse_workload(j, ""));
  const json r = simulate_traced(program, true, {1}, "folded");
  std::set<int64_t> processes;
  for (const auto& e : r["trace"]["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"].get<int64_t>() < 1000000000)
      processes.insert(e["pid"].get<int64_t>());
  ASSERT_EQ(processes.size(), 1u);
  const int64_t actor = *processes.begin();
  EXPECT_EQ(actor, 0);
  const auto& stands_for = r["trace"]["otherData"]["stands_for"];
  ASSERT_TRUE(stands_for.contains("rank 0")) << r["trace"]["otherData"].dump();
  EXPECT_EQ(stands_for["rank 0"], "0-7");
}
