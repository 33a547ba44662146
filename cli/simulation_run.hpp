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

// `--fidelity auto` by the workload's rank count: every algorithm step as its own phase while that stays
// quick, aggregated phases beyond, and a node's ranks folded into one actor where one actor per rank
// costs minutes. The engine's speed sets these; retune them when it changes.
constexpr int64_t kAutoExactUpToRanks = 64;
constexpr int64_t kAutoFoldAboveRanks = 512;
// Runs this large take long enough that a silent terminal looks hung: progress is on by default.
constexpr int64_t kProgressAboveRanks = 512;

struct FidelityChoice {
  std::string fidelity;  // "exact" or "fast"
  bool fold = false;
  std::string why;  // "auto: above 512 ranks", "--fidelity fast", "--fold", ...
  bool automatic = false;
};

// `requested`: "auto", "exact" or "fast"; `fold`: --fold was given (with auto it implies fast). Throws
// InputError for --fold with exact fidelity.
FidelityChoice choose_fidelity(int64_t ranks, const std::string& requested, bool fold);

// "8192 ranks: fast fidelity, folded (auto: above 512 ranks); --fidelity exact for ...": the choice and,
// when it was automatic, how to override it.
std::string describe(const FidelityChoice& choice, int64_t ranks);

// Throws InputError naming --algorithm when a "KIND=ALGORITHM" override is malformed.
void check_algorithm_specs(const std::vector<std::string>& specs);

struct SimulationSetup {
  std::string machine = "frontier";     // built-in name or machine file
  int64_t nodes = 0;                    // slice of this many nodes; 0: as many as the workload needs
  std::string fidelity = "auto";        // "auto", "exact" or "fast"
  std::string library;                  // empty: the machine profile's
  std::string profile;                  // a fitted profile (calibrate micro) applied to the machine
  std::vector<std::string> algorithms;  // "KIND=ALGORITHM" overrides
  bool trace = false;                   // build a Chrome trace
  std::vector<int64_t> trace_ranks;     // empty: all up to 64 ranks, else rank 0
  bool progress = false;                // engine progress, and a line before each long step
  bool fold = false;                    // with "auto", folds whatever the rank count
};

struct SimulationRun {
  nlohmann::json summary;  // the document `paratwin simulate --json` writes
  std::string trace;       // Chrome trace JSON when setup.trace
};

// Throws InputError (naming the option) when the setup does not fit the workload or the machine.
SimulationRun run_simulation(const workloads::Workload& w, const SimulationSetup& setup);

// The text report `paratwin simulate` prints, from the summary run_simulation built.
void print_simulation_report(const workloads::Workload& w, const nlohmann::json& summary);

}  // namespace paratwin::cli
