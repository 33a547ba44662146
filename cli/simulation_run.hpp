#pragma once
// One SimGrid simulation of a workload on a machine and its summary: what `paratwin simulate` runs and
// what `paratwin sweep` runs for every simulated point (in a child process: SimGrid allows one engine
// per process).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace paratwin::cli {

struct SimulationSetup {
  std::string machine = "frontier";     // built-in name or machine file
  int64_t nodes = 0;                    // slice of this many nodes; 0: as many as the workload needs
  std::string fidelity = "exact";       // "exact" or "fast"
  std::string library;                  // empty: the machine profile's
  std::string profile;                  // a fitted profile (calibrate micro) applied to the machine
  std::vector<std::string> algorithms;  // "KIND=ALGORITHM" overrides
  bool trace = false;                   // build a Chrome trace
  std::vector<int64_t> trace_ranks;     // empty: all up to 64 ranks, else rank 0
  bool progress = false;
  bool fold = false;
};

struct SimulationRun {
  nlohmann::json summary;  // the document `paratwin simulate --json` writes
  std::string trace;       // Chrome trace JSON when setup.trace
};

// Throws InputError (naming the option) when the setup does not fit the workload or the machine.
SimulationRun run_simulation(const workloads::Workload& w, const SimulationSetup& setup);

// The text report `paratwin simulate` prints, from the summary run_simulation built.
void print_simulation_report(const workloads::Workload& w, const SimulationSetup& setup, const nlohmann::json& summary);

}  // namespace paratwin::cli
