// Predicting a point with SimGrid: each simulation in a child process (one engine per process), the
// prediction's figures drawn from its run summary, its document back to the same prediction, and the
// options refused before any engine starts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/input_error.hpp"
#include "predict/child_pool.hpp"
#include "predict/predict.hpp"
#include "workloads/workload.hpp"

namespace pp = paratwin::predict;
namespace pw = paratwin::workloads;
using paratwin::InputError;

namespace {

pw::Workload example(const std::string& name) {
  return pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + name);
}

}  // namespace

TEST(SimulatedPrediction, FiguresComeFromTheRunSummary) {
  const auto w = example("tiny-gpt-3d.json");
  const auto machine = pp::load_machine("perlmutter");
  const auto p = pp::predict_in_child(w, machine, {});
  ASSERT_TRUE(p.summary);
  ASSERT_TRUE(p.simulation);
  EXPECT_EQ(p.model, pp::Model::simulate);
  EXPECT_GT(p.iteration_seconds, 0);
  EXPECT_DOUBLE_EQ(p.iteration_seconds, p.summary->iteration_seconds);
  EXPECT_DOUBLE_EQ(p.compute_seconds, p.summary->busiest_stage().compute);
  EXPECT_DOUBLE_EQ(p.exposed_data_seconds, p.summary->exposed_seconds("data"));
  EXPECT_EQ(p.simulation->fidelity, "exact");  // auto: 8 ranks
  EXPECT_EQ(p.simulation->library, "nccl");
  EXPECT_EQ(p.simulation->nodes, 2);
  // The same point again: the same document, byte for byte.
  const auto again = pp::predict_in_child(w, machine, {});
  EXPECT_EQ(pp::to_json(again).dump(), pp::to_json(p).dump());
  EXPECT_EQ(pp::to_json(pp::prediction_from_json(pp::to_json(p))).dump(), pp::to_json(p).dump());
}

TEST(SimulatedPrediction, OptionsReachTheEngine) {
  const auto w = example("tiny-gpt-3d.json");
  const auto machine = pp::load_machine("perlmutter");
  pp::PointOptions o;
  o.fidelity = "fast";
  o.library = "cray-mpich";
  o.nodes = 4;  // a larger slice than the ranks need
  const auto p = pp::predict_in_child(w, machine, o);
  EXPECT_EQ(p.simulation->fidelity, "fast");
  EXPECT_EQ(p.simulation->library, "cray-mpich");
  EXPECT_EQ(p.simulation->nodes, 4);
  EXPECT_GT(p.iteration_seconds, pp::predict_in_child(w, machine, {}).iteration_seconds);
}

TEST(SimulatedPrediction, TraceAndWarnings) {
  const auto w = example("tiny-gpt-3d.json");
  const auto machine = pp::load_machine("perlmutter");
  pp::ChildPool pool(1);
  pool.start(0, [&] {
    pp::PointOptions o;
    std::ostringstream trace;
    o.trace = &trace;
    o.algorithms = {"all_to_all=pairwise"};  // the workload has none
    int warned = 0;
    o.warn = [&](const std::string&) { ++warned; };
    const auto p = pp::predict(w, machine, o);
    return nlohmann::json{{"trace", trace.str().size()}, {"warnings", p.warnings}, {"warned", warned}};
  });
  const auto r = pool.wait(-1);
  ASSERT_TRUE(r && r->ok) << (r ? r->error : "no result");
  EXPECT_GT(r->value["trace"].get<size_t>(), 1000u);
  ASSERT_EQ(r->value["warnings"].size(), 1u);
  EXPECT_EQ(r->value["warnings"][0], "--algorithm all_to_all=pairwise: the workload has no all_to_all collectives");
  EXPECT_EQ(r->value["warned"], 1);
}

// Refused before lowering or starting an engine, so in this process.
TEST(SimulatedPrediction, RefusesOptionsThatDoNotFit) {
  const auto w = example("tiny-gpt-3d.json");
  const auto machine = pp::load_machine("perlmutter");
  const auto path_of = [&](const pp::PointOptions& o) {
    try {
      pp::predict(w, machine, o);
    } catch (const InputError& e) {
      return e.path();
    }
    return std::string("accepted");
  };
  pp::PointOptions o;
  o.nodes = 1;  // 8 ranks need 2 nodes of 4
  EXPECT_EQ(path_of(o), "--nodes");
  o = {};
  o.fidelity = "exact";
  o.fold = true;
  EXPECT_EQ(path_of(o), "--fold");
  o = {};
  o.algorithms = {"all_reduce=spiral"};
  EXPECT_EQ(path_of(o), "--algorithm");
  EXPECT_THROW(pp::predict_in_child(example("gpt-20b-perlmutter-32.json"), pp::load_machine("localhost"), {}),
               std::runtime_error);
}

// The collective table's promise: what the compute stream waited for a collective is part of that
// collective's own time, at every fidelity and with pipelines, overlap and experts.
TEST(SimulatedPrediction, ExposedNeverExceedsTheCollectivesTime) {
  for (const char* name :
       {"tiny-gpt-3d.json", "tiny-pp-interleaved.json", "tiny-moe-ted.json", "tiny-tp1d.json", "tiny-optimus.json"}) {
    for (const char* fidelity : {"exact", "fast"}) {
      pp::PointOptions o;
      o.fidelity = fidelity;
      const auto p = pp::predict_in_child(example(name), pp::load_machine("perlmutter"), o);
      for (const auto& c : p.summary->collectives) {
        EXPECT_LE(c.exposed, c.seconds * (1 + 1e-9)) << name << " " << fidelity << " " << c.group;
        EXPECT_GT(c.count, 0) << name;
        EXPECT_NEAR(c.bytes_per_call() * static_cast<double>(c.count), c.bytes, 1e-6 * c.bytes) << name;
      }
    }
  }
}
