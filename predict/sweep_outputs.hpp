#pragma once
// What a sweep writes: the CSV and JSON of its rows (deterministic: the same rows give the same bytes)
// and its plots (a gnuplot script, data inline, and, when gnuplot is installed, the scaling curves and
// time breakdown bars it draws).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/sweep_point.hpp"
#include "predict/sweep_spec.hpp"

namespace paratwin::predict {

// The CSV's columns, in order; every row has these keys.
const std::vector<std::string>& sweep_columns();

std::string sweep_csv(const std::vector<nlohmann::json>& rows);
nlohmann::json sweep_json(const SweepSpec& spec, const std::vector<nlohmann::json>& rows);

// plots.gp for gnuplot in the sweep's folder, drawing scaling.FORMAT and breakdown.FORMAT ("svg" or
// "png") from the rows that succeeded: one scaling curve per workload × machine × configuration × model,
// one stacked bar per point.
std::string sweep_plot_script(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                              const std::vector<nlohmann::json>& rows, const std::string& format);

// Writes DIR/plots.gp and runs gnuplot on it in DIR. Returns one line for the user: what was drawn, or
// why nothing was (no point succeeded, no gnuplot on the PATH, gnuplot failed: see DIR/plots.log). A
// plotting problem never throws: the sweep's results stand without plots.
std::string write_sweep_plots(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                              const std::vector<nlohmann::json>& rows, const std::string& dir,
                              const std::string& format);

}  // namespace paratwin::predict
