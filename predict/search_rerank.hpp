#pragma once
// `paratwin search` after its simulations: the simulated configurations re-ranked by their simulated
// times (the analytical model only picks which to simulate), and, when the search ranked nothing, why
// and what to change.
#include <nlohmann/json.hpp>
#include <string>

#include "predict/search_report.hpp"
#include "sim/search.hpp"

namespace paratwin::predict {

// Orders the first simulations.size() ranked configurations, and `simulations` with them, by their
// simulated iteration times (failed simulations after those that succeeded, in the analytical order;
// ties keep it too). The others keep their places. Each keeps its Candidate::analytical_rank. Returns
// how many moved.
size_t rerank_by_simulation(sim::SearchResult& result, nlohmann::json& simulations);

// Why `result` ranked nothing: the rule most configurations broke (with how many, an example and what to
// change: GPU counts or a global batch that divide) or, when every valid one ran out of memory, the
// least any needs against what the device has, and what to change. One paragraph, lines indented.
std::string nothing_ranked(const SearchSetting& setting, const sim::SearchResult& result, int64_t global_batch);

}  // namespace paratwin::predict
