// The runs behind a comparison: the launcher's words, a failing run's message (its command and the end
// of its log), and the child processes and files they rest on.
#include "calibration/runs.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "common/child_process.hpp"
#include "common/input_error.hpp"
#include "common/text_file.hpp"
#include "tests/calibration/temp_files.hpp"

namespace pc = paratwin::calibration;

namespace {

class Runs : public paratwin::test::TempFiles {};

std::string failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_F(Runs, TheLauncherIsItsWords) {
  EXPECT_EQ(pc::split_launcher("  srun  --mpi=pmix "), (std::vector<std::string>{"srun", "--mpi=pmix"}));
  EXPECT_NE(error_of([] { pc::split_launcher("  "); }).find("--mpirun: is empty"), std::string::npos);
}

TEST_F(Runs, AFailingRunSaysWhatRanAndHowItEnded) {
  pc::Launch launch;
  // The "launcher" prints and fails, whatever it is asked to run.
  launch.mpirun = {"sh", "-c", "echo cannot reach the nodes; exit 3", "sh"};
  const auto log = (dir_ / "micro.log").string();
  const auto why = failure_of([&] { pc::run_micro_benchmarks(launch, 2, 1, {}, (dir_ / "p.json").string(), log); });
  EXPECT_NE(why.find("the micro-benchmarks on 2 ranks failed (exit status 3): sh -c"), std::string::npos) << why;
  EXPECT_NE(why.find("-np 2 paratwin calibrate micro --backend cpu --machine localhost --repeats 1"), std::string::npos)
      << why;
  EXPECT_NE(why.find("last lines of " + log + ":\n  cannot reach the nodes\n"), std::string::npos) << why;

  // A launcher that is not installed is the --mpirun option's fault, said before anything runs.
  try {
    pc::installed_launcher("no-such-launcher-here --oversubscribe");
    ADD_FAILURE() << "installed_launcher accepted a launcher that is not on the PATH";
  } catch (const paratwin::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--mpirun = \"no-such-launcher-here --oversubscribe\": no-such-launcher-here is not on the PATH");
  }
  launch.mpirun = {"no-such-launcher-here"};
  EXPECT_NE(failure_of([&] {
              pc::run_micro_benchmarks(launch, 2, 1, {}, "p.json", log);
            }).find("no-such-launcher-here is not on the PATH"),
            std::string::npos);
}

TEST_F(Runs, ChildProcessesAndFilesWrittenWhole) {
  const auto log = (dir_ / "child.log").string();
  EXPECT_EQ(paratwin::run_logged({"sh", "-c", "pwd; echo to stderr >&2; exit 5"}, log, dir_.string()), 5);
  EXPECT_EQ(paratwin::tail_of(log, 1), "  to stderr\n");
  EXPECT_EQ(paratwin::tail_of(log, 5), "  " + dir_.string() + "\n  to stderr\n");
  EXPECT_EQ(paratwin::run_logged({"no-such-program-here"}, log), 127);
  EXPECT_EQ(paratwin::find_on_path("no-such-program-here"), "");
  EXPECT_NE(paratwin::find_on_path("sh"), "");

  const auto file = (dir_ / "out.txt").string();
  paratwin::write_file_atomically(file, "one\n");
  paratwin::write_file_atomically(file, "two\n");
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "two\n");
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  EXPECT_NE(error_of([&] {
              paratwin::write_file_atomically((dir_ / "no" / "such.txt").string(), "x");
            }).find("cannot be written"),
            std::string::npos);
}
