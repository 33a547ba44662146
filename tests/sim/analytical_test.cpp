// The analytical model against the papers' equations: the 4-D per-layer collective costs of [singh2025dissertation]
// eq. 5.1-5.5 (transposed layers swap G_x and G_y), the placement-aware bandwidth of eq. 5.7, the
// pipeline bubble (p-1)/(v·m) of [narayanan2021megatron] §2.2; its memory equals the lowering's; search's memory
// filter and enumeration. No SimGrid here (the ranking against the simulator is in
// analytical_ranking_test.cpp).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/analytical_model.hpp"
#include "sim/config_space.hpp"
#include "sim/search.hpp"
#include "topology/machine.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

namespace {

constexpr double kInter = 10e9;  // β_inter: the one NIC of a node, bytes/s

// `nodes` nodes of `per_node` devices joined by a 1 TB/s hub; one 10 GB/s NIC per node serves all its
// devices; a fat tree far faster than the NICs; no latencies and no per-step cost, so that only the
// bandwidth terms of the equations remain.
pt::Machine hub_machine(int nodes, int per_node) {
  nlohmann::json links = nlohmann::json::array();
  std::vector<int> served;
  for (int i = 0; i < per_node; ++i) {
    links.push_back({{"between", {"gpu" + std::to_string(i), "hub"}}, {"GBps", 1000}});
    served.push_back(i);
  }
  links.push_back({{"between", {"nic0", "hub"}}, {"GBps", 1000}});
  nlohmann::json m = {{"name", "hub"},
                      {"node",
                       {{"device",
                         {{"kind", "test"},
                          {"count", per_node},
                          {"peak_tflops", {{"bf16", 100}}},
                          {"memory_GB", 80},
                          {"memory_GBps", 1000}}},
                        {"routers", {"hub"}},
                        {"links", links},
                        {"nics", {{{"name", "nic0"}, {"GBps", kInter / 1e9}, {"serves", served}}}}}},
                      {"network",
                       {{"topology", "fat_tree"},
                        {"nodes", nodes},
                        {"fat_tree", {{"down", {nodes}}, {"up", {1}}, {"link_GBps", 1e4}}}}},
                      {"profile", {{"library", "nccl"}}}};
  return pt::parse_machine(m, "hub-machine");
}

pw::Workload four_d(int x, int y, int z, int data, const std::string& checkpointing = "none") {
  nlohmann::json w = {
      {"name", "four-d"},
      {"model", {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"seq_len", 32}, {"vocab", 128}}},
      {"training",
       {{"global_batch", 4 * data}, {"micro_batch", 4}, {"dtype", "bf16"}, {"checkpointing", checkpointing}}},
      {"parallelism", {{"data", {{"size", data}}}, {"tensor", {{"mode", "axonn"}, {"x", x}, {"y", y}, {"z", z}}}}},
      {"placement", {{"order", {"x", "y", "z", "pipe", "data"}}}}};
  return pw::parse_workload(w, "four-d.json");
}

// Seconds per group ("x", "y", "z", "data") and kind of one iteration.
std::map<std::pair<std::string, pw::OpKind>, double> by_group(const ps::AnalyticalEstimate& e) {
  std::map<std::pair<std::string, pw::OpKind>, double> out;
  for (const auto& c : e.collectives) out[{c.group, c.kind}] += c.seconds;
  return out;
}

