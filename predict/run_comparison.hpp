#pragma once
// Two runs side by side: every figure of their summaries (iteration, throughput, the busiest stage's
// breakdown, memory, each collective's total, exposed time and bus bandwidth) with the difference,
// whichever way the runs came (two machines, workloads, libraries, or saved summaries).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_plot.hpp"

namespace paratwin::predict {

struct ComparisonRow {
  std::string what;            // "iteration time", "all_reduce data (128): exposed", ...
  std::string unit;            // "s", "ms", "GB/s", ...
  std::optional<double> a, b;  // absent: the run has no such figure (a collective only one of them runs)
  // Rows of words instead of figures: the algorithm each run used for a collective, whether it fits in
  // memory. Absent (with a and b) where the run has no such row.
  std::optional<std::string> a_text, b_text;
  std::string note;  // a mark printed after the change ("B: OUT OF MEMORY")
  bool is_text() const { return a_text || b_text; }
  // B − A relative to A, in percent; absent when A is absent or zero, and for rows of words.
  std::optional<double> change_percent() const;
};

// Out of memory: the largest rank's memory exceeds the device's (or the summary says it does not fit).
bool out_of_memory(const reports::RunSummary& s);

std::vector<ComparisonRow> comparison_rows(const reports::RunSummary& a, const reports::RunSummary& b);
// The table: a header naming A and B with each one's memory verdict, one line per row, then `notes`
// (one line each) and a warning for each run that does not fit in memory.
std::string comparison_table(const reports::LabelledRun& a, const reports::LabelledRun& b,
                             const std::vector<std::string>& notes = {});
// {"a": {label, summary, out_of_memory}, "b": {...}, "rows": [{what, unit, a, b, change_percent}], "notes"};
// rows of words have strings for a and b and "changed" instead of change_percent, marked rows a "note".
nlohmann::json comparison_json(const reports::LabelledRun& a, const reports::LabelledRun& b,
                               const std::vector<std::string>& notes = {});

}  // namespace paratwin::predict
