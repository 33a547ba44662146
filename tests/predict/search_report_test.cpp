// `paratwin search` after the configuration search: the heading with what was dropped, the ranking
// once, with the simulated rows re-ranked by their simulated times, why nothing ranked, the best
// configurations predicted one by one, and the JSON document.
#include "predict/search_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "predict/predict.hpp"
#include "predict/search_emit.hpp"
#include "predict/search_rerank.hpp"
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
    out.setting = {w.name, out.machine.name, "nccl", 64, true, out.machine.devices_per_node(), w.framework.profile};
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
  EXPECT_EQ(heading.rfind(
                s.setting.workload + " on 64 GPUs of perlmutter (nccl, placement-aware model, framework generic)\n", 0),
            0u)
      << heading;
  EXPECT_NE(heading.find(std::to_string(s.result.enumerated) + " valid configurations, " +
                         std::to_string(s.result.rejected.size()) + " do not fit in memory"),
            std::string::npos)
      << heading;
  // Three of each kind dropped unless every one is asked for.
  const size_t dropped = s.result.rejected.size() + s.result.invalid.size() + s.result.lacking.size();
  EXPECT_EQ(lines(pp::search_heading(s.setting, s.result, true)), 3 + dropped);
  EXPECT_LE(lines(heading), 3 + 4 + 4u);
  EXPECT_NE(heading.find(std::to_string(s.result.variants) + " variants, " + std::to_string(s.result.estimated) +
                         " estimated, " + std::to_string(s.result.skipped) + " skipped"),
            std::string::npos)
      << heading;
  EXPECT_NE(heading.find(", " + std::to_string(s.result.broken) + " break a rule or need what the stack lacks\n"),
            std::string::npos)
      << heading;
}

// The search proposes only what the workload's stack runs and says what it left out for that reason:
// Megatron-LM of 2021 has no ZeRO, no sequence parallelism and no selective recomputation.
TEST(SearchReport, ProposesOnlyWhatTheStackRunsAndSaysWhatItLeftOut) {
  const auto w =
      paratwin::workloads::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/gpt-1.7b-selene-32.json");
  ASSERT_EQ(w.framework.profile, "megatron-lm-2021");
  const auto machine = pp::load_machine("selene");
  ps::SearchOptions options;
  options.gpus = 32;
  options.model.library = "nccl";
  const auto result = ps::search(w, pp::topology_for(machine, 32, "nccl"), options);
  ASSERT_FALSE(result.ranked.empty());
  for (const auto& c : result.ranked) {
    EXPECT_EQ(c.workload.parallel.zero_stage, 0) << c.label;
    EXPECT_FALSE(c.workload.parallel.sequence_parallel) << c.label;
    EXPECT_NE(c.workload.training.checkpointing, paratwin::workloads::Checkpointing::selective) << c.label;
  }
  ASSERT_FALSE(result.lacking.empty());
  for (const auto& l : result.lacking) EXPECT_NE(l.reason.find("megatron-lm-2021"), std::string::npos) << l.reason;
  const pp::SearchSetting setting{
      w.name, machine.name, "nccl", 32, true, machine.devices_per_node(), w.framework.profile};
  const auto heading = pp::search_heading(setting, result, false);
  EXPECT_NE(heading.find(std::to_string(result.lacking.size()) + " use what framework megatron-lm-2021 lacks"),
            std::string::npos)
      << heading;
  EXPECT_NE(heading.find("    stack  "), std::string::npos) << heading;
  const auto j = pp::search_json(setting, result, std::nullopt, nlohmann::json::array());
  EXPECT_EQ(j["lacking_in_stack"].size(), result.lacking.size());
}

