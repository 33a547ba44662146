// The checks of a run's files (common/run_files.hpp), the rule for names that become paths, the sweep
// of stale temporaries, and the text checks of JSON input and messages.
#include "common/run_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/output_temporaries.hpp"
#include "common/path_name.hpp"
#include "common/report_text.hpp"
#include "common/text_file.hpp"

namespace fs = std::filesystem;
using namespace paratwin;

namespace {

// A fresh folder of the test's own, the current directory while the test runs.
class InFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = fs::current_path();
    dir_ = fs::temp_directory_path() / ("paratwin-run-files-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::current_path(dir_);
  }
  void TearDown() override {
    fs::current_path(before_);
    fs::remove_all(dir_);
  }
  static void touch(const std::string& path, const std::string& text = "{}") { std::ofstream(path) << text; }
  static std::string error_of(const RunFiles& files) {
    try {
      files.check();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  fs::path before_, dir_;
};

}  // namespace

TEST_F(InFolder, AnOutputThatIsAnInputIsRefusedNamingBoth) {
  touch("w.json");
  fs::create_symlink("w.json", "link.json");
  fs::create_hard_link("w.json", "hard.json");
  fs::create_directory("sub");
  for (const std::string& out : std::vector<std::string>{"w.json", "./w.json", "sub/../w.json", "link.json",
                                                         "hard.json", (dir_ / "w.json").string()})
    EXPECT_EQ(error_of(RunFiles().input("--workload", "w.json").output("--json", out)),
              "--json " + out +
                  ": is the same file as --workload w.json, an input of this run: the output would "
                  "replace it; choose another output")
        << out;
  EXPECT_EQ(error_of(RunFiles().input("--workload", "w.json").output("--json", "other.json")), "");
}

TEST_F(InFolder, TwoOutputsOnOneFileAreRefusedWhetherOrNotItExists) {
  EXPECT_NE(error_of(RunFiles().output("--json", "x.json").output("--trace", "./x.json")).find("another output"),
            std::string::npos);
  // In a folder still to be made (a search's --emit).
  EXPECT_NE(error_of(RunFiles().output("--emit", "em/index.csv").output("--json", "em/./index.csv")).find("--emit"),
            std::string::npos);
  // A dangling link and the file it will create.
  fs::create_symlink("target.json", "dangling.json");
  EXPECT_NE(error_of(RunFiles().output("--json", "target.json").output("--plot", "dangling.json")), "");
  EXPECT_EQ(error_of(RunFiles().output("--json", "a.json").output("--trace", "b.json")), "");
}

TEST_F(InFolder, SpecialFilesAndNamesOfNoFileAreLeftOut) {
  // Written through, /dev/stdout replaces nothing; a built-in machine's name is no file.
  EXPECT_EQ(error_of(RunFiles().output("--json", "/dev/stdout").output("--trace", "/dev/stdout")), "");
  EXPECT_EQ(error_of(RunFiles().input("--machine", "frontier").output("--json", "x.json")), "");
  EXPECT_EQ(error_of(RunFiles().input("--workload", "").output("--json", "")), "");
}

TEST_F(InFolder, WriteFilesAtomicallyRefusesOneFileTwice) {
  EXPECT_THROW(write_files_atomically({{"x.json", "a"}, {"./x.json", "b"}}), InputError);
  EXPECT_FALSE(fs::exists("x.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator("."), fs::directory_iterator()), 0);
}

TEST_F(InFolder, StaleTemporariesOfDeadProcessesAreRemovedOnTheNextWrite) {
  // A PID no process has: past the kernel's largest (pid_max is at most 2^22).
  const std::string dead = "4194305";
  for (const std::string suffix : {".stream", ".1", ""}) touch("t.json.tmp-" + dead + suffix);
  touch("t.json.tmp-1.stream");                 // PID 1 runs: its file is its own business
  touch("t.json.tmp-" + dead + ".old");         // not a name the writer makes
  touch("other.json.tmp-" + dead + ".stream");  // another target's
  write_file_atomically("t.json", "{}\n");
  EXPECT_FALSE(fs::exists("t.json.tmp-" + dead + ".stream"));
  EXPECT_FALSE(fs::exists("t.json.tmp-" + dead + ".1"));
  EXPECT_FALSE(fs::exists("t.json.tmp-" + dead));
  EXPECT_TRUE(fs::exists("t.json.tmp-1.stream"));
  EXPECT_TRUE(fs::exists("t.json.tmp-" + dead + ".old"));
  EXPECT_TRUE(fs::exists("other.json.tmp-" + dead + ".stream"));
}

TEST_F(InFolder, TrackedTemporariesAreRemovedOnDemand) {
  StreamedOutput out("t.json");
  out.stream() << "[";
  const std::string temporary = "t.json.tmp-" + std::to_string(::getpid()) + ".stream";
  ASSERT_TRUE(fs::exists(temporary));
  remove_output_temporaries();  // what the SIGINT/SIGTERM handler does
  EXPECT_FALSE(fs::exists(temporary));
}

TEST(PathName, LettersDigitsDashUnderscoreDotButNotDotOrDotDot) {
  for (const std::string ok : {"localhost", "selene-weak", "a_b", "v1.2", ".hidden", "..."})
    EXPECT_TRUE(is_path_name(ok)) << ok;
  for (const std::string bad : {"", ".", "..", "a/b", "../x", "a b", "a\\b", "caf\xc3\xa9", "x\n"})
    EXPECT_FALSE(is_path_name(bad)) << bad;
}

TEST(Utf8, TheFirstByteThatBreaksItIsFound) {
  EXPECT_EQ(invalid_utf8_at("plain"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("bad\xff"), 3u);
  EXPECT_EQ(invalid_utf8_at("a\xc3"), 1u);             // truncated
  EXPECT_EQ(invalid_utf8_at("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("x\xed\xa0\x80"), 1u);     // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("ok\x80"), 2u);            // a stray continuation byte
}

TEST(ExactNumber, AValueJustPastABoundIsNotPrintedAsTheBound) {
  EXPECT_EQ(exact_number(1e6), "1e+06");
  EXPECT_EQ(exact_number(1000000.5), "1000000.5");
  EXPECT_EQ(exact_number(0.1), "0.1");
  EXPECT_EQ(exact_number(-0.5), "-0.5");
  EXPECT_EQ(exact_number(1e6 + 1e-9), "1000000.000000001");
}

TEST(ParseJson, ANulByteAndWhateverFollowsIsRefused) {
  const std::string text = std::string("{\"a\": 1}") + '\0' + "{\"garbage";
  try {
    parse_json<InputError>(text, "f.json");
    FAIL() << "accepted a NUL";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.json: is not valid JSON: a NUL byte at line 1, column 9 (byte 8)");
  }
  EXPECT_THROW(parse_json<InputError>(std::string("{\n\"a\": \"x") + '\0' + "\"}", "f.json"), InputError);
  EXPECT_EQ(parse_json<InputError>("{\"a\": 1}\n", "f.json")["a"], 1);
}
