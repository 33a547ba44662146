#pragma once
// The accuracy ratchet: each reference suite's error against the published values may not grow beyond
// the figure committed beside the baselines (results/baselines/accuracy.json). The error is that of the
// committed baselines' predictions — SimGrid's where a baseline holds one, the analytical model's
// elsewhere — so a `baseline update` that makes a suite worse against the papers fails, while the
// baseline check ties the baselines to the program. Improvements lower the bar (`baseline update`
// rewrites it); a worse figure is committed only on purpose (`baseline update --accept-worse-accuracy`).
#include <map>
#include <string>
#include <vector>

#include "validation/reference.hpp"
#include "validation/report.hpp"

namespace paratwin::validation {

// One suite's figures, errors in percent of the published value.
struct SuiteAccuracy {
  size_t points = 0;  // predicted
  size_t failed = 0;  // without a prediction
  double mean_abs_percent = 0, max_abs_percent = 0;
};
using Accuracy = std::map<std::string, SuiteAccuracy>;  // by suite name

// The errors of `baselines`' predictions against `suites`' published values, for the suites that have a
// baseline. A point's prediction is its simulated value when the baseline holds one, else its analytical
// value; a point with neither, or whose prediction failed, counts as failed.
Accuracy accuracy_of(const std::vector<ReferenceSuite>& suites, const std::map<std::string, Baseline>& baselines);

// DIR/accuracy.json.
std::string accuracy_file(const std::string& baselines_dir);
// {"schema_version": 1, "suites": {NAME: {"points", "failed", "mean_abs_error_percent",
// "max_abs_error_percent"}}}, figures rounded to kAccuracyDigits decimals.
std::string accuracy_json(const Accuracy& accuracy);
// Throws InputError naming `source` and the JSON path.
Accuracy parse_accuracy(const std::string& text, const std::string& source);
// The committed bar of `baselines_dir`; none (empty) when the file does not exist.
Accuracy committed_accuracy(const std::string& baselines_dir);

// Decimals the figures are committed with; a figure breaches its bar when it exceeds it by more than
// the rounding of the last decimal.
constexpr int kAccuracyDigits = 3;

// A figure of `now` above its bar: the suite, which figure, the bar and the new value. A suite of `now`
// without a bar breaches as "missing" (every suite is held); suites of `bar` absent from `now` are not
// judged (a run of some suites).
struct RatchetBreach {
  std::string suite, figure;
  double bar = 0, now = 0;
};
std::vector<RatchetBreach> ratchet_breaches(const Accuracy& bar, const Accuracy& now);

// The bar after an update: `bar` with `now`'s suites lowered to their new figures where these improved
// (or replaced by them, improved or not, when `accept_worse`); suites not in `now` keep their bar.
Accuracy lowered_bar(const Accuracy& bar, const Accuracy& now, bool accept_worse);

// The breaches as a table and what to do about them; or one line saying the ratchet holds.
std::string ratchet_report(const std::vector<RatchetBreach>& breaches, size_t suites, const std::string& file);

}  // namespace paratwin::validation
