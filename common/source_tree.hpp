#pragma once
// Data that ships with paratwin's sources (results/reference, results/baselines, workloads/frameworks),
// found from wherever paratwin runs: commands that read it by default must not depend on the current
// folder being the repository's top.
#include <string>

namespace paratwin {

// `relative` (e.g. "results/reference") in the source tree this executable was built from (its path is
// compiled in), else beside the executable (build/cli/paratwin: two folders up; an installed
// bin/paratwin: ../share/paratwin), else in the current folder. The first that exists; `relative`
// itself when none does (the caller's error then names it).
std::string source_path(const std::string& relative);

}  // namespace paratwin
