// Two runs side by side: the rows (every figure of both, collectives matched by kind, group and size,
// those of one run only shown as absent), the change, the JSON document and the plot script.
#include "predict/run_comparison.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/input_error.hpp"
#include "tests/predict/tiny_pipeline.hpp"

namespace reports = paratwin::reports;
namespace pp = paratwin::predict;
namespace pw = paratwin::workloads;

namespace {

reports::RunSummary run(double iteration, double ring_seconds, bool with_all_gather) {
  const auto r = paratwin::test::tiny_pipeline();
  const auto pipe = r.program.grid.mask("pipe");
  std::vector<reports::CollectiveRow> collectives = {
      {pw::OpKind::all_reduce, pipe, "ring", 4, 8e6, ring_seconds, 1e-3}};
  if (with_all_gather) collectives.push_back({pw::OpKind::all_gather, pipe, "ring", 2, 2e6, 1e-3, 0});
  return reports::summarize(r.w, r.program, r.machine, iteration, {{1.0, 0.1, 0.2, 0.0}, {1.5, 0.0, 0.1, 0.05}},
                            collectives);
}

const pp::ComparisonRow& row(const std::vector<pp::ComparisonRow>& rows, const std::string& what) {
  for (const auto& r : rows)
    if (r.what == what) return r;
  throw std::logic_error("no row " + what);
}

}  // namespace

TEST(RunComparison, EveryFigureWithItsChange) {
  const auto rows = pp::comparison_rows(run(2.0, 2e-3, false), run(1.5, 4e-3, true));
  const auto& it = row(rows, "iteration time");
  EXPECT_DOUBLE_EQ(*it.a, 2.0);
  EXPECT_DOUBLE_EQ(*it.b, 1.5);
  EXPECT_DOUBLE_EQ(*it.change_percent(), -25.0);
  EXPECT_DOUBLE_EQ(*row(rows, "busiest stage: compute").a, 1.5);
  const auto& total = row(rows, "all_reduce pipe (group size 2): total");
  EXPECT_DOUBLE_EQ(*total.a, 2.0);  // ms
  EXPECT_DOUBLE_EQ(*total.b, 4.0);
  EXPECT_DOUBLE_EQ(*total.change_percent(), 100.0);
  EXPECT_DOUBLE_EQ(*row(rows, "all_reduce pipe (group size 2): size per call").a, 2e6);  // 8 MB over 4 calls
  // A collective only B runs: A's side is absent, and so is the change.
  const auto& only_b = row(rows, "all_gather pipe (group size 2): total");
  EXPECT_FALSE(only_b.a);
  EXPECT_DOUBLE_EQ(*only_b.b, 1.0);
  EXPECT_FALSE(only_b.change_percent());
}

TEST(RunComparison, TableAndJson) {
  const reports::LabelledRun a{"frontier", run(2.0, 2e-3, false)}, b{"frontier-2x-nic", run(1.5, 4e-3, true)};
  const auto table = pp::comparison_table(a, b);
  EXPECT_NE(table.find("A  frontier: "), std::string::npos) << table;
  EXPECT_NE(table.find("B  frontier-2x-nic: "), std::string::npos) << table;
  EXPECT_NE(table.find("iteration time [s]"), std::string::npos) << table;
  EXPECT_NE(table.find("-25.0 %"), std::string::npos) << table;
  const auto j = pp::comparison_json(a, b);
  EXPECT_EQ(j["a"]["label"], "frontier");
  EXPECT_DOUBLE_EQ(j["b"]["summary"]["iteration_s"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["rows"][0]["change_percent"].get<double>(), -25.0);
  bool absent = false;
  // Text rows (a collective's algorithm) have no change_percent: only figure rows are looked at.
  for (const auto& r : j["rows"])
    absent |= r.contains("change_percent") && r["a"].is_null() && r["change_percent"].is_null();
  EXPECT_TRUE(absent);
}

// The algorithm each run used, per collective, and the memory verdict of each: a run that does not fit
// is marked in the header, on the memory rows and in the JSON document (compare once dropped it).
TEST(RunComparison, AlgorithmPerSideAndOutOfMemoryMarked) {
  auto a = run(2.0, 2e-3, false), b = run(1.5, 4e-3, false);
  b.collectives.front().algorithm = "tree";
  b.device_bytes = b.max_bytes_per_rank / 2;
  b.fits = false;
  const auto rows = pp::comparison_rows(a, b);
  const auto& algorithm = row(rows, "all_reduce pipe (group size 2): algorithm");
  EXPECT_EQ(*algorithm.a_text, "ring");
  EXPECT_EQ(*algorithm.b_text, "tree");
  EXPECT_FALSE(algorithm.change_percent());
  EXPECT_EQ(row(rows, "memory per rank").note, "B: OUT OF MEMORY");
  EXPECT_EQ(*row(rows, "fits in device memory").b_text, "NO: OOM");
  const auto table = pp::comparison_table({"a", a}, {"b", b}, {"a note"});
  EXPECT_NE(table.find("GiB: fits\nB  b: "), std::string::npos) << table;
  EXPECT_NE(table.find("GiB: OUT OF MEMORY\n"), std::string::npos) << table;
  EXPECT_NE(table.find("ring           tree                  changed"), std::string::npos) << table;
  EXPECT_NE(table.find("<< B: OUT OF MEMORY"), std::string::npos) << table;
  EXPECT_NE(table.find("  a note\n"), std::string::npos) << table;
  const auto j = pp::comparison_json({"a", a}, {"b", b}, {"a note"});
  EXPECT_FALSE(j["a"]["out_of_memory"].get<bool>());
  EXPECT_TRUE(j["b"]["out_of_memory"].get<bool>());
  bool algorithm_row = false;
  for (const auto& r : j["rows"])
    if (r["what"] == "all_reduce pipe (group size 2): algorithm")
      algorithm_row = r["a"] == "ring" && r["b"] == "tree" && r["changed"] == true;
  EXPECT_TRUE(algorithm_row);
  EXPECT_EQ(j["notes"][0], "a note");
}

TEST(RunPlot, FormatByExtensionAndLabelsThatFit) {
  EXPECT_EQ(reports::plot_format("x/run.svg", "--plot"), "svg");
  EXPECT_EQ(reports::plot_format("run.png", "--plot"), "png");
  EXPECT_THROW(reports::plot_format("run.pdf", "--plot"), paratwin::InputError);
  EXPECT_THROW(reports::plot_format("run", "--plot"), paratwin::InputError);
  const std::string long_label(60, 'x');
  const auto one = reports::run_plot_script("t", {{"a", run(2.0, 2e-3, true)}}, "svg", "out.svg");
  EXPECT_NE(one.find("\"stage 0\""), std::string::npos) << one;  // one run: a bar per stage
  EXPECT_NE(one.find("set output 'out.svg'"), std::string::npos);
  const auto two = reports::run_plot_script("t", {{long_label, run(2.0, 2e-3, false)}, {"b", run(1.5, 4e-3, true)}},
                                            "png", "out.png");
  EXPECT_NE(two.find("pngcairo"), std::string::npos);
  EXPECT_NE(two.find("\"" + long_label + "\""), std::string::npos);  // two runs: a bar per run
  // The bottom margin holds the 60-character label upright.
  const auto at = two.find("set bmargin ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoi(two.substr(at + 12)), 37);
  EXPECT_NE(two.find("'b: exposed'"), std::string::npos);
}
