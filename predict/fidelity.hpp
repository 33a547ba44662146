#pragma once
// How a SimGrid prediction runs: the fidelity chosen by the rank count (or asked for), and the
// per-kind algorithm overrides.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/run_estimate.hpp"
#include "workloads/program.hpp"

namespace paratwin::predict {

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

// `search`'s choice: as choose_fidelity, but automatic above kAutoExactUpToRanks is fast and folded.
// Its simulations re-rank the best few configurations, and folded they cost seconds instead of a
// minute each at 512 ranks (Llama 3 70B on 512 H100: 0.5 s against 50 s, the iteration times within
// 0.05 %; bench/fold_error.sh measures the fold within 0.06 % on PTD-P, ZeRO-3, HSDP, CP and MoE shapes,
// bench/fidelity_approximations.sh 0.7-1.7 % over every rank on AxoNN's 4-D GPT).
FidelityChoice choose_search_fidelity(int64_t ranks, const std::string& requested, bool fold);

// "8192 ranks: fast fidelity, folded (auto: above 512 ranks); --fidelity exact for ...": the choice and,
// when it was automatic, how to override it.
std::string describe(const FidelityChoice& choice, int64_t ranks);

// A run's estimate (sim/run_estimate.hpp) against the limits: the address space the process may have
// (ulimit -v) and `max_seconds` (0: none; simulate's --max-hours). Throws InputError naming --fidelity
// with the figures and what to use instead when one is exceeded; returns a warning with the figures
// for a run estimated to take more than kWarnAboveSeconds, else "".
constexpr double kWarnAboveSeconds = 600;
std::string check_estimate(const sim::RunEstimate& estimate, const FidelityChoice& choice, int64_t ranks,
                           double max_seconds);

// "KIND=ALGORITHM" overrides (e.g. all_reduce=tree) by kind. Throws InputError naming --algorithm when
// one is malformed, names an unknown kind or algorithm, or an algorithm that cannot run the kind.
std::map<workloads::OpKind, sim::Algorithm> parse_algorithms(const std::vector<std::string>& specs);

}  // namespace paratwin::predict
