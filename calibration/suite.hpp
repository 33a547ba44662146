#pragma once
// A calibration suite (`paratwin calibrate suite FILE`): small workloads, each with its rank count,
// compared on one machine with profiles fitted on the same rank counts. The format is in
// calibration/README.md.
#include <string>
#include <vector>

#include "calibration/compare.hpp"

namespace paratwin::calibration {

struct SuiteEntry {
  std::string workload;  // path, resolved against the suite file's folder
  std::string label;     // what it stands for: "DP", "TP-1D", ...
  int64_t ranks = 2;
};

struct Suite {
  std::string file;
  std::string name, description;
  std::string machine = "localhost";
  std::string backend = "cpu";
  int iterations = 10, warmup = 2;  // exec
  int repeats = 5;                  // calibrate micro
  double tolerance = 0.10;          // a prediction within this fraction of the measured median passes
  std::vector<SuiteEntry> entries;
  // The distinct rank counts, ascending: one profile each.
  std::vector<int64_t> rank_counts() const;
};

// Throws InputError naming the file and JSON path of what is wrong (unknown keys too).
Suite load_suite(const std::string& path);

// The suite's report: a Markdown table of every workload (predicted, measured median, min, max,
// error, verdict), the suite's CSV, and a gnuplot script of predicted-versus-measured bars.
struct SuiteResult {
  SuiteEntry entry;
  Comparison comparison;
};
std::string suite_markdown_table(const Suite& suite, const std::vector<SuiteResult>& results);
std::string suite_csv(const std::vector<SuiteResult>& results);
std::string suite_bars_script(const Suite& suite, const std::vector<SuiteResult>& results, const std::string& svg);
// Per op class of one comparison: predicted and measured bars side by side.
std::string class_bars_script(const Comparison& c, const std::string& svg);

}  // namespace paratwin::calibration