TEST(SearchReport, OneTableWithTheSimulatedRowsReRanked) {
  const auto& r = searched().result;
  const auto analytical = pp::ranking_table(r, 3, nlohmann::json::array());
  EXPECT_EQ(lines(analytical), 1 + 3 + 1u);  // header, three rows, "... N more"
  EXPECT_EQ(analytical.find("analytical rank"), std::string::npos) << analytical;
  EXPECT_NE(analytical.find("  ... " + std::to_string(r.ranked.size() - 3) + " more (--top)\n"), std::string::npos);

  // The second simulated faster than the first, the third failed: re-ranked 2, 1, then the failure.
  auto result = r;
  nlohmann::json simulations = {{{"iteration_s", 3.0}}, {{"iteration_s", 2.5}}, {{"error", "it broke"}}};
  EXPECT_EQ(pp::rerank_by_simulation(result, simulations), 2u);
  EXPECT_EQ(result.ranked[0].label, r.ranked[1].label);
  EXPECT_EQ(result.ranked[0].analytical_rank, 2u);
  EXPECT_EQ(result.ranked[1].analytical_rank, 1u);
  EXPECT_EQ(result.ranked[2].analytical_rank, 3u);
  EXPECT_EQ(simulations[0]["iteration_s"], 2.5);
  const auto table = pp::ranking_table(result, 1, simulations);
  EXPECT_EQ(lines(table), 1 + 3 + 1 + 1u) << table;  // header, the simulated rows beyond --top, more, the note
  EXPECT_NE(table.find("analytical rank"), std::string::npos) << table;
  EXPECT_NE(table.find(" 2.5000 "), std::string::npos) << table;
  EXPECT_NE(table.find(" failed "), std::string::npos) << table;
  EXPECT_NE(table.find("  2 (moved)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("  1 (moved)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("rows 1-3 were simulated and are ranked by their simulated times (2 moved"), std::string::npos)
      << table;
  // --json and --emit keep both ranks.
  const auto j = pp::search_json(searched().setting, result, std::nullopt, simulations);
  EXPECT_EQ(j["ranked"][0]["rank"], 1);
  EXPECT_EQ(j["ranked"][0]["analytical_rank"], 2);
  const auto files = pp::emitted_files("out", searched().setting, result, 2, std::nullopt, simulations);
  EXPECT_NE(files.back().second.find(",2\n"), std::string::npos) << files.back().second;
}

TEST(SearchReport, NothingRankedSaysWhyAndWhatToChange) {
  pp::SearchSetting s{"GPT", "frontier", "rccl", 1000, true, 8, "generic"};
  ps::SearchResult r;
  r.configurations = 3;
  r.invalid = {{ps::Family::ptdp, "t1 p1 d1000 mb1", "training.global_batch: = 2048 is not a multiple",
                "training.global_batch", 0, 0, 0},
               {ps::Family::ptdp, "t2 p1 d500 mb1", "training.global_batch: = 2048 is not a multiple",
                "training.global_batch", 0, 0, 1},
               {ps::Family::ptdp, "t2 p1 d500 mb2", "training.global_batch: = 2048 is not a multiple (mb2)",
                "training.global_batch", 0, 0, 1},
               {ps::Family::ptdp, "t125 p1 d8 mb1", "parallelism.tensor.size: does not divide",
                "parallelism.tensor.size", 0, 0, 2}};
  const auto rules = pp::nothing_ranked(s, r, 2048);
  EXPECT_NE(rules.find("the one broken most, by 2 of 3 configurations, is on training.global_batch, e.g. ptdp t1 p1 "
                       "d1000 mb1"),
            std::string::npos)
      << rules;
  EXPECT_NE(rules.find("--gpus 512 or --gpus 1024, or a training.global_batch that 1000 divides (e.g. 2000)"),
            std::string::npos)
      << rules;
  r.rejected = {{ps::Family::ptdp, "t1 p1 d1 mb1 full", "needs", "", 80.0 * (1 << 30), 64.0 * (1 << 30), 0},
                {ps::Family::ptdp, "t1 p1 d1 mb2 full", "needs", "", 90.0 * (1 << 30), 64.0 * (1 << 30), 1}};
  const auto memory = pp::nothing_ranked(s, r, 2048);
  EXPECT_NE(memory.find("no configuration of 1000 GPUs fits in memory: the smallest, ptdp t1 p1 d1 mb1 full, needs "
                        "80.0 GiB per GPU and a frontier device has 64.0 GiB"),
            std::string::npos)
      << memory;
}

TEST(SearchReport, TheBestArePredictedOneByOneAndTheDocumentHasEveryConfiguration) {
  const auto& s = searched();
  pp::PointOptions options;
  options.model = pp::Model::analytical;  // no engine needed to check the loop
  std::vector<std::string> progress;
  const auto simulations = pp::simulate_candidates(s.result, 2, s.machine, options,
                                                   [&](const std::string& line) { progress.push_back(line); });
  ASSERT_EQ(simulations.size(), 2u);
  EXPECT_NEAR(simulations[0]["iteration_s"].get<double>(), s.result.ranked[0].estimate.iteration, 1e-9);
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
  const nlohmann::json simulations = {{{"iteration_s", 2.5}}};
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
  EXPECT_EQ(index.rfind("rank,file,family,configuration,analytical_seconds,simulated_seconds,gib_per_gpu,analytical_"
                        "rank\n1," +
                            pp::emitted_file_name(s.result, 0) + ",",
                        0),
            0u)
      << index;
  EXPECT_NE(index.find(",2.5,"), std::string::npos) << index;  // the simulated time of the first
}
