// The run summary a prediction and a measurement share: stage means, bubble, collective bandwidths and
// memory from a run's rows, its JSON document back to the same record, and the lines a simulation's
// report opens with.
#include "reports/run_summary.hpp"

#include <gtest/gtest.h>

#include <string>

#include "predict/simulation_text.hpp"
#include "reports/saved_summary.hpp"
#include "reports/summary_text.hpp"
#include "tests/predict/tiny_pipeline.hpp"
#include "topology/machine.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace reports = paratwin::reports;
namespace pp = paratwin::predict;
namespace pw = paratwin::workloads;

namespace {

using paratwin::test::tiny_pipeline;

}  // namespace

TEST(RunSummary, StagesBubbleCollectivesAndMemory) {
  const auto r = tiny_pipeline();
  ASSERT_EQ(r.program.grid.size(), 2);
  const std::vector<reports::RankRow> ranks = {{1.0, 0.1, 0.2, 0.0}, {1.5, 0.0, 0.1, 0.05}};
  const auto pipe = r.program.grid.mask("pipe");
  const std::vector<reports::CollectiveRow> collectives = {{pw::OpKind::all_reduce, pipe, "ring", 4, 8e6, 2e-3, 1e-3}};
  const auto s = reports::summarize(r.w, r.program, r.machine, 2.0, ranks, collectives);
  EXPECT_EQ(s.ranks, 2);
  EXPECT_DOUBLE_EQ(s.iteration_seconds, 2.0);
  EXPECT_DOUBLE_EQ(s.tokens_per_second, static_cast<double>(r.program.tokens_per_iteration) / 2.0);
  EXPECT_DOUBLE_EQ(s.model_tflops_per_device, r.program.model_flops / 2.0 / 2 / 1e12);
  EXPECT_DOUBLE_EQ(s.percent_of_peak,
                   100 * r.program.model_flops / 2.0 / 2 / r.machine.node.device.peak_flops.at("fp32"));
  EXPECT_DOUBLE_EQ(s.hardware_tflops_per_device, r.program.hardware_flops / 2.0 / 2 / 1e12);
  EXPECT_DOUBLE_EQ(s.percent_of_peak_hardware,
                   100 * r.program.hardware_flops / 2.0 / 2 / r.machine.node.device.peak_flops.at("fp32"));
  EXPECT_EQ(s.recomputation, pw::to_string(r.w.training.checkpointing));
  EXPECT_DOUBLE_EQ(s.bubble_analytical, 1.0 / 8);
  EXPECT_DOUBLE_EQ(s.bubble_measured, 0.3 / 2.5);
  ASSERT_EQ(s.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(s.stages[1].compute, 1.5);
  EXPECT_EQ(s.busiest_stage().stage, 1);
  ASSERT_EQ(s.collectives.size(), 1u);
  const auto& c = s.collectives[0];
  EXPECT_EQ(c.group, "pipe");
  EXPECT_EQ(c.group_size, 2);
  EXPECT_DOUBLE_EQ(c.algbw(), 4e9);
  EXPECT_DOUBLE_EQ(c.busbw(), 4e9);  // an all-reduce of 2: 2·(2-1)/2
  EXPECT_DOUBLE_EQ(s.exposed_seconds("pipe"), 1e-3);
  EXPECT_DOUBLE_EQ(s.exposed_seconds("data"), 0);
  EXPECT_TRUE(s.fits);
  EXPECT_DOUBLE_EQ(s.device_bytes, r.machine.node.device.memory);
}

TEST(RunSummary, MeasuredCollectivesSayMeasured) {
  const auto r = tiny_pipeline();
  const auto s = reports::summarize(r.w, r.program, r.machine, 1.0, {{1, 0, 0, 0}, {1, 0, 0, 0}},
                                    {{pw::OpKind::all_gather, r.program.grid.mask("pipe"), "", 1, 1e6, 1e-3, 0}});
  EXPECT_EQ(s.collectives[0].algorithm, "measured");
  EXPECT_DOUBLE_EQ(s.collectives[0].busbw(), 0.5e9);  // an all-gather of 2: (2-1)/2
}

TEST(RunSummary, JsonDocumentRoundTrips) {
  const auto r = tiny_pipeline();
  const auto s =
      reports::summarize(r.w, r.program, r.machine, 0.123456789, {{0.1, 0.01, 0.02, 0}, {0.11, 0, 0.005, 0.001}},
                         {{pw::OpKind::reduce_scatter, r.program.grid.mask("pipe"), "ring", 3, 1.5e6, 1e-4, 5e-5}});
  const auto j = reports::to_json(s);
  EXPECT_EQ(j["collectives"][0]["overlapped_s"].get<double>(), 5e-5);
  EXPECT_EQ(j["ranks_compute_exposed_bubble_other_s"].size(), 2u);
  const auto back = reports::run_summary_from_json(j);
  EXPECT_EQ(reports::to_json(back).dump(), j.dump());
  EXPECT_EQ(back.busiest_stage().stage, 1);
  auto broken = j;
  broken.erase("memory");
  EXPECT_ANY_THROW(reports::run_summary_from_json(broken));
}

TEST(RunSummary, ModelFlopsFollowThroughputWhateverTheRecomputation) {
  // Model TFLOP/s and % of peak counted recomputation, so a faster configuration
  // without it could show a lower % of peak. Model FLOPs per device times the iteration time are the
  // same under every checkpointing; hardware FLOPs add the recomputation.
  auto r = tiny_pipeline();
  std::vector<double> model, hardware;
  for (auto c : {pw::Checkpointing::full, pw::Checkpointing::selective, pw::Checkpointing::none}) {
    r.w.training.checkpointing = c;
    pw::LowerOptions o;
    o.devices_per_node = r.machine.devices_per_node();
    const auto program = pw::lower(r.w, o);
    const double T = c == pw::Checkpointing::full ? 2.0 : 1.5;
    const auto s = reports::summarize(r.w, program, r.machine, T, {{1, 0, 0, 0}, {1, 0, 0, 0}}, {});
    model.push_back(s.model_tflops_per_device * T);
    hardware.push_back(s.hardware_tflops_per_device * T);
    EXPECT_NEAR(s.percent_of_peak / s.model_tflops_per_device,
                s.percent_of_peak_hardware / s.hardware_tflops_per_device, 1e-9);
  }
  EXPECT_DOUBLE_EQ(model[1], model[0]);
  EXPECT_DOUBLE_EQ(model[2], model[0]);
  EXPECT_GT(hardware[0], hardware[1]);  // a full forward more than the attention core
  EXPECT_GT(hardware[1], hardware[2]);
  EXPECT_DOUBLE_EQ(hardware[2], model[2]);
}

TEST(RunSummary, ACollectivesTimePerCallIsItsOwnNotTheWaitForPeers) {
  // Per rank, a call counted from the rank's own start includes waiting for the group's
  // last member; time per call, algbw and busbw are the call's own (from that arrival to its end).
  const auto r = tiny_pipeline();
  const auto pipe = r.program.grid.mask("pipe");
  const auto s = reports::summarize(r.w, r.program, r.machine, 1.0, {{1, 0, 0, 0}, {1, 0, 0, 0}},
                                    {{pw::OpKind::all_reduce, pipe, "ring", 4, 8e6, 5e-3, 4e-3, 3e-3, 2e-3}});
  const auto& c = s.collectives[0];
  EXPECT_DOUBLE_EQ(c.seconds_per_call(), 0.5e-3);
  EXPECT_DOUBLE_EQ(c.algbw(), 4e9);
  const auto j = reports::to_json(s);
  EXPECT_EQ(j["collectives"][0]["waiting_s"].get<double>(), 3e-3);
  EXPECT_EQ(j["collectives"][0]["call_s"].get<double>(), 2e-3);
  EXPECT_EQ(reports::to_json(reports::run_summary_from_json(j)).dump(), j.dump());
  // A measured collective knows neither: its own spans stand for its calls, and the JSON says nothing more.
  const auto m = reports::summarize(r.w, r.program, r.machine, 1.0, {{1, 0, 0, 0}, {1, 0, 0, 0}},
                                    {{pw::OpKind::all_reduce, pipe, "", 4, 8e6, 5e-3, 4e-3}});
  EXPECT_DOUBLE_EQ(m.collectives[0].seconds_per_call(), 1.25e-3);
  EXPECT_FALSE(reports::to_json(m)["collectives"][0].contains("call_s"));
}

TEST(RunSummary, ReadsSummariesSavedBeforeModelAndHardwareFlopsWereToldApart) {
  // A saved `simulate --json` of the oldest layout: the names before schema version 1, and one "model"
  // figure that counted recomputation.
  const auto r = tiny_pipeline();
  auto j = reports::to_json(reports::summarize(r.w, r.program, r.machine, 1.0, {{1, 0, 0, 0}, {1, 0, 0, 0}}, {}));
  for (const char* key : {"schema_version", "hardware_tflops_per_gpu", "percent_of_peak_hardware", "flops_convention",
                          "model_tflops_per_gpu"})
    j.erase(key);
  j["iteration_seconds"] = j["iteration_s"];
  j["tokens_per_second"] = j["tokens_per_s"];
  j["ranks_compute_exposed_bubble_other"] = j["ranks_compute_exposed_bubble_other_s"];
  j["memory"]["max_bytes_per_rank"] = j["memory"]["max_bytes_per_gpu"];
  for (const char* key : {"iteration_s", "tokens_per_s", "ranks_compute_exposed_bubble_other_s"}) j.erase(key);
  j["memory"].erase("max_bytes_per_gpu");
  for (auto& st : j["stages"])
    for (const std::string key : {"compute", "exposed_comm", "bubble", "other_idle"}) {
      st[key] = st[key + "_s"];
      st.erase(key + "_s");
    }
  j["model_tflops_per_device"] = 123.0;
  j["percent_of_peak"] = 39.4;
  const auto s = reports::read_saved_summary(j, "old.json");
  EXPECT_TRUE(s.legacy_flops);
  EXPECT_DOUBLE_EQ(s.iteration_seconds, 1.0);
  EXPECT_DOUBLE_EQ(s.hardware_tflops_per_device, 123.0);
  EXPECT_DOUBLE_EQ(s.percent_of_peak_hardware, 39.4);
  // Written back under today's names, with the one figure it has: a hardware figure, no model figure.
  const auto back = reports::to_json(s);
  EXPECT_EQ(back["schema_version"], 1);
  EXPECT_DOUBLE_EQ(back["hardware_tflops_per_gpu"].get<double>(), 123.0);
  EXPECT_FALSE(back.contains("model_tflops_per_gpu"));
  EXPECT_TRUE(reports::run_summary_from_json(back).legacy_flops);
  EXPECT_EQ(reports::flops_lines(s, "bf16"),
            "  hardware FLOPs        123 TFLOP/s per device = 39.4% of bf16 peak (HFU, saved by an older paratwin, "
            "recomputation counted)\n"
            "  (model FLOPs: forward + backward, no recomputation, 6N + 12·l·h·s per token as PaLM App. B; hardware "
            "FLOPs add\n   what checkpointing recomputes, Megatron SC21 eq. 3 with full; both count the full s×s "
            "attention, not the causal half)\n");
}

TEST(RunSummary, ASimulationSaysHowItRanBeforeItsSummary) {
  const auto r = tiny_pipeline();
  const auto s = reports::summarize(r.w, r.program, r.machine, 1.0, {{1, 0, 0, 0}, {1, 0, 0, 0}}, {});
  pp::SimulationRecord record;
  record.nodes = 1;
  record.fidelity = "fast";
  record.library = "nccl";
  record.not_folded_because = "node 0 holds ranks of different pipeline stages";
  EXPECT_EQ(pp::simulation_heading(r.w, pp::prediction_of(s, record)),
            r.w.name +
                " on perlmutter (1 nodes, 2 ranks), fast fidelity, nccl, framework generic\n"
                "  simulated as          one actor per rank (not folded: node 0 holds ranks of different pipeline "
                "stages)\n");
  record.profile = "profile.json";
  record.folded = true;
  record.folded_by = "node";
  record.actors = 1;
  EXPECT_EQ(pp::simulation_heading(r.w, pp::prediction_of(s, record)),
            r.w.name +
                " on perlmutter (1 nodes, 2 ranks), fast fidelity, nccl, framework generic\n"
                "  calibrated by         profile.json\n"
                "  simulated as          1 actors for 2 ranks (one per node; collectives inside a node timed "
                "analytically)\n");
}

// Hardware FLOPs say how much full checkpointing recomputes when only some layers do.
TEST(RunSummary, HardwareFlopsNameAPartialRecomputation) {
  const auto r = tiny_pipeline();
  auto s = reports::summarize(r.w, r.program, r.machine, 1.0, {{1, 0, 0, 0}, {1, 0, 0, 0}}, {});
  s.recomputation = "full";
  EXPECT_NE(reports::flops_lines(s, "bf16").find("(HFU, with full recomputation)"), std::string::npos);
  s.recompute_num_layers = 1;
  EXPECT_NE(
      reports::flops_lines(s, "bf16").find("(HFU, with full recomputation of the first layer of each model chunk)"),
      std::string::npos);
  s.recompute_num_layers = 3;
  EXPECT_NE(reports::flops_lines(s, "bf16").find("of the first 3 layers of each model chunk)"), std::string::npos);
}
