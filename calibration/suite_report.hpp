#pragma once
// The report of a calibration suite that `calibrate suite` writes once every run succeeded: README.md
// (how to regenerate it, how it was measured, the table, the verdict, every workload's comparison) and
// classes.csv; the suite's own table, CSV and bars are in calibration/suite.hpp.
#include <string>
#include <vector>

#include "calibration/suite.hpp"

namespace paratwin::calibration {

// The predictions further than the suite's tolerance from their measured median.
int outside_tolerance(const Suite& suite, const std::vector<SuiteResult>& results);

// Every workload's rows per op class under one header.
std::string suite_classes_csv(const std::vector<SuiteResult>& results);

// README.md of the report folder. `out_option` is the --out given ("" when the default folder), so that
// the command it prints regenerates the same folder; `date` is the day measured (YYYY-MM-DD).
std::string suite_readme(const Suite& suite, const std::vector<SuiteResult>& results, const std::string& out_option,
                         const std::string& date);

}  // namespace paratwin::calibration
