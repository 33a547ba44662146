// `paratwin search` after the configuration search: the heading with what was dropped, the ranking
// with simulations pending, done or failed, the fastest simulation, the best configurations predicted
// one by one, and the JSON document.
#include "predict/search_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "predict/predict.hpp"
#include "predict/search_emit.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace pp = paratwin::predict;
namespace ps = paratwin::sim;

namespace {

struct Searched {
  paratwin::topology::Machine machine;
  pp::SearchSetting setting;
  ps::SearchResult result;
};

// GPT-20B on 64 Perlmutter GPUs, every family that applies, as `paratwin search -n 64` ranks it.
const Searched& searched() {
  static const Searched s = [] {
    Searched out;
    const auto w =
        paratwin::workloads::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/gpt-20b-perlmutter-32.json");
    out.machine = pp::load_machine("perlmutter");
    out.setting = {w.name, out.machine.name, "nccl", 64, true, out.machine.devices_per_node()};
    ps::SearchOptions options;
    options.gpus = 64;
    options.model.library = "nccl";
    out.result = ps::search(w, pp::topology_for(out.machine, 64, "nccl"), options);
    return out;
  }();
  return s;
}

size_t lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST(SearchReport, HeadingCountsAndShowsTheDroppedConfigurations) {
  const auto& s = searched();
  ASSERT_GT(s.result.ranked.size(), 3u);
  const auto heading = pp::search_heading(s.setting, s.result, false);
  EXPECT_EQ(heading.rfind(s.setting.workload + " on 64 GPUs of perlmutter (nccl, placement-aware model)\n", 0), 0u)
      << heading;
  EXPECT_NE(heading.find(std::to_string(s.result.enumerated) + " valid configurations, " +
                         std::to_string(s.result.rejected.size()) + " do not fit in memory"),
            std::string::npos)
      << heading;
  // Three of each kind dropped unless every one is asked for.
  const size_t dropped = s.result.rejected.size() + s.result.invalid.size();
  EXPECT_EQ(lines(pp::search_heading(s.setting, s.result, true)), 3 + dropped);
  EXPECT_LE(lines(heading), 3 + 4 + 4u);
  EXPECT_NE(heading.find(std::to_string(s.result.variants) + " variants, " + std::to_string(s.result.estimated) +
                         " estimated, " + std::to_string(s.result.skipped) + " skipped"),
            std::string::npos)
      << heading;
  EXPECT_NE(heading.find(", " + std::to_string(s.result.broken) + " break a rule\n"), std::string::npos) << heading;
}

TEST(SearchReport, RankingShowsSimulationsAsTheyArrive) {
  const auto& r = searched().result;
  const auto pending = pp::ranking_table(r, 3, 2, nlohmann::json::array());
  EXPECT_EQ(lines(pending), 1 + 3 + 1u);  // header, three rows, "... N more"
  EXPECT_NE(pending.find("pending"), std::string::npos);
  EXPECT_NE(pending.find("  ... " + std::to_string(r.ranked.size() - 3) + " more (--top)\n"), std::string::npos);

  const nlohmann::json done = {{{"iteration_seconds", 2.5}}, {{"error", "it broke"}}};
  const auto table = pp::ranking_table(r, 1, 2, done);
  EXPECT_EQ(lines(table), 1 + 2 + 1u);  // the simulated rows are shown beyond --top
  EXPECT_NE(table.find(" 2.5000 "), std::string::npos) << table;
  EXPECT_NE(table.find(" failed "), std::string::npos) << table;
  EXPECT_EQ(table.find("pending"), std::string::npos);

  EXPECT_EQ(pp::fastest_simulated(r, nlohmann::json::array({{{"error", "x"}}})), "");
  const nlohmann::json two = {{{"iteration_seconds", 3.0}}, {{"iteration_seconds", 2.0}}};
  EXPECT_EQ(pp::fastest_simulated(r, two), "  fastest simulated: rank 2, " +
                                               std::string(ps::to_string(r.ranked[1].family)) + " " +
                                               r.ranked[1].label + ", 2.0000 s per iteration\n");
}

TEST(SearchReport, TheBestArePredictedOneByOneAndTheDocumentHasEveryConfiguration) {
  const auto& s = searched();
  pp::PointOptions options;
  options.model = pp::Model::analytical;  // no engine needed to check the loop
  std::vector<std::string> progress;
  const auto simulations = pp::simulate_candidates(s.result, 2, s.machine, options,
                                                   [&](const std::string& line) { progress.push_back(line); });
  ASSERT_EQ(simulations.size(), 2u);
  EXPECT_NEAR(simulations[0]["iteration_seconds"].get<double>(), s.result.ranked[0].estimate.iteration, 1e-9);
  ASSERT_EQ(progress.size(), 4u);  // each one started, then done
  EXPECT_EQ(progress[0].rfind("simulating 1 of 2: ", 0), 0u) << progress[0];
  EXPECT_EQ(progress[3].rfind("simulated 2 of 2 in ", 0), 0u) << progress[3];

  const auto j =
      pp::search_json(s.setting, s.result, pp::SearchSimulation{{"exact", false, "auto", true}, {}}, simulations);
  EXPECT_EQ(j["gpus"], 64);
  EXPECT_EQ(j["simulation"]["fidelity"], "exact");
  EXPECT_EQ(j["ranked"].size(), s.result.ranked.size());
  EXPECT_EQ(j["ranked"][1]["simulated"], simulations[1]);
  EXPECT_FALSE(j["ranked"][2].contains("simulated"));
  EXPECT_EQ(j["ranked"][0]["rank"], 1);
  EXPECT_TRUE(j["ranked"][0]["parallelism"].is_object());
  EXPECT_EQ(j.value("out_of_memory", nlohmann::json::array()).size(), s.result.rejected.size());
  EXPECT_FALSE(pp::search_json(s.setting, s.result, std::nullopt, nlohmann::json::array()).contains("simulation"));
}

TEST(SearchReport, EmittedWorkloadsRunAsTheyAreAndTheIndexListsThem) {
  const auto& s = searched();
  const nlohmann::json simulations = {{{"iteration_seconds", 2.5}}};
  const std::optional<pp::SearchSimulation> how = pp::SearchSimulation{{"exact", false, "auto", true}, {}};
  const auto files = pp::emitted_files("out", s.setting, s.result, 3, how, simulations);
  ASSERT_EQ(files.size(), 4u);  // three workloads and the index
  const auto j = pp::search_json(s.setting, s.result, how, simulations);
  for (size_t i = 0; i < 3; ++i) {
    const auto& [path, text] = files[i];
    const auto& c = s.result.ranked[i];
    const std::string name = pp::emitted_file_name(s.result, i);
    EXPECT_EQ(path, "out/" + name);
    // The rank, zero-padded to the width of the number ranked, then the family.
    const std::string rank = std::to_string(i + 1);
    const size_t width = std::max<size_t>(2, std::to_string(s.result.ranked.size()).size());
    EXPECT_EQ(name.rfind(std::string(width - rank.size(), '0') + rank + "-" + ps::to_string(c.family) + "-", 0), 0u)
        << name;
    // The file is a whole workload: it parses, validates and lowers to the GPUs searched.
    const auto w = paratwin::workloads::parse_workload_text(text, path);
    EXPECT_EQ(w.name, s.setting.workload + "-search-" + name.substr(0, name.size() - 5));
    EXPECT_NE(
        w.description.find("Configuration " + std::to_string(i + 1) + " of " + std::to_string(s.result.ranked.size()) +
                           " ranked by `paratwin search` of " + s.setting.workload + " on 64 GPUs of perlmutter"),
        std::string::npos)
        << w.description;
    EXPECT_EQ(w.description.find("simulated 2.5000 s (exact fidelity)") != std::string::npos, i == 0) << w.description;
    EXPECT_EQ(w.training.micro_batch, c.workload.training.micro_batch);
    EXPECT_EQ(w.placement.devices_per_node, 4);
    paratwin::workloads::LowerOptions lo;
    EXPECT_EQ(paratwin::workloads::lower(w, lo).grid.size(), 64);
    // Only the name, description and devices per node differ from the configuration searched.
    auto searched_json = paratwin::workloads::to_json(c.workload), emitted_json = paratwin::workloads::to_json(w);
    for (auto* doc : {&searched_json, &emitted_json}) {
      doc->erase("name");
      doc->erase("description");
      (*doc)["placement"].erase("devices_per_node");
    }
    EXPECT_EQ(searched_json, emitted_json) << name;
    // --json carries the same workload and the file's name.
    EXPECT_EQ(j["ranked"][i]["workload"], nlohmann::json::parse(text)) << name;
    EXPECT_EQ(j["ranked"][i]["file"], name);
    EXPECT_EQ(j["ranked"][i]["micro_batch"], w.training.micro_batch);
  }
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end() - 1));
  const auto& [index_path, index] = files.back();
  EXPECT_EQ(index_path, "out/index.csv");
  EXPECT_EQ(lines(index), 4u);
  EXPECT_EQ(index.rfind("rank,file,family,configuration,analytical_seconds,simulated_seconds,gib_per_gpu\n1," +
                            pp::emitted_file_name(s.result, 0) + ",",
                        0),
            0u)
      << index;
  EXPECT_NE(index.find(",2.5,"), std::string::npos) << index;  // the simulated time of the first
}
