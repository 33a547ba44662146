// `paratwin baseline check|update` as a library: which points are simulated, the baselines of a run's
// rows, the comparison with the committed files and what it reports.
#include "validation/baselines.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/input_error.hpp"

namespace pv = paratwin::validation;

namespace {

// One suite: a point of 64 GPUs and one of 1,024.
pv::ReferenceSuite two_points() {
  pv::ReferenceSuite s;
  s.name = "s";
  s.points.resize(2);
  s.points[0].label = "small";
  s.points[1].label = "large";
  return s;
}
const pv::PointGpus kGpus = {{64, 1024}};

// Rows of a run: the small point simulated (40, analytically 41), the large one analytical (30).
std::vector<pv::ValidationRow> rows_of(const std::vector<pv::ReferenceSuite>& suites, double small = 40) {
  std::vector<pv::ValidationRow> rows(2);
  for (size_t i = 0; i < 2; ++i) {
    rows[i].suite = &suites[0];
    rows[i].point = &suites[0].points[i];
    rows[i].gpus = kGpus[0][i];
  }
  rows[0].model = "simulate";
  rows[0].predicted = small;
  rows[0].analytical = 41;
  rows[1].model = "analytical";
  rows[1].predicted = rows[1].analytical = 30;
  return rows;
}

std::vector<std::string> models(const std::vector<pv::ReferenceTask>& tasks) {
  std::vector<std::string> out;
  for (const auto& t : tasks) out.push_back(t.model);
  return out;
}

}  // namespace

TEST(Baselines, ACheckSimulatesWhatTheCommittedBaselineSimulated) {
  const std::vector<pv::ReferenceSuite> suites{two_points()};
  const std::map<std::string, pv::Baseline> committed = {
      {"s", {"s", "percent_of_peak", {{"small", "simulate", 64, 40.0}, {"large", "analytical", 1024, 30.0}}}}};
  pv::BaselineOptions check;
  EXPECT_EQ(models(pv::baseline_tasks(suites, kGpus, committed, check)),
            (std::vector<std::string>{"simulate", "analytical"}));
  check.simulate_up_to = 32;  // told to simulate less
  EXPECT_EQ(models(pv::baseline_tasks(suites, kGpus, committed, check)),
            (std::vector<std::string>{"analytical", "analytical"}));
  pv::BaselineOptions update;
  update.update = true;  // an update simulates every point
  EXPECT_EQ(models(pv::baseline_tasks(suites, kGpus, committed, update)),
            (std::vector<std::string>{"simulate", "simulate"}));
  // Without a committed baseline a check simulates as an update does.
  EXPECT_EQ(models(pv::baseline_tasks(suites, kGpus, {}, pv::BaselineOptions{})),
            (std::vector<std::string>{"simulate", "simulate"}));
  // validate's choice: "auto" simulates up to a size.
  EXPECT_EQ(models(pv::reference_tasks(suites, kGpus, "auto", 100)),
            (std::vector<std::string>{"simulate", "analytical"}));
  EXPECT_EQ(models(pv::reference_tasks(suites, kGpus, "analytical", 100)),
            (std::vector<std::string>{"analytical", "analytical"}));
}

