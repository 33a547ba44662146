#include "predict/fidelity.hpp"

#include <optional>

#include "common/input_error.hpp"

namespace paratwin::predict {

namespace {

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

}  // namespace

FidelityChoice choose_fidelity(int64_t ranks, const std::string& requested, bool fold) {
  if (requested == "auto") return fold ? FidelityChoice{"fast", true, "--fold", false} : automatic_choice(ranks);
  if (requested != "exact" && requested != "fast")
    throw InputError("--fidelity", "= " + requested + ": expected auto, exact or fast");
  if (fold && requested == "exact")
    throw InputError("--fold", "folding is part of fast fidelity: use --fidelity fast or auto");
  return {requested, fold, "--fidelity " + requested + (fold ? " --fold" : ""), false};
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
