#pragma once
// Predicted versus measured: one workload simulated with a fitted profile (`simulate --json
// --trace`) and executed (`exec --json --trace`), compared per iteration and per op class. Reads the
// two runs' summaries and Chrome traces, nothing else, so that any pair of runs can be compared.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace paratwin::calibration {

// Seconds per rank (mean over the ranks) that one class of ops took in one iteration.
struct ClassRow {
  std::string name;
  double predicted = 0, measured = 0;
  // (predicted − measured) / measured; 0 when both are 0.
  double error() const;
};

struct Comparison {
  std::string workload, machine, backend;
  int64_t ranks = 0;
  double predicted = 0;                  // iteration seconds
  std::vector<double> measured;          // every measured iteration's seconds
  double measured_median = 0;            // what exec reports as its iteration time
  std::vector<ClassRow> classes;         // op classes, then exposed communication, bubble and idle
  double error() const;                  // of the prediction against the measured median
  double worst_iteration_error() const;  // the largest |error| against any single measured iteration
};

// The op classes the rows use, in order: GEMM, other compute, each collective kind, point-to-point,
// then exposed communication, pipeline bubble and other idle time (from the summaries).
const std::vector<std::string>& class_names();

// `where_*` name the files in error messages. Throws InputError when a document is not what simulate or
// exec writes, or when the two runs are of different workloads or rank counts.
Comparison compare_runs(const nlohmann::json& predicted_summary, const nlohmann::json& predicted_trace,
                        const nlohmann::json& measured_summary, const nlohmann::json& measured_trace,
                        const std::string& where_predicted, const std::string& where_measured);

// The report of one comparison: a Markdown section and CSV rows (header included).
std::string comparison_markdown(const Comparison& c);
std::string comparison_csv(const Comparison& c);

// A gnuplot script (data inline) drawing the two timelines one above the other, measured on top, every
// op of every rank as a bar coloured by its class, into `png`.
std::string timeline_script(const Comparison& c, const nlohmann::json& predicted_trace,
                            const nlohmann::json& measured_trace, const std::string& png);

}  // namespace paratwin::calibration