TEST(AnalyticalModel, FourDLayerCostsFollowEquations51To55) {
  const double gx = 2, gy = 2, gz = 2, gd = 2, e = 2, beta = kInter;
  const pt::Topology topology(hub_machine(4, 4));
  ps::AnalyticalOptions agnostic;
  agnostic.placement_aware = false;  // every group at β: the equations' setting
  const auto w = four_d(2, 2, 2, 2);
  const auto est = ps::estimate(w, topology, agnostic);
  const double h = 64, f = 256, V = 128, S = 32, l = 2;
  const double m = 4 * S;  // tokens of one micro-batch (one micro-batch per iteration)
  struct Fc {
    double k, n;
    bool transposed;
  };
  std::vector<Fc> fcs;
  for (int layer = 0; layer < l; ++layer)
    fcs.insert(fcs.end(), {{h, 3 * h, false}, {h, h, true}, {h, f, false}, {f, h, true}});
  fcs.push_back({h, V, false});  // the output layer
  std::map<std::pair<std::string, pw::OpKind>, double> want;
  for (const Fc& fc : fcs) {
    // Transposed layers swap G_x and G_y (end of [singh2025dissertation] §5.1.2).
    const double x = fc.transposed ? gy : gx, y = fc.transposed ? gx : gy;
    const std::string ax = fc.transposed ? "y" : "x", ay = fc.transposed ? "x" : "y";
    want[{"z", pw::OpKind::all_gather}] += (gz - 1) * fc.k * fc.n / (x * y * gz) * e / beta;      // (5.1)
    want[{"z", pw::OpKind::reduce_scatter}] += (gz - 1) / gz * fc.k * fc.n / (x * y) * e / beta;  // (5.2)
    want[{ay, pw::OpKind::all_reduce}] += 2 * (y - 1) / y * m * fc.n / (gz * x) * e / beta;       // (5.3)
    want[{ax, pw::OpKind::all_reduce}] += 2 * (x - 1) / x * m * fc.k / (gz * y) * e / beta;       // (5.4)
    if (&fc != &fcs.back())
      want[{"data", pw::OpKind::all_reduce}] += 2 * (gd - 1) / gd * fc.k * fc.n / (gx * gy * gz) * e / beta;  // (5.5)
  }
  // Eq. 5.5 counts the weight matrices; the data-parallel all-reduce also carries each layer's biases
  // and layer norms (kept whole) and the embeddings (the word embedding once: on one stage the tied
  // output layer is that weight).
  const double small = l * (3 * h + h + f + h + 4 * h) + (V * h + S * h) / (gx * gy * gz);
  want[{"data", pw::OpKind::all_reduce}] += 2 * (gd - 1) / gd * small * e / beta;
  const auto got = by_group(est);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [key, seconds] : want) {
    ASSERT_TRUE(got.count(key)) << key.first << " " << pw::to_string(key.second);
    EXPECT_NEAR(got.at(key), seconds, 1e-9 * seconds) << key.first << " " << pw::to_string(key.second);
  }
  // Eq. 5.6: the layer's communication is their sum; without overlap it is all exposed.
  double total = 0, exposed = 0, sum = 0;
  for (const auto& c : est.collectives) {
    total += c.seconds;
    exposed += c.exposed;
  }
  for (const auto& [key, seconds] : want) sum += seconds;
  EXPECT_NEAR(total, sum, 1e-9 * sum);
  EXPECT_NEAR(exposed, total, 1e-9 * total);
  EXPECT_NEAR(est.iteration, est.compute + est.exposed_comm, 1e-9 * est.iteration);
}

// [singh2025dissertation] eq. 5.7: a group that crosses nodes gets β_inter / min(G_node, Π_{j<i} G_j) per ring:
// every inner group has a ring of its own through the node's one NIC.
TEST(AnalyticalModel, PlacementAwareBandwidthFollowsEquation57) {
  const int node = 4;
  const pt::Topology topology(hub_machine(8, node));
  struct Case {
    int x, y, z, data;
  };
  for (const Case c : {Case{2, 2, 2, 4}, Case{1, 1, 4, 8}, Case{2, 1, 1, 16}, Case{1, 2, 4, 4}, Case{4, 1, 2, 4}}) {
    const auto est = ps::estimate(four_d(c.x, c.y, c.z, c.data), topology);
    const std::map<std::string, std::pair<double, double>> axes = {{"x", {c.x, 1.0}},
                                                                   {"y", {c.y, 1.0 * c.x}},
                                                                   {"z", {c.z, 1.0 * c.x * c.y}},
                                                                   {"data", {c.data, 1.0 * c.x * c.y * c.z}}};
    for (const auto& col : est.collectives) {
      const auto [size, inner] = axes.at(col.group);
      const std::string what = std::to_string(c.x) + "x" + std::to_string(c.y) + "x" + std::to_string(c.z) + "x" +
                               std::to_string(c.data) + " " + col.group;
      if (size * inner <= node) {
        EXPECT_GT(col.bandwidth, kInter) << what << ": inside a node, faster than the NIC";  // case 1
      } else {
        EXPECT_NEAR(col.bandwidth, kInter / std::min<double>(node, inner), 1e-9 * kInter) << what;  // (5.7)
      }
    }
  }
}

TEST(AnalyticalModel, BubbleIsPMinusOneOverVM) {
  for (const char* file : {"tiny-pp-1f1b.json", "tiny-pp-interleaved.json"}) {
    const auto w = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + file);
    const pt::Topology topology(hub_machine(2, 4));
    const auto est = ps::estimate(w, topology);
    const double p = static_cast<double>(w.parallel.pipeline.stages),
                 v = static_cast<double>(w.parallel.pipeline.chunks), m = static_cast<double>(w.micro_batches());
    EXPECT_NEAR(est.bubble_fraction, (p - 1) / (v * m), 1e-12) << file;
    // [narayanan2021megatron] §2.2: the bubble lasts (p-1)/v micro-batch times.
    EXPECT_GT(est.micro_batch, 0) << file;
    EXPECT_NEAR(est.bubble, (p - 1) / v * est.micro_batch, 1e-12 * est.bubble) << file;
    EXPECT_NEAR(est.bubble, est.bubble_fraction * m * est.micro_batch, 1e-9 * est.bubble) << file;
  }
}

