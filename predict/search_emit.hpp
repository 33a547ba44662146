#pragma once
// `paratwin search --emit DIR`: each ranked configuration as a workload file that `paratwin simulate`
// and `paratwin exec` read as is, and an index of them. A configuration's workload is the base workload
// with the search's parallelism, micro-batch, schedule, recomputation and ZeRO stage, so the file is
// the configuration itself, not a fragment to splice into the base by hand.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "predict/search_report.hpp"

namespace paratwin::predict {

// The workload of ranked configuration `index` (0-based) as emitted: its name is the file's stem, its
// description says which search found it (base, machine, GPUs, rank, predicted and simulated times),
// its placement the machine's devices per node. Simulates exactly as the search simulated it.
workloads::Workload emitted_workload(const SearchSetting& setting, const sim::SearchResult& result, size_t index,
                                     const std::optional<SearchSimulation>& simulation,
                                     const nlohmann::json& simulations);

// "07-ptdp-t8-p16-d8-mb1-v3-sp-sel-zero1.json": the rank, zero-padded to the width of the number ranked
// (two digits at least) so that names sort by rank, then the family and the label's words.
std::string emitted_file_name(const sim::SearchResult& result, size_t index);

// The files of the first `count` ranked configurations and DIR/index.csv (rank, file, family,
// configuration, analytical and simulated seconds per iteration, GiB per GPU, the analytical model's
// rank where a simulation re-ranked it), as (path, text) pairs
// for write_files_atomically.
std::vector<std::pair<std::string, std::string>> emitted_files(const std::string& dir, const SearchSetting& setting,
                                                               const sim::SearchResult& result, size_t count,
                                                               const std::optional<SearchSimulation>& simulation,
                                                               const nlohmann::json& simulations);

}  // namespace paratwin::predict
