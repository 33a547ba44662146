#pragma once
// Predicted versus published (`paratwin validate`) and the regression baselines of predicted scaling
// (`paratwin baseline`): the rows, their statistics, the reports and the baseline files.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "validation/reference.hpp"

namespace paratwin::validation {

struct ValidationRow {
  const ReferenceSuite* suite = nullptr;
  const ReferencePoint* point = nullptr;
  std::string model;                // "analytical" or "simulate"
  std::optional<double> predicted;  // in the suite's metric; none when the prediction failed
  double iteration = 0;             // predicted seconds per iteration (one collective for speedups)
  int64_t gpus = 0;
  std::string configuration;
  std::string stack;  // the workload's framework profile; empty for a collective's point
  bool fits = true;   // in device memory, as paratwin models it
  std::string error;  // why there is no prediction
  // The analytical model's prediction of the same point and configuration, in the suite's metric: the
  // reference a simulated point is compared with (for an analytical row, its own prediction).
  std::optional<double> analytical;
  // The lowest and highest prediction over the assumed value and the point's sensitivity alternatives.
  std::optional<std::array<double, 2>> predicted_range;
  double relative_error() const { return predicted ? validation::relative_error(*point, *predicted) : 0; }
  // (predicted − analytical) / analytical; none unless both exist and the prediction is not itself analytical.
  std::optional<double> versus_analytical() const {
    if (model == "analytical" || !predicted || !analytical || *analytical == 0) return std::nullopt;
    return (*predicted - *analytical) / *analytical;
  }
};

// The rows of one suite, in order.
std::vector<const ValidationRow*> suite_rows(const std::vector<ValidationRow>& rows, const ReferenceSuite& suite);
// The rows of end-to-end suites (first) and the others (second).
std::pair<std::vector<const ValidationRow*>, std::vector<const ValidationRow*>> split_end_to_end(
    const std::vector<ValidationRow>& rows);

struct ErrorStats {
  size_t points = 0, failed = 0;
  double mean_abs = 0, max_abs = 0;  // of the relative errors of the predicted points
};
ErrorStats error_stats(const std::vector<const ValidationRow*>& rows);
// The rows whose points no profile parameter was fitted to.
std::vector<const ValidationRow*> held_out(const std::vector<const ValidationRow*>& rows);

// The end-to-end rows by software stack (framework profile), stacks in name order: every point, those a
// profile parameter was fitted to, and the held-out ones (the figure a stack is judged by).
struct StackStats {
  std::string stack;
  ErrorStats all, held_out;
  size_t fitted = 0;
};
std::vector<StackStats> stack_stats(const std::vector<const ValidationRow*>& rows);

// What `paratwin validate` prints: per suite its provenance, a table of its points (published,
// predicted, error, the analytical model beside a simulation, the spread over assumed values) and its
// statistics; then the statistics of the end-to-end points (without the fitted ones), per stack, and of
// the others.
std::string validation_text(const std::vector<ReferenceSuite>& suites, const std::vector<ValidationRow>& rows);
// validation.csv: one line per row, every number as printed in the tables.
std::string validation_csv(const std::vector<ValidationRow>& rows);
// README.md of results/validation: the headline errors, then one table per suite with its provenance.
std::string validation_markdown(const std::vector<ReferenceSuite>& suites, const std::vector<ValidationRow>& rows,
                                const std::string& command);
// A gnuplot script drawing a suite's published and predicted values against the GPU count into `output`
// (svg); the data is inline.
std::string suite_plot_script(const ReferenceSuite& suite, const std::vector<const ValidationRow*>& rows,
                              const std::string& output);

// A baseline: the predicted values of one suite's points, by model, as committed in results/baselines.
struct BaselinePoint {
  std::string label, model;
  int64_t gpus = 0;
  std::optional<double> value;  // none: the prediction failed (and is expected to)
};
struct Baseline {
  std::string suite, metric;
  std::vector<BaselinePoint> points;
};
std::string baseline_json(const Baseline& b);
// Throws InputError naming `source` and the JSON path.
Baseline parse_baseline(const std::string& text, const std::string& source);

struct BaselineChange {
  std::string suite, label, model;
  int64_t gpus = 0;
  std::optional<double> before, after;
  double change = 0;    // relative, (after − before) / before; 0 when either is missing
  bool beyond = false;  // moved more than the tolerance, appeared, disappeared, or started/stopped failing
};
// Every point of either, matched by label and model, in `after`'s order then the removed ones.
std::vector<BaselineChange> compare_baselines(const Baseline& before, const Baseline& after, double tolerance);
// A fixed-width table of the changes (those beyond the tolerance only, when `beyond_only`).
std::string changes_table(const std::vector<BaselineChange>& changes, bool beyond_only);

}  // namespace paratwin::validation
