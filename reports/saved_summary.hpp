#pragma once
// A run summary saved by `simulate --json` or `exec --json`, read back as strictly as any other input:
// `compare` computes differences, changes and bandwidths from its figures, so a figure no run can
// produce (a negative or zero iteration, 1e308 seconds, a group of 0 ranks, a negative count, no stage
// at all) is refused with the file and JSON path named, instead of reaching the table as inf or NaN.
#include <nlohmann/json.hpp>
#include <string>

#include "reports/run_summary.hpp"

namespace paratwin::reports {

// Bounds of a saved summary's figures: seconds of an iteration or of any part of it (about 32 years),
// bytes of a buffer or a device's memory, tokens per second, model TFLOP/s per device, percentages of
// a peak (a measured run may exceed 100 % of an advertised peak, not 10,000 %), ranks, calls.
constexpr double kSummaryMaxSeconds = 1e9;
constexpr double kSummaryMaxBytes = 1e18;
constexpr double kSummaryMaxTokensPerSecond = 1e15;
constexpr double kSummaryMaxTflops = 1e6;
constexpr double kSummaryMaxPercent = 1e4;
constexpr int64_t kSummaryMaxRanks = 1'000'000'000;
constexpr int64_t kSummaryMaxCalls = 1'000'000'000'000;

// The summary in `doc`, read from `file`. Throws InputError ("FILE: JSON.PATH ...") when a figure is
// missing, of the wrong type or out of its range, when there is no stage, or when the per-rank rows
// are not one per rank. Keys it does not read (a prediction's own records) are left alone.
RunSummary read_saved_summary(const nlohmann::json& doc, const std::string& file);

}  // namespace paratwin::reports
