#pragma once
// Two runs side by side: every figure of their summaries (iteration, throughput, the busiest stage's
// breakdown, memory, each collective's total, exposed time and bus bandwidth) with the difference,
// whichever way the runs came (two machines, workloads, libraries, or saved summaries).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "predict/run_plot.hpp"

namespace paratwin::predict {

struct ComparisonRow {
  std::string what;            // "iteration time", "all_reduce data (128): exposed", ...
  std::string unit;            // "s", "ms", "GB/s", ...
  std::optional<double> a, b;  // absent: the run has no such figure (a collective only one of them runs)
  // B − A relative to A, in percent; absent when A is absent or zero.
  std::optional<double> change_percent() const;
};

std::vector<ComparisonRow> comparison_rows(const RunSummary& a, const RunSummary& b);
// The table: a header naming A and B, one line per row.
std::string comparison_table(const LabelledRun& a, const LabelledRun& b);
// {"a": {label, summary}, "b": {...}, "rows": [{what, unit, a, b, change_percent}]}.
nlohmann::json comparison_json(const LabelledRun& a, const LabelledRun& b);

}  // namespace paratwin::predict
