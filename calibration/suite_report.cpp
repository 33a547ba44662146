#include "calibration/suite_report.hpp"

#include <cmath>
#include <filesystem>
#include <sstream>

namespace paratwin::calibration {

int outside_tolerance(const Suite& suite, const std::vector<SuiteResult>& results) {
  int outside = 0;
  for (const auto& r : results) outside += std::fabs(r.comparison.error()) > suite.tolerance ? 1 : 0;
  return outside;
}

std::string suite_classes_csv(const std::vector<SuiteResult>& results) {
  std::string classes = "workload,ranks,class,predicted_seconds,measured_seconds,relative_error\n";
  for (const auto& r : results) {
    const std::string csv = comparison_csv(r.comparison);
    classes += csv.substr(csv.find('\n') + 1);
  }
  return classes;
}

std::string suite_readme(const Suite& suite, const std::vector<SuiteResult>& results, const std::string& out_option,
                         const std::string& date) {
  std::ostringstream md;
  md << "# Calibration suite `" << suite.name << "`: predicted versus measured\n\n";
  if (!suite.description.empty()) md << suite.description << "\n\n";
  md << "Regenerate (this folder, profiles included) with one command from the repository root:\n\n```\n"
     << "paratwin calibrate suite " << suite.file << (out_option.empty() ? "" : " --out " + out_option) << "\n```\n\n";
  md << "Measured " << date << " on " << suite.machine << " with the " << suite.backend
     << " backend: " << suite.iterations << " iterations after " << suite.warmup
     << " warm-up per workload. Profiles were fitted on the micro-benchmarks only (`calibrate micro`, " << suite.repeats
     << " repeats, one profile per rank count, in `profiles/`); no parameter was fitted on the workload runs "
        "compared here.\n\n";
  md << "![predicted versus measured](iteration.svg)\n\n";
  md << suite_markdown_table(suite, results) << "\n";
  if (const int outside = outside_tolerance(suite, results); outside == 0)
    md << "Every prediction is within " << 100 * suite.tolerance << " % of the measured median.\n\n";
  else
    md << "Predictions outside " << 100 * suite.tolerance << " % of the measured median: " << outside << " of "
       << results.size() << ".\n\n";
  md << "Files: `suite.csv` (this table), `classes.csv` (per op class), `iteration.gp` (the plot's script, data "
        "inline); per workload a folder with `comparison.md`, `comparison.csv`, `bars.svg` (per op class) and "
        "`timeline.png` (measured above predicted); its `run/` subfolder (not committed) holds the runs' summaries, "
        "traces and logs.\n\n## Per workload\n\n";
  for (const auto& r : results) {
    const std::string name = std::filesystem::path(r.entry.workload).stem().string();
    md << comparison_markdown(r.comparison) << "\n![" << name << " per op class](" << name << "/bars.svg)\n![" << name
       << " timelines](" << name << "/timeline.png)\n\n";
  }
  return md.str();
}

}  // namespace paratwin::calibration
