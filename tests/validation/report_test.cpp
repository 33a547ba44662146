// Reference suites: strict reading with file and JSON path in errors, the error of a
// prediction (ranges included), the statistics, and the regression baselines' round trip and diff.
#include "validation/report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "common/input_error.hpp"
#include "tests/calibration/temp_files.hpp"
#include "validation/reference.hpp"

namespace pv = paratwin::validation;
namespace fs = std::filesystem;

namespace {

class Reference : public paratwin::test::TempFiles {
 protected:
  static std::string suite(const std::string& points, const std::string& metric = "percent_of_peak",
                           const std::string& extra = "") {
    return R"({"suite": "s", "title": "t", "source": {"cite": "[narayanan2021megatron]", "where": "Table 1"}, "metric": ")" +
           metric + R"(", "units": "u", "held_fixed": "h", "assumptions": "", "end_to_end": true)" + extra +
           R"(, "points": [)" + points + "]}";
  }
};

const char* kPoint =
    R"({"label": "a", "workload": "w.json", "machine": "frontier", "published": 40, "where": "row 1"})";

}  // namespace

TEST_F(Reference, ReadsASuiteAndResolvesPathsAgainstItsFolder) {
  const auto s = pv::load_reference_suite(write("s.json", suite(kPoint)));
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.metric, pv::Metric::percent_of_peak);
  EXPECT_EQ(s.points[0].workload, (dir_ / "w.json").string());
  EXPECT_EQ(s.points[0].machine, "frontier");
  EXPECT_DOUBLE_EQ(pv::relative_error(s.points[0], 30), -0.25);
}

// A machine the source leaves open (a clock range): the point names the other machines to predict it on;
// their files resolve against the suite's folder and must exist.
TEST_F(Reference, MachineSensitivityResolvesItsFiles) {
  write("m.json", "{}");
  const auto s = pv::load_reference_suite(
      write("s.json", suite(R"({"label": "a", "workload": "w.json", "machine": "frontier", "published": 40,
          "where": "row 1", "sensitivity": [{"machines": ["m.json"]}]})",
                            "tokens_per_s_per_gpu")));
  EXPECT_EQ(s.metric, pv::Metric::tokens_per_s_per_gpu);
  ASSERT_EQ(s.points[0].sensitivity.size(), 1u);
  EXPECT_EQ(s.points[0].sensitivity[0].machines, std::vector<std::string>{(dir_ / "m.json").string()});
  EXPECT_TRUE(s.points[0].sensitivity[0].key.empty());
  const auto missing = write("s.json", suite(R"({"label": "a", "workload": "w.json", "machine": "frontier",
      "published": 40, "where": "row 1", "sensitivity": [{"machines": ["nope.json"]}]})"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(missing); }).find("points[0].sensitivity[0].machines"),
            std::string::npos);
}

TEST_F(Reference, ErrorsNameTheFileAndPath) {
  const auto unknown = write("s.json", suite(R"({"label": "a", "workload": "w.json", "machine": "frontier",
      "published": 40, "where": "row 1", "colour": 1})"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(unknown); }).find("s.json: points[0].colour"), std::string::npos);
  const auto missing = write("s.json", suite(R"({"label": "a", "workload": "nope.json", "machine": "frontier",
      "published": 40, "where": "row 1"})"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(missing); }).find("points[0].workload"), std::string::npos);
  const auto metric = write("s.json", suite(kPoint, "flops"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(metric); }).find("metric"), std::string::npos);
  const auto duplicate = write("s.json", suite(std::string(kPoint) + "," + kPoint));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(duplicate); }).find("points[1].label"), std::string::npos);
  const auto renamed = write("other.json", suite(kPoint));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(renamed); }).find("must match the file name"), std::string::npos);
  const auto collective = write("s.json", suite(kPoint, "speedup"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(collective); }).find("points[0]"), std::string::npos);
  const auto range = write("s.json", suite(R"({"label": "a", "workload": "w.json", "machine": "frontier",
      "published": 60, "range": [49, 54], "where": "row 1"})"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(range); }).find("points[0].published"), std::string::npos);
}

