#pragma once
// `paratwin baseline check|update`: the reference points predicted again and compared with the
// committed regression baselines (results/baselines/SUITE.json), and the report of what moved.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "validation/reference_points.hpp"
#include "validation/report.hpp"

namespace paratwin::validation {

// --simulate-up-to's default: every point is simulated.
constexpr int64_t kSimulateEveryPoint = std::numeric_limits<int64_t>::max();

struct BaselineOptions {
  std::string dir = "results/baselines";
  double tolerance_percent = 1.0;  // relative change allowed
  int64_t simulate_up_to = kSimulateEveryPoint;
  bool update = false;  // rewrite the baselines instead of checking them
  // Machines of this folder replaced built-in ones: the report names it and points what-if studies to
  // `paratwin compare --machines` instead of asking for the baselines to be rewritten.
  std::string machines;
};

// DIR/SUITE.json.
std::string baseline_file(const std::string& dir, const std::string& suite);

// The baselines committed in `dir` for `suites`, by suite name (a suite without a file has none).
// Throws InputError naming the file when one does not read as a baseline.
std::map<std::string, Baseline> committed_baselines(const std::vector<ReferenceSuite>& suites, const std::string& dir);

// What to predict: every point analytically, and by SimGrid (beside it, in the same child) up to
// simulate_up_to GPUs. A check without simulate_up_to simulates the points whose committed baseline
// holds a simulation (the committed files may leave the largest points to the analytical model, for
// CI's time).
std::vector<ReferenceTask> baseline_tasks(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                          const std::map<std::string, Baseline>& committed,
                                          const BaselineOptions& options);

// The baselines of the rows just predicted, by suite name: each point's analytical value, and its
// simulated value where it was simulated.
std::map<std::string, Baseline> baselines_of(const std::vector<ReferenceSuite>& suites,
                                             const std::vector<ValidationRow>& rows);

struct BaselineComparison {
  std::vector<BaselineChange> changes;  // every point of every suite
  size_t unchecked = 0;                 // simulated baselines above simulate_up_to, left out of a check
  size_t suites = 0;
  size_t moved() const;  // the changes beyond the tolerance
};

// `now` against `committed`, suite by suite. Throws InputError naming the missing file when a check
// finds a suite without a baseline (an update writes it).
BaselineComparison compare_with_committed(const std::vector<ReferenceSuite>& suites,
                                          const std::map<std::string, Baseline>& committed,
                                          const std::map<std::string, Baseline>& now, const BaselineOptions& options);

// Update: every change, or that none happened. Check: the baselines not checked, then whether the
// baselines hold or a table of the points that moved and how to accept the move.
std::string baseline_report(const BaselineComparison& comparison, const BaselineOptions& options);

}  // namespace paratwin::validation
