#pragma once
// Pictures of run summaries, drawn by gnuplot: where the iteration went (stacked bars per pipeline stage
// of one run, or per run when runs are compared) and what the collectives cost (total and exposed per
// collective and run). One script, SVG or PNG, labels sized to fit.
#include <string>
#include <utility>
#include <vector>

#include "reports/run_summary.hpp"

namespace paratwin::reports {

using LabelledRun = std::pair<std::string, RunSummary>;

// The image format a plot path asks for: "svg" or "png" by its extension. Throws InputError naming
// `option` otherwise.
std::string plot_format(const std::string& path, const std::string& option);

// The gnuplot script (data inline) of `runs`' breakdown and collectives, writing `output` in `format`.
std::string run_plot_script(const std::string& title, const std::vector<LabelledRun>& runs, const std::string& format,
                            const std::string& output);

// The image of `runs` in `format` ("svg" or "png"). Throws JobFailed when gnuplot is missing or fails.
std::string render_run_plot(const std::string& title, const std::vector<LabelledRun>& runs, const std::string& format);

}  // namespace paratwin::reports