TEST_F(Reference, APointMayAskForTheBestConfiguration) {
  EXPECT_FALSE(pv::load_reference_suite(write("s.json", suite(kPoint))).points[0].best_configuration);
  const auto best = pv::load_reference_suite(write("s.json", suite(R"({"label": "a", "workload": "w.json",
      "configuration": "best", "machine": "frontier", "published": 40, "where": "row 1"})")));
  EXPECT_TRUE(best.points[0].best_configuration);
  const auto bad = write("s.json", suite(R"({"label": "a", "workload": "w.json", "configuration": "fastest",
      "machine": "frontier", "published": 40, "where": "row 1"})"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(bad); }).find("points[0].configuration"), std::string::npos);
}

TEST_F(Reference, CalibrationPointsAreLeftOutOfTheHeldOutErrors) {
  const auto s = pv::load_reference_suite(write("s.json", suite(std::string(kPoint) + R"(, {"label": "b",
      "workload": "w.json", "machine": "frontier", "published": 20, "where": "row 2", "calibration": true})")));
  EXPECT_FALSE(s.points[0].calibration);
  EXPECT_TRUE(s.points[1].calibration);
  std::vector<pv::ValidationRow> rows(2);
  for (size_t i = 0; i < 2; ++i) {
    rows[i].suite = &s;
    rows[i].point = &s.points[i];
    rows[i].predicted = 20;
  }
  const auto kept = pv::held_out({&rows[0], &rows[1]});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0]->point->label, "a");
  const std::vector<pv::ReferenceSuite> suites{s};
  for (auto& r : rows) {
    r.suite = &suites[0];
    r.point = &suites[0].points[static_cast<size_t>(&r - rows.data())];
  }
  const auto md = pv::validation_markdown(suites, rows, "paratwin validate");
  EXPECT_NE(md.find("without the points a profile parameter was fitted to | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| b (calibration) |"), std::string::npos) << md;
}

// validate reports per software stack: every point, those fitted to, the held-out error a stack is judged by.
TEST_F(Reference, StacksAreJudgedOnTheirHeldOutPoints) {
  const auto s = pv::load_reference_suite(write("s.json", suite(std::string(kPoint) + R"(, {"label": "b",
      "workload": "w.json", "machine": "frontier", "published": 20, "where": "row 2", "calibration": true},
      {"label": "c", "workload": "w.json", "machine": "frontier", "published": 50, "where": "row 3"})")));
  const std::vector<pv::ReferenceSuite> suites{s};
  std::vector<pv::ValidationRow> rows(3);
  const char* stacks[] = {"deepspeed", "deepspeed", "fsdp2"};
  const double predicted[] = {30, 20, 55};  // errors -25 %, 0 % (fitted), +10 %
  for (size_t i = 0; i < 3; ++i) {
    rows[i].suite = &suites[0];
    rows[i].point = &suites[0].points[i];
    rows[i].stack = stacks[i];
    rows[i].predicted = predicted[i];
  }
  const auto stats = pv::stack_stats({&rows[0], &rows[1], &rows[2]});
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].stack, "deepspeed");
  EXPECT_EQ(stats[0].all.points, 2u);
  EXPECT_EQ(stats[0].fitted, 1u);
  EXPECT_EQ(stats[0].held_out.points, 1u);
  EXPECT_NEAR(stats[0].held_out.mean_abs, 0.25, 1e-12);
  EXPECT_EQ(stats[1].stack, "fsdp2");
  EXPECT_NEAR(stats[1].held_out.mean_abs, 0.10, 1e-12);
  const auto md = pv::validation_markdown(suites, rows, "paratwin validate");
  EXPECT_NE(md.find("| deepspeed | 2 | 1 | 1 | 25.0 % | 25.0 % |"), std::string::npos) << md;
  const auto text = pv::validation_text(suites, rows);
  EXPECT_NE(text.find("fsdp2"), std::string::npos) << text;
  EXPECT_NE(pv::validation_csv(rows).find(",fsdp2\n"), std::string::npos);
}

TEST_F(Reference, ARangeCountsOnlyTheDistanceToItsNearestEnd) {
  const auto s = pv::load_reference_suite(write("s.json", suite(R"({"label": "a", "workload": "w.json",
      "machine": "frontier", "published": 51.5, "range": [49, 54], "where": "text"})")));
  const auto& p = s.points[0];
  EXPECT_DOUBLE_EQ(pv::relative_error(p, 50), 0);
  EXPECT_DOUBLE_EQ(pv::relative_error(p, 44.1), (44.1 - 49) / 49);
  EXPECT_DOUBLE_EQ(pv::relative_error(p, 59.4), (59.4 - 54) / 54);
}

TEST_F(Reference, ALowerBoundCountsOnlyAShortfall) {
  const auto s = pv::load_reference_suite(write("s.json", suite(R"({"label": "a", "workload": "w.json",
      "machine": "frontier", "published": 30, "lower_bound": true, "where": "more than 30x"})")));
  const auto& p = s.points[0];
  EXPECT_DOUBLE_EQ(pv::relative_error(p, 30), 0);
  EXPECT_DOUBLE_EQ(pv::relative_error(p, 300), 0);
  EXPECT_DOUBLE_EQ(pv::relative_error(p, 24), -0.2);
  const auto both = write("s.json", suite(R"({"label": "a", "workload": "w.json", "machine": "frontier",
      "published": 30, "range": [20, 40], "lower_bound": true, "where": "text"})"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(both); }).find("points[0].lower_bound"), std::string::npos);
}

TEST_F(Reference, CollectivePointsReadTheirLibraries) {
  const auto s = pv::load_reference_suite(write("s.json", suite(R"({"label": "c", "machine": "frontier",
      "published": 7, "where": "text", "collective": {"kind": "all_gather", "bytes": 1e9, "gpus": 2048,
      "library": "pccl", "versus": "rccl"}})",
                                                                "speedup")));
  ASSERT_TRUE(s.points[0].collective);
  EXPECT_EQ(s.points[0].collective->versus, "rccl");
  const auto same = write("s.json", suite(R"({"label": "c", "machine": "frontier", "published": 7, "where": "text",
      "collective": {"kind": "all_gather", "bytes": 1e9, "gpus": 2048, "library": "pccl", "versus": "pccl"}})",
                                          "speedup"));
  EXPECT_NE(error_of([&] { pv::load_reference_suite(same); }).find("points[0].collective.versus"), std::string::npos);
}