TEST(Baselines, CheckReportsWhetherTheyHoldAndWhatMoved) {
  const std::vector<pv::ReferenceSuite> suites{two_points()};
  const auto now = pv::baselines_of(suites, rows_of(suites));
  ASSERT_EQ(now.at("s").points.size(), 3u);  // small analytical and simulated, large analytical
  EXPECT_EQ(now.at("s").points[1].model, "simulate");
  EXPECT_EQ(*now.at("s").points[0].value, 41);

  pv::BaselineOptions options;
  options.dir = "base";
  const auto same = pv::compare_with_committed(suites, now, now, options);
  EXPECT_EQ(same.moved(), 0u);
  EXPECT_EQ(pv::baseline_report(same, options), "baselines hold: 3 points of 1 suite(s) within 1 % of base\n");

  const auto moved = pv::compare_with_committed(suites, now, pv::baselines_of(suites, rows_of(suites, 36)), options);
  EXPECT_EQ(moved.moved(), 1u);  // the simulation, -10 %
  const auto report = pv::baseline_report(moved, options);
  EXPECT_EQ(report.rfind("baselines moved: 1 of 3 points beyond 1 % of base\n", 0), 0u) << report;
  EXPECT_NE(report.find("If the change is intended, run `paratwin baseline update` and commit base with it.\n"),
            std::string::npos);
  // Moved by edited machines: not a regression to commit, a what-if that compare answers.
  auto what_if = options;
  what_if.machines = "edited";
  const auto by_machines = pv::baseline_report(moved, what_if);
  EXPECT_EQ(by_machines.find("If the change is intended"), std::string::npos) << by_machines;
  EXPECT_NE(by_machines.find("These are what the machines of edited move"), std::string::npos) << by_machines;
  EXPECT_NE(by_machines.find("paratwin compare --machines edited"), std::string::npos) << by_machines;

  // Simulating less leaves the larger simulated baselines unchecked, and says so.
  options.simulate_up_to = 32;
  auto analytical = rows_of(suites);
  analytical[0].model = "analytical";
  const auto fewer = pv::compare_with_committed(suites, now, pv::baselines_of(suites, analytical), options);
  EXPECT_EQ(fewer.unchecked, 1u);
  EXPECT_EQ(pv::baseline_report(fewer, options),
            "not checked: 1 simulated baselines above --simulate-up-to 32 GPUs\n"
            "baselines hold: 2 points of 1 suite(s) within 1 % of base\n");
}

TEST(Baselines, AMissingBaselineFailsACheckAndAnUpdateWritesIt) {
  const std::vector<pv::ReferenceSuite> suites{two_points()};
  const auto now = pv::baselines_of(suites, rows_of(suites));
  pv::BaselineOptions options;
  options.dir = "base";
  try {
    pv::compare_with_committed(suites, {}, now, options);
    FAIL() << "a check without a baseline must fail";
  } catch (const paratwin::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "base/s.json: no baseline for suite s: run `paratwin baseline update` and commit it");
  }
  options.update = true;
  const auto update = pv::compare_with_committed(suites, {}, now, options);
  EXPECT_EQ(update.moved(), 3u);  // every point appeared
  const auto report = pv::baseline_report(update, options);
  EXPECT_EQ(report.rfind("rewrote base: 3 of 3 points changed (3 beyond 1 %):\n", 0), 0u) << report;
  EXPECT_EQ(pv::baseline_report(pv::compare_with_committed(suites, now, now, options), options),
            "baselines unchanged: 3 points of 1 suite(s) in base\n");
}

TEST(Baselines, CommittedFilesAreReadBySuite) {
  const auto dir = std::filesystem::temp_directory_path() / ("paratwin-baselines-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<pv::ReferenceSuite> suites{two_points()};
  const auto now = pv::baselines_of(suites, rows_of(suites));
  EXPECT_EQ(pv::baseline_file(dir.string(), "s"), (dir / "s.json").string());
  EXPECT_TRUE(pv::committed_baselines(suites, dir.string()).empty());
  std::ofstream(dir / "s.json") << pv::baseline_json(now.at("s"));
  const auto committed = pv::committed_baselines(suites, dir.string());
  ASSERT_EQ(committed.count("s"), 1u);
  EXPECT_EQ(pv::baseline_json(committed.at("s")), pv::baseline_json(now.at("s")));

  // A file that holds another suite's baseline, or another metric, is refused with the key's path.
  const auto refused = [&](const std::string& key, const std::string& value) {
    auto b = now.at("s");
    (key == "suite" ? b.suite : b.metric) = value;
    std::ofstream(dir / "s.json") << pv::baseline_json(b);
    try {
      pv::committed_baselines(suites, dir.string());
    } catch (const paratwin::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(refused("suite", "t"),
            (dir / "s.json").string() + ": suite = \"t\" but this file holds the baseline of suite \"s\"");
  EXPECT_NE(refused("metric", "pflops").find("s.json: metric = \"pflops\" but suite s measures "), std::string::npos);
  std::filesystem::remove_all(dir);
}
