#include "cli/simulation_report.hpp"

#include <chrono>
#include <cstdio>

namespace paratwin::cli {

std::function<void(const std::string&)> step_log() {
  const auto start = std::chrono::steady_clock::now();
  return [start](const std::string& what) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "paratwin simulate: [%.1f s] %s\n", s, what.c_str());
  };
}

void print_warning(const std::string& what) {
  std::fprintf(stderr, "paratwin: warning: %s\n", what.c_str());
}

void print_simulation_report(const workloads::Workload& w, const predict::Prediction& p) {
  const auto& s = *p.summary;
  const auto& r = *p.simulation;
  std::printf("%s on %s (%lld nodes, %lld ranks), %s fidelity, %s\n", w.name.c_str(), s.machine.c_str(),
              static_cast<long long>(r.nodes), static_cast<long long>(s.ranks), r.fidelity.c_str(), r.library.c_str());
  if (!r.profile.empty()) std::printf("  calibrated by         %s\n", r.profile.c_str());
  if (r.folded)
    std::printf(
        "  simulated as          %lld actors for %lld ranks (%s; collectives inside a node timed analytically)\n",
        static_cast<long long>(r.actors), static_cast<long long>(s.ranks),
        r.folded_by == "node" ? "one per node"
                              : "one per node of a data-parallel replica, standing for it in every replica");
  else if (r.not_folded_because)
    std::printf("  simulated as          one actor per rank (not folded: %s)\n", r.not_folded_because->c_str());
  print_summary(w, s, "simulated anyway");
}

}  // namespace paratwin::cli
