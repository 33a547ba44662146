// A sweep's run and outputs: the points left after an earlier run's journal, each rank's share, points
// evaluated in child processes with a line each, and the CSV, JSON and plot script of the rows.
#include "predict/sweep_outputs.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "common/input_error.hpp"
#include "predict/child_pool.hpp"
#include "predict/sweep_run.hpp"

namespace pp = paratwin::predict;

namespace {

std::string spec_file(const std::string& name) {
  return std::string(PARATWIN_SOURCE_DIR) + "/tests/e2e/sweep/" + name;
}

class SweepRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("paratwin-sweep-run-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    spec_ = pp::load_sweep_spec(spec_file("configurations.json"));
    points_ = pp::enumerate_points(spec_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The analytical points (every GPU count of every configuration).
  std::vector<size_t> analytical() const {
    std::vector<size_t> out;
    for (const auto& p : points_)
      if (p.model == "analytical") out.push_back(p.index);
    return out;
  }
  std::filesystem::path dir_;
  pp::SweepSpec spec_;
  std::vector<pp::SweepPoint> points_;
};

}  // namespace

TEST_F(SweepRun, PointsRunInChildrenAndResumeFromTheJournal) {
  const auto mine = analytical();
  ASSERT_EQ(mine.size(), 4u);
  std::vector<nlohmann::json> rows(points_.size());
  size_t done = 0;
  {
    pp::SweepJournal journal((dir_ / "journal.jsonl").string(), false);
    pp::SweepRunOptions options;
    options.jobs = 2;
    pp::run_sweep_points(
        spec_, points_, mine, options,
        [&](size_t index, nlohmann::json row, int) {
          journal.record(points_[index].key, row, 0);
          rows[index] = std::move(row);
          ++done;
        },
        nullptr, [&] { return done == mine.size(); });
  }
  for (size_t i : mine) EXPECT_EQ(rows[i]["status"], "ok") << rows[i].dump();
  const auto line = pp::sweep_progress(3, 8, points_[mine[0]], rows[mine[0]], 1.5, 2.25);
  EXPECT_EQ(line.rfind("[3/8] tiny-gpt-3d on frontier, 8 GPUs, analytical: ", 0), 0u) << line;
  EXPECT_NE(line.find(" s/iteration; elapsed 1.5 s, ETA 2.2 s"), std::string::npos) << line;
  auto failed = rows[mine[0]];
  failed["status"] = "failed";
  failed["error"] = "out of nodes";
  EXPECT_NE(pp::sweep_progress(1, 8, points_[mine[0]], failed, 0, 0).find(": FAILED: out of nodes; elapsed"),
            std::string::npos);

  // A second run skips what the journal holds.
  const pp::SweepJournal journal((dir_ / "journal.jsonl").string(), false);
  const auto resume = pp::resume_sweep(spec_, points_, journal, false);
  EXPECT_TRUE(resume.warnings.empty());
  EXPECT_EQ(resume.skipped, 4u);
  EXPECT_EQ(resume.todo.size(), 4u);
  EXPECT_EQ(resume.rows[mine[1]], rows[mine[1]]);
  EXPECT_TRUE(resume.rows[resume.todo[0]].is_null());
  // Each rank takes every size-th point left, from its own rank on.
  EXPECT_EQ(pp::share_of({5, 6, 7, 8, 9}, 1, 2), (std::vector<size_t>{6, 8}));
  EXPECT_EQ(pp::share_of({5}, 1, 2), (std::vector<size_t>{}));
}

// Journal rows are read as strictly as inputs: a row that is not an object, lacks a column, holds a
// value of the wrong kind or belongs to another point is dropped with a warning and computed again.
TEST_F(SweepRun, MalformedJournalRowsAreComputedAgain) {
  const auto i = analytical()[0];
  const auto good = pp::evaluate_point(spec_, points_[i]);
  ASSERT_EQ(good["status"], "ok");
  EXPECT_EQ(pp::row_problem(spec_, points_[i], good), "");
  EXPECT_EQ(pp::row_problem(spec_, points_[i], pp::failed_row(spec_, points_[i], "why")), "");
  const auto problem = [&](const std::function<void(nlohmann::json&)>& edit) {
    auto row = good;
    edit(row);
    return pp::row_problem(spec_, points_[i], row);
  };
  EXPECT_EQ(pp::row_problem(spec_, points_[i], "text"), "row is string, not an object");
  EXPECT_EQ(pp::row_problem(spec_, points_[i], {{"status", "ok"}}), "row.bubble_s is missing");
  EXPECT_EQ(problem([](auto& r) { r["extra"] = 1; }), "row.extra is not a column of a sweep");
  EXPECT_EQ(problem([](auto& r) { r["iteration_s"] = "fast"; }),
            "row.iteration_s is not a finite, non-negative number");
  EXPECT_EQ(problem([](auto& r) { r["iteration_s"] = 0; }), "row.iteration_s is not positive");
  EXPECT_EQ(problem([](auto& r) { r["nodes"] = nullptr; }), "row.nodes is not a positive integer");
  EXPECT_EQ(problem([](auto& r) { r["fits"] = "yes"; }), "row.fits is not true or false");
  EXPECT_EQ(problem([](auto& r) { r["status"] = "done"; }), "row.status = \"done\" is neither \"ok\" nor \"failed\"");
  EXPECT_EQ(problem([](auto& r) { r["status"] = "failed"; }), "row.error is empty for a failed point");
  EXPECT_NE(problem([](auto& r) { r["gpus"] = 4096; }).find("but the point is"), std::string::npos);

  {
    pp::SweepJournal journal((dir_ / "journal.jsonl").string(), false);
    journal.record(points_[i].key, "not a row", 0);
    journal.record(points_[analytical()[1]].key, {{"status", "ok"}}, 0);
  }
  const pp::SweepJournal journal((dir_ / "journal.jsonl").string(), false);
  const auto resume = pp::resume_sweep(spec_, points_, journal, false);
  EXPECT_EQ(resume.skipped, 0u);
  EXPECT_EQ(resume.todo.size(), points_.size());
  ASSERT_EQ(resume.warnings.size(), 2u);
  EXPECT_NE(resume.warnings[0].find("dropped: row is string, not an object; computing it again"), std::string::npos)
      << resume.warnings[0];
}

// A second sweep on the same folder is told so, as bad input (exit 2), while the first holds its journal.
TEST_F(SweepRun, ASecondSweepOnTheSameFolderIsRefused) {
  const pp::SweepJournal first((dir_ / "journal.jsonl").string(), false);
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      pp::SweepJournal second((dir_ / "journal.jsonl").string(), false);
    } catch (const paratwin::InputError& e) {
      ::_exit(std::string(e.what()).find("another paratwin sweep is writing this folder") != std::string::npos ? 0 : 2);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(SweepRun, CsvJsonAndPlotsOfTheRows) {
  std::vector<nlohmann::json> rows(points_.size());
  for (const auto& p : points_) rows[p.index] = pp::failed_row(spec_, p, "not run");
  const auto i = analytical()[0];
  rows[i] = pp::evaluate_point(spec_, points_[i]);
  ASSERT_EQ(rows[i]["status"], "ok");

  const auto csv = pp::sweep_csv(rows);
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "workload,machine,gpus,nodes,configuration,global_batch,model,iteration_s,tokens_per_s,model_tflops_per_gpu,"
      "percent_of_peak,hardware_tflops_per_gpu,percent_of_peak_hardware,compute_s,exposed_comm_s,bubble_s,"
      "memory_gib_per_gpu,fits,status,error");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + static_cast<long>(rows.size()));
  EXPECT_EQ(pp::sweep_csv(rows), csv);  // the same rows, the same bytes

