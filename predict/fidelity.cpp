#include "predict/fidelity.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <optional>

#include "common/input_error.hpp"

namespace paratwin::predict {

namespace {

std::string formatted_hours(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds / 3600);
  return text;
}

FidelityChoice automatic_choice(int64_t ranks) {
  if (ranks <= kAutoExactUpToRanks)
    return {"exact", false, "auto: up to " + std::to_string(kAutoExactUpToRanks) + " ranks", true};
  if (ranks <= kAutoFoldAboveRanks)
    return {
        "fast", false,
        "auto: " + std::to_string(kAutoExactUpToRanks + 1) + " to " + std::to_string(kAutoFoldAboveRanks) + " ranks",
        true};
  return {"fast", true, "auto: above " + std::to_string(kAutoFoldAboveRanks) + " ranks", true};
}

// "about 12 h", "about 57 min", "about 40 s".
std::string duration(double seconds) {
  char text[32];
  if (seconds >= 5400)
    std::snprintf(text, sizeof text, "about %.0f h", seconds / 3600);
  else if (seconds >= 90)
    std::snprintf(text, sizeof text, "about %.0f min", seconds / 60);
  else
    std::snprintf(text, sizeof text, "about %.0f s", seconds);
  return text;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

// The address space this process may have: its soft RLIMIT_AS (ulimit -v); 0 when unlimited.
double address_space_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<double>(limit.rlim_cur);
}

}  // namespace

std::string check_estimate(const sim::RunEstimate& e, const FidelityChoice& c, int64_t ranks, double max_seconds) {
  const std::string what = "= " + (c.automatic ? "auto (" + c.fidelity + (c.fold ? ", folded)" : ")")
                                               : c.fidelity + (c.fold ? " with --fold" : ""));
  const std::string figures = std::to_string(e.actors) + " actors for " + std::to_string(ranks) + " ranks, " +
                              std::to_string(static_cast<long long>(e.steps)) +
                              " communication steps: " + duration(e.seconds) + " and " + gib(e.memory_bytes) +
                              " of address space (estimated)";
  const std::string instead = c.fold
                                  ? ""
                                  : "; --fidelity fast --fold (or auto above " + std::to_string(kAutoFoldAboveRanks) +
                                        " ranks) runs one actor per node of a replica, in seconds to minutes";
  const double limit = address_space_limit();
  if (limit > 0 && e.memory_bytes > limit)
    throw InputError("--fidelity", what + ": " + figures + ", more than the " + gib(limit) +
                                       " this process may use (ulimit -v)" + instead);
  if (max_seconds > 0 && e.seconds > max_seconds)
    throw InputError("--fidelity", what + ": " + figures + ", longer than --max-hours " + formatted_hours(max_seconds) +
                                       instead + "; or raise --max-hours (0: no limit)");
  if (e.seconds > kWarnAboveSeconds) return "--fidelity " + what + ": " + figures + instead;
  return "";
}

FidelityChoice choose_fidelity(int64_t ranks, const std::string& requested, bool fold) {
  if (requested == "auto") return fold ? FidelityChoice{"fast", true, "--fold", false} : automatic_choice(ranks);
  if (requested != "exact" && requested != "fast")
    throw InputError("--fidelity", "= " + requested + ": expected auto, exact or fast");
  if (fold && requested == "exact")
    throw InputError("--fold", "folding is part of fast fidelity: use --fidelity fast or auto");
  return {requested, fold, "--fidelity " + requested + (fold ? " --fold" : ""), false};
}

FidelityChoice choose_search_fidelity(int64_t ranks, const std::string& requested, bool fold) {
  if (requested != "auto" || fold || ranks <= kAutoExactUpToRanks) return choose_fidelity(ranks, requested, fold);
  return {"fast", true, "auto for a search: above " + std::to_string(kAutoExactUpToRanks) + " ranks", true};
}

std::string describe(const FidelityChoice& c, int64_t ranks) {
  std::string line =
      std::to_string(ranks) + " ranks: " + c.fidelity + " fidelity" + (c.fold ? ", folded" : "") + " (" + c.why + ")";
  if (!c.automatic) return line;
  if (c.fidelity == "exact") return line + "; --fidelity fast for aggregated phases (faster)";
  if (c.fold)
    line += "; --fidelity fast for one actor per rank,";
  else
    line += ";";
  return line + " --fidelity exact for one phase per algorithm step";
}

std::map<workloads::OpKind, sim::Algorithm> parse_algorithms(const std::vector<std::string>& specs) {
  using workloads::OpKind;
  std::map<OpKind, sim::Algorithm> out;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    const std::string kind_name = spec.substr(0, eq), algo_name = eq == std::string::npos ? "" : spec.substr(eq + 1);
    const auto kind = workloads::parse_op_kind(kind_name);
    if (!kind || !workloads::is_collective(*kind))
      throw InputError("--algorithm", "\"" + spec +
                                          "\": expected KIND=ALGORITHM with KIND one of all_reduce, reduce_scatter, "
                                          "all_gather, all_to_all, broadcast, reduce");
    const auto algorithm = sim::parse_algorithm(algo_name);
    if (!algorithm)
      throw InputError("--algorithm", "\"" + spec + "\": unknown algorithm \"" + algo_name +
                                          "\" (ring, recursive, tree, hierarchical, binomial_tree, pairwise, direct)");
    if (!sim::supports(*algorithm, *kind))
      throw InputError("--algorithm", "\"" + spec + "\": " + algo_name + " cannot run " + kind_name);
    out[*kind] = *algorithm;
  }
  return out;
}

}  // namespace paratwin::predict