TEST_F(Reference, StatisticsSkipFailedPointsAndCountThem) {
  const auto s = pv::load_reference_suite(
      write("s.json", suite(std::string(kPoint) + R"(, {"label": "b", "workload": "w.json", "machine": "frontier",
      "published": 20, "where": "row 2"}, {"label": "c", "workload": "w.json", "machine": "frontier",
      "published": 10, "where": "row 3"})")));
  std::vector<pv::ValidationRow> rows(3);
  for (size_t i = 0; i < 3; ++i) {
    rows[i].suite = &s;
    rows[i].point = &s.points[i];
  }
  rows[0].predicted = 44;  // +10 %
  rows[1].predicted = 14;  // -30 %
  const auto stats = pv::error_stats({&rows[0], &rows[1], &rows[2]});
  EXPECT_EQ(stats.points, 2u);
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_NEAR(stats.mean_abs, 0.2, 1e-12);
  EXPECT_NEAR(stats.max_abs, 0.3, 1e-12);
  const auto csv = pv::validation_csv(rows);
  EXPECT_NE(csv.find("s,a,frontier,0,percent_of_peak,true,40,,,,44,10.00,"), std::string::npos) << csv;
  const auto md = pv::validation_markdown({s}, rows, "paratwin validate");
  EXPECT_NE(md.find("mean absolute error"), std::string::npos);
  EXPECT_NE(md.find("| 20.0 % | 30.0 % |"), std::string::npos) << md;
}

TEST_F(Reference, ASimulatedRowCarriesTheAnalyticalPredictionBesideIt) {
  const std::vector<pv::ReferenceSuite> suites{pv::load_reference_suite(write("s.json", suite(kPoint)))};
  std::vector<pv::ValidationRow> rows(1);
  rows[0].suite = &suites[0];
  rows[0].point = &suites[0].points[0];
  rows[0].model = "simulate";
  rows[0].predicted = 44;
  rows[0].analytical = 50;  // the simulation is 12 % below the closed form
  ASSERT_TRUE(rows[0].versus_analytical());
  EXPECT_NEAR(*rows[0].versus_analytical(), -0.12, 1e-12);
  EXPECT_NE(pv::validation_csv(rows).find(",simulate,44,10.00,50,-12.00,"), std::string::npos);
  EXPECT_NE(pv::validation_markdown(suites, rows, "paratwin validate").find("| simulate | 50 | -12.0 % |"),
            std::string::npos);
  // An analytical row is its own reference: no difference to report.
  rows[0].model = "analytical";
  EXPECT_FALSE(rows[0].versus_analytical());
}

TEST(Baseline, RoundTripsAndReportsEveryMove) {
  pv::Baseline before{"s",
                      "percent_of_peak",
                      {{"a", "analytical", 64, 40.0},
                       {"b", "analytical", 128, 30.0},
                       {"c", "simulate", 64, std::nullopt},
                       {"gone", "analytical", 8, 1.0}}};
  const auto parsed = pv::parse_baseline(pv::baseline_json(before), "b.json");
  ASSERT_EQ(parsed.points.size(), 4u);
  EXPECT_FALSE(parsed.points[2].value);
  EXPECT_DOUBLE_EQ(*parsed.points[1].value, 30.0);
  EXPECT_EQ(pv::baseline_json(parsed), pv::baseline_json(before));

  pv::Baseline after{"s",
                     "percent_of_peak",
                     {{"a", "analytical", 64, 40.2},
                      {"b", "analytical", 128, 27.0},
                      {"c", "simulate", 64, 5.0},
                      {"new", "analytical", 8, 1.0}}};
  const auto changes = pv::compare_baselines(parsed, after, 0.01);
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_FALSE(changes[0].beyond);  // +0.5 % is within 1 %
  EXPECT_TRUE(changes[1].beyond);   // -10 %
  EXPECT_NEAR(changes[1].change, -0.1, 1e-12);
  EXPECT_TRUE(changes[2].beyond);  // started to predict
  EXPECT_TRUE(changes[3].beyond);  // added
  EXPECT_TRUE(changes[4].beyond);  // removed
  const auto table = pv::changes_table(changes, true);
  EXPECT_EQ(table.find(" a "), std::string::npos) << table;
  EXPECT_NE(table.find("-10.0 %"), std::string::npos) << table;
  EXPECT_NE(table.find("removed"), std::string::npos);
  EXPECT_NE(table.find("added"), std::string::npos);
}

TEST(Baseline, BadFilesNameThePath) {
  try {
    pv::parse_baseline(R"({"suite": "s", "metric": "m", "points": [{"label": "a", "model": "guess", "gpus": 1}]})",
                       "b.json");
    FAIL() << "no error";
  } catch (const paratwin::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: points[0].model"), std::string::npos) << e.what();
  }
}

// A point twice (the second would silently win a comparison) and values no prediction can have.
TEST(Baseline, DuplicatePointsAndNonPositiveValuesAreRefused) {
  const auto error = [](const std::string& points) {
    try {
      pv::parse_baseline(R"({"suite": "s", "metric": "m", "points": [)" + points + "]}", "b.json");
    } catch (const paratwin::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string a = R"({"label": "a", "model": "analytical", "gpus": 8, "value": 1.5})";
  EXPECT_EQ(error(a + "," + R"({"label": "a", "model": "simulate", "gpus": 8, "value": 1.5})"), "no error");
  EXPECT_EQ(error(a + "," + a), "b.json: points[1]: point \"a\" (analytical) is listed twice");
  EXPECT_NE(error(R"({"label": "a", "model": "analytical", "gpus": 8, "value": -2})").find("b.json: points[0].value"),
            std::string::npos);
  EXPECT_EQ(error(R"({"label": "a", "model": "analytical", "gpus": 8, "value": 0})"),
            "b.json: points[0].value = 0 but every metric of a prediction is positive");
}

TEST_F(Reference, TheTextReportHasATablePerSuiteAndTheHeadline) {
  const std::vector<pv::ReferenceSuite> suites{pv::load_reference_suite(
      write("s.json", suite(std::string(kPoint) + R"(, {"label": "b", "workload": "w.json", "machine": "frontier",
      "published": 20, "range": [18, 22], "where": "row 2"})")))};
  std::vector<pv::ValidationRow> rows(2);
  for (size_t i = 0; i < 2; ++i) {
    rows[i].suite = &suites[0];
    rows[i].point = &suites[0].points[i];
    rows[i].model = "simulate";
    rows[i].gpus = 64;
  }
  rows[0].predicted = 44;  // +10 %
  rows[0].analytical = 40;
  rows[0].fits = false;
  rows[1].error = "no such machine";
  const auto text = pv::validation_text(suites, rows);
  EXPECT_NE(text.find("\ns: t\n  ([narayanan2021megatron], Table 1; percent_of_peak)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  a                                                 64 simulate             40           44"
                      "    +10.0%           40    +10.0%  (does not fit in memory)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("18-22       failed"), std::string::npos) << text;
  EXPECT_NE(text.find("no such machine\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  suite: 1 points, mean |error| 10.0 %, max 10.0 %, 1 failed\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nend-to-end points (% of peak, time or throughput per iteration): 1, mean |error| 10.0 %"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("phases and collective speedups"), std::string::npos);  // no such suite
}

TEST_F(Reference, SuitesAreSelectedByNameInTheOrderAsked) {
  // A folder of suites only, their workload one folder up.
  const auto dir = (dir_ / "suites").string();
  std::filesystem::create_directories(dir);
  for (const char* name : {"s", "u"}) {
    std::string text = suite(R"({"label": "a", "workload": "../w.json", "machine": "frontier", "published": 40,
        "where": "row 1"})");
    text.replace(text.find("\"s\""), 3, std::string("\"") + name + "\"");
    write(std::string("suites/") + name + ".json", text);
  }
  const auto suites = pv::load_reference_dir(dir);
  ASSERT_EQ(suites.size(), 2u);
  EXPECT_EQ(pv::select_reference_suites(suites, {}, dir).size(), 2u);
  const auto picked = pv::select_reference_suites(suites, {"u", "s"}, dir);
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].name, "u");
  EXPECT_EQ(picked[1].name, "s");
  const auto message = error_of([&] { pv::select_reference_suites(suites, {"v"}, dir); });
  EXPECT_NE(message.find("--suite = v: no such suite in " + dir + " (s, u)"), std::string::npos) << message;
}