  const auto j = pp::sweep_json(spec_, rows);
  EXPECT_EQ(j["name"], "configurations");
  EXPECT_EQ(j["scaling"], "strong");
  EXPECT_EQ(j["library"], "machine profile");
  EXPECT_EQ(j["summary"], (nlohmann::json{{"points", 8}, {"ok", 1}, {"failed", 7}}));

  const auto gp = pp::sweep_plot_script(spec_, points_, rows, "png");
  EXPECT_NE(gp.find("$series0 << EOD\n8 "), std::string::npos) << gp;
  EXPECT_EQ(gp.find("$series1"), std::string::npos);  // one point succeeded: one series
  EXPECT_NE(gp.find("set output 'scaling.png'"), std::string::npos);
  EXPECT_NE(gp.find("title 'tiny-gpt-3d, frontier, 4d x2 y2 z2, analytical'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("\"tiny-gpt-3d frontier 8 c0 ana\""), std::string::npos) << gp;

  std::vector<nlohmann::json> none(points_.size());
  for (const auto& p : points_) none[p.index] = pp::failed_row(spec_, p, "not run");
  EXPECT_EQ(pp::write_sweep_plots(spec_, points_, none, dir_.string(), "svg"), "no plots: no point succeeded");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "plots.gp"));
}

// A child that outlives its timeout (here stopped by SIGSTOP, as a frozen point) is
// killed and gives a failed result saying so, while one within its timeout gives its value.
TEST(ChildPoolTimeout, AStoppedChildIsKilledAtItsTimeout) {
  pp::ChildPool pool(2);
  pool.start(
      0,
      [] {
        ::raise(SIGSTOP);
        return nlohmann::json(1);
      },
      0.5);
  pool.start(
      1, [] { return nlohmann::json(2); }, 30);
  std::map<size_t, pp::ChildResult> results;
  const auto start = std::chrono::steady_clock::now();
  while (results.size() < 2)
    if (auto r = pool.wait(-1)) results[r->id] = *r;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
  EXPECT_TRUE(results[1].ok);
  EXPECT_EQ(results[1].value, 2);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error,
            "timed out: the point's process ran 0.5 s (its timeout) without a result, stopped (SIGSTOP or a "
            "debugger), and was killed");
}