// The model lowers a few micro-batches and scales; its memory is the full lowering's.
TEST(AnalyticalModel, MemoryEqualsTheLoweringsEstimate) {
  for (const char* file : {"tiny-gpt-3d.json", "tiny-pp-1f1b.json", "tiny-pp-interleaved.json", "tiny-moe-ted.json",
                           "tiny-tp1d.json", "gpt-20b-perlmutter-32.json"}) {
    const auto w = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + file);
    const pt::Topology topology(hub_machine(8, 4));
    pw::LowerOptions lo;
    lo.devices_per_node = 4;
    double worst = 0;
    for (const auto& role : pw::lower(w, lo).roles) worst = std::max(worst, role.memory.total());
    EXPECT_NEAR(ps::estimate(w, topology).memory.total(), worst, 1e-9 * worst) << file;
  }
}

TEST(Search, DropsWhatDoesNotFitAndSaysWhy) {
  // On 16 GPUs some splits do not fit with any recomputation, ZeRO stage or micro-batch.
  const auto base = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/gpt-20b-perlmutter-32.json");
  const pt::Topology topology(pt::resolve_machine("perlmutter").slice(4));
  ps::SearchOptions options;
  options.gpus = 16;
  options.families = {ps::Family::four_d};
  const auto r = ps::search(base, topology, options);
  ASSERT_FALSE(r.rejected.empty());
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.enumerated, static_cast<int64_t>(r.ranked.size() + r.rejected.size()));
  const double device = topology.machine().node.device.memory;
  for (const auto& c : r.ranked) EXPECT_LE(c.estimate.memory.total(), device) << c.label;
  ps::AnalyticalModel model(topology);
  // A rejected configuration is named by its variant needing least memory, and even that does not fit.
  size_t checked = 0;
  for (const auto& rej : r.rejected) {
    EXPECT_NE(rej.reason.find("GiB per GPU, the device has"), std::string::npos) << rej.reason;
    for (const auto& cfg : ps::configurations(base, ps::Family::four_d, 16))
      for (const auto& k : cfg.variants)
        if (cfg.label(k) == rej.label) {
          EXPECT_GT(model.estimate(cfg.with(k)).memory.total(), device) << rej.label;
          ++checked;
        }
  }
  EXPECT_EQ(checked, r.rejected.size());
  for (size_t i = 1; i < r.ranked.size(); ++i)
    EXPECT_LE(r.ranked[i - 1].estimate.iteration, r.ranked[i].estimate.iteration);
  // Invalid splits are reported with the rule they break.
  ASSERT_FALSE(r.invalid.empty());
  for (const auto& inv : r.invalid)
    EXPECT_TRUE(inv.reason.rfind("parallelism.", 0) == 0 || inv.reason.rfind("training.", 0) == 0) << inv.reason;
}

TEST(Search, EnumeratesEveryFactorisation) {
  const auto base = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-gpt-3d.json");
  // 16 = 2^4 split over four axes: C(4 + 3, 3) = 35 ordered factorisations, the micro-batch a variant.
  EXPECT_EQ(ps::configurations(base, ps::Family::four_d, 16).size(), 35u);
  // PTD-P: t·p·d = 16 (15 ways); with a pipeline each micro-batch size (1, 2, 4, 8 that split the batch)
  // and each chunk count (p·v | 4 layers) is a configuration of its own.
  ps::Vary none = ps::Vary::nothing();
  EXPECT_EQ(ps::configurations(base, ps::Family::ptdp, 16, none).size(), 15u);
  EXPECT_TRUE(ps::configurations(base, ps::Family::ted, 16).empty());  // a dense model
}

TEST(Search, RefusesFamiliesThatCannotTrainTheModel) {
  const auto dense = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/tiny-gpt-3d.json");
  const pt::Topology topology(hub_machine(2, 4));
  ps::SearchOptions options;
  options.gpus = 8;
  options.families = {ps::Family::ted};
  // Checked where the families are asked for (families_problem); search takes it as a precondition.
  const auto why = ps::families_problem(dense, options.families);
  EXPECT_NE(why.find("a dense model needs 4d or ptdp"), std::string::npos) << why;
  EXPECT_THROW(ps::search(dense, topology, options), std::logic_error);
  options.families = {};
  options.gpus = 9;  // more than the machine has: a precondition the callers check (search's --gpus)
  EXPECT_THROW(ps::search(dense, topology, options), std::logic_error);
}

}  // namespace
