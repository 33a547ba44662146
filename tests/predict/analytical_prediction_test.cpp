// Predicting a point with the analytical model: the same figures sim::estimate gives, the busiest
// stage's breakdown, and clear errors for points that cannot be predicted.
#include <gtest/gtest.h>

#include <string>

#include "common/input_error.hpp"
#include "predict/collective.hpp"
#include "predict/predict.hpp"
#include "sim/analytical_model.hpp"
#include "workloads/workload.hpp"

namespace pp = paratwin::predict;
namespace pw = paratwin::workloads;

namespace {

pw::Workload example(const std::string& name) {
  return pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + name);
}

pp::PointOptions analytical() {
  pp::PointOptions o;
  o.model = pp::Model::analytical;
  return o;
}

}  // namespace

TEST(AnalyticalPrediction, IsTheEstimateOfTheWorkloadsNodes) {
  const auto w = example("gpt-20b-perlmutter-32.json");
  const auto machine = pp::load_machine("perlmutter");
  const auto p = pp::predict(w, machine, analytical());
  EXPECT_EQ(p.model, pp::Model::analytical);
  ASSERT_TRUE(p.estimate);
  EXPECT_FALSE(p.summary);
  const auto e = paratwin::sim::estimate(w, pp::topology_for(machine, w.total_ranks(), "nccl"));
  EXPECT_DOUBLE_EQ(p.iteration_seconds, e.iteration);
  EXPECT_DOUBLE_EQ(p.percent_of_peak, e.percent_of_peak);
  EXPECT_DOUBLE_EQ(p.model_tflops_per_device, e.model_flops / e.iteration / 32 / 1e12);
  EXPECT_DOUBLE_EQ(p.percent_of_peak_hardware, e.percent_of_peak_hardware);
  EXPECT_DOUBLE_EQ(p.hardware_tflops_per_device, e.hardware_flops / e.iteration / 32 / 1e12);
  EXPECT_DOUBLE_EQ(p.compute_seconds, e.compute);
  EXPECT_DOUBLE_EQ(p.memory_bytes_per_rank, e.memory.total());
  EXPECT_EQ(p.fits, e.fits());
  double data = 0;
  for (const auto& c : e.collectives)
    if (c.group == "data") data += c.exposed;
  EXPECT_DOUBLE_EQ(p.exposed_data_seconds, data);
  // Its document is the search's analytical entry.
  EXPECT_DOUBLE_EQ(pp::to_json(p)["iteration_s"].get<double>(), e.iteration);
}

TEST(AnalyticalPrediction, LibraryAndPlacementChangeIt) {
  const auto w = example("gpt-20b-perlmutter-32.json");
  const auto machine = pp::load_machine("perlmutter");
  auto o = analytical();
  const double nccl = pp::predict(w, machine, o).iteration_seconds;
  o.library = "cray-mpich";  // one NIC per node for all traffic, CPU reductions
  EXPECT_GT(pp::predict(w, machine, o).iteration_seconds, nccl);
  o.library.clear();
  o.placement_aware = false;
  EXPECT_NE(pp::predict(w, machine, o).iteration_seconds, nccl);
}

TEST(AnalyticalPrediction, PointsThatCannotBePredicted) {
  const auto w = example("gpt-20b-perlmutter-32.json");
  auto tiny = pp::load_machine("localhost");  // one node of 4 ranks
  try {
    pp::predict(w, tiny, analytical());
    FAIL() << "32 GPUs predicted on a 4-rank machine";
  } catch (const paratwin::InputError& e) {
    EXPECT_EQ(e.path(), "--machine");
    EXPECT_NE(std::string(e.what()).find("localhost has 4 devices, not the 32 GPUs asked for"), std::string::npos)
        << e.what();
  }
  auto o = analytical();
  o.nodes = 100;  // the analytical model runs on the nodes the ranks fill
  EXPECT_THROW(pp::predict(w, pp::load_machine("perlmutter"), o), paratwin::InputError);
  EXPECT_ANY_THROW(pp::load_machine("no-such-machine"));
}

TEST(AnalyticalPrediction, OneCollectiveInClosedForm) {
  const auto machine = pp::load_machine("perlmutter");
  const double small =
      pp::collective_seconds(machine, pw::OpKind::all_gather, 1 << 20, 32, "nccl", pp::Model::analytical);
  const double large =
      pp::collective_seconds(machine, pw::OpKind::all_gather, 1 << 30, 32, "nccl", pp::Model::analytical);
  EXPECT_GT(small, 0);
  EXPECT_GT(large, 100 * small);
  // A ring all-gather of 1 GiB output across 8 nodes cannot beat the nodes' NICs (4 x 25 GB/s).
  EXPECT_GT(large, (1 << 30) * (31.0 / 32) / 100e9);
  EXPECT_THROW(pp::collective_seconds(machine, pw::OpKind::all_gather, 1 << 20, 1 << 20, "nccl", pp::Model::analytical),
               paratwin::InputError);
}
