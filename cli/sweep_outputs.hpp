#pragma once
// What a sweep writes: the CSV and JSON of its rows (deterministic: the same rows give the same bytes)
// and the plots (a gnuplot script and, when gnuplot is installed, the scaling curves and time
// breakdown bars it draws).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/sweep_point.hpp"
#include "predict/sweep_spec.hpp"

namespace paratwin::cli {

using predict::ConfigurationMode;
using predict::SweepPoint;
using predict::SweepSpec;

// The CSV's columns, in order; every row has these keys.
const std::vector<std::string>& sweep_columns();

std::string sweep_csv(const std::vector<nlohmann::json>& rows);
nlohmann::json sweep_json(const SweepSpec& spec, const std::vector<nlohmann::json>& rows);

// Writes DIR/plots.gp and runs gnuplot on it in DIR (format "svg" or "png"): scaling.FORMAT and
// breakdown.FORMAT. Returns one line for the user: what was drawn, or why nothing was (no gnuplot on
// the PATH, no point succeeded, gnuplot failed: see DIR/plots.log). Never throws for a plotting problem.
std::string write_plots(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                        const std::vector<nlohmann::json>& rows, const std::string& dir, const std::string& format);

}  // namespace paratwin::cli
