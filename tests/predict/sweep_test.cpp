// A sweep as a library: its spec read strictly, its points enumerated in spec order with keys that
// change with what a point depends on, and a point evaluated by the analytical model into its row.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/input_error.hpp"
#include "predict/sweep_point.hpp"
#include "predict/sweep_run.hpp"
#include "predict/sweep_spec.hpp"

namespace pp = paratwin::predict;

namespace {

std::string spec_file(const std::string& name) {
  return std::string(PARATWIN_SOURCE_DIR) + "/tests/e2e/sweep/" + name;
}

}  // namespace

TEST(Sweep, SpecAndPointsInSpecOrder) {
  const auto spec = pp::load_sweep_spec(spec_file("configurations.json"));
  EXPECT_EQ(spec.name, "configurations");
  EXPECT_EQ(spec.scaling, pp::Scaling::strong);
  EXPECT_EQ(spec.configurations, pp::ConfigurationMode::listed);
  ASSERT_EQ(spec.listed.size(), 2u);
  EXPECT_EQ(spec.models, (std::vector<std::string>{"simulate", "analytical"}));
  const auto points = pp::enumerate_points(spec);
  ASSERT_EQ(points.size(), 8u);  // 2 configurations x 2 models x 2 GPU counts
  // GPU count innermost, then model, then configuration: every scaling curve is a run of rows.
  EXPECT_EQ(points[0].gpus, 8);
  EXPECT_EQ(points[1].gpus, 16);
  EXPECT_EQ(points[1].model, "simulate");
  EXPECT_EQ(points[2].model, "analytical");
  EXPECT_EQ(points[4].configuration, 1u);
  std::set<std::string> keys;
  for (const auto& p : points) keys.insert(p.key);
  EXPECT_EQ(keys.size(), points.size());  // every point its own key
  // The same spec read again gives the same keys (a resumed sweep finds its points).
  EXPECT_EQ(pp::enumerate_points(pp::load_sweep_spec(spec_file("configurations.json")))[5].key, points[5].key);
}

TEST(Sweep, AnalyticalPointBecomesARow) {
  const auto spec = pp::load_sweep_spec(spec_file("configurations.json"));
  const auto points = pp::enumerate_points(spec);
  const auto row = pp::evaluate_point(spec, points[2]);  // 4-D, analytical, 8 GPUs
  ASSERT_EQ(row["status"], "ok") << row["error"];
  EXPECT_EQ(row["configuration"], "4d x2 y2 z2");
  EXPECT_EQ(row["gpus"], 8);
  EXPECT_EQ(row["nodes"], 1);  // 8 GCDs of one Frontier node
  EXPECT_GT(row["iteration_s"].get<double>(), 0);
  EXPECT_GE(row["compute_s"].get<double>(), 0);
  EXPECT_TRUE(row["fits"].get<bool>());
  // Strong scaling keeps the batch: twice the GPUs, a shorter iteration.
  const auto wider = pp::evaluate_point(spec, points[3]);
  EXPECT_EQ(wider["global_batch"], row["global_batch"]);
  EXPECT_LT(wider["iteration_s"].get<double>(), row["iteration_s"].get<double>());
}

TEST(Sweep, FailingPointsAndBadSpecs) {
  // 8 GPUs on a 4-device machine, and an invalid workload: each point fails alone, with its reason,
  // before any simulation starts.
  const auto spec = pp::load_sweep_spec(spec_file("failing-points.json"));
  int failed = 0;
  for (const auto& p : pp::enumerate_points(spec)) {
    if (p.gpus != 8 && p.workload != 1) continue;
    const auto row = pp::evaluate_point(spec, p);
    EXPECT_EQ(row["status"], "failed") << row.dump();
    EXPECT_FALSE(row["error"].get<std::string>().empty());
    ++failed;
  }
  EXPECT_EQ(failed, 4);
  for (const char* bad :
       {"bad-unknown-key.json", "bad-gpus-order.json", "bad-machine.json", "bad-missing-workload.json"})
    EXPECT_THROW(pp::load_sweep_spec(spec_file(bad)), paratwin::InputError) << bad;
}

// Found by fuzzing: two identical configurations gave their points the same journal keys, so a resumed
// sweep filled both rows with the first one's results (labelled as the first).
TEST(Sweep, RepeatedConfigurationRefused) {
  const std::string spec = R"({"name": "repeat", "workloads": ["../../../workloads/examples/tiny-dp.json"],
    "machines": ["localhost"], "gpus": [2], "scaling": "strong",
    "configurations": [{"parallelism": {"pipeline": {"stages": 2}}}, {"parallelism": {}},
                       {"parallelism": {"pipeline": {"stages": 2}}}]})";
  const std::string path = spec_file("repeat.json");
  try {
    pp::parse_sweep_spec(spec, path);
    ADD_FAILURE() << "accepted";
  } catch (const paratwin::InputError& e) {
    EXPECT_EQ(e.path(), path + ": configurations[2]");
    EXPECT_EQ(e.message(), "repeats configurations[0]: list each configuration once");
  }
  // The same parallelism under two labels is two configurations.
  const std::string labelled = R"({"name": "labels", "workloads": ["../../../workloads/examples/tiny-dp.json"],
    "machines": ["localhost"], "gpus": [2], "scaling": "strong",
    "configurations": [{"label": "a", "parallelism": {}}, {"label": "b", "parallelism": {}}]})";
  const auto points = pp::enumerate_points(pp::parse_sweep_spec(labelled, path));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NE(points[0].key, points[1].key);
}

// Found by fuzzing: a machine name with a path component longer than the file system allows threw
// std::filesystem::filesystem_error ("File name too long") instead of the spec's error.
TEST(Sweep, OverlongMachineNameRefused) {
  const std::string name(300, 'm');
  const std::string spec = R"({"name": "long", "workloads": ["../../../workloads/examples/tiny-dp.json"],
    "machines": [")" + name +
                           R"("], "gpus": [2], "scaling": "strong"})";
  const std::string path = spec_file("long.json");
  try {
    pp::parse_sweep_spec(spec, path);
    ADD_FAILURE() << "accepted";
  } catch (const paratwin::InputError& e) {
    EXPECT_EQ(e.path(), path + ": machines[0]");
    EXPECT_NE(e.message().find("is neither a built-in machine"), std::string::npos) << e.message();
  }
}

// Without "fidelity" each simulated point runs at simulate's automatic fidelity by its
// GPU count; a point's key is that of the fidelity it runs at, so "auto" and the same choice written
// out share journal rows, and a spec that says "fast" keeps the keys it had.
TEST(Sweep, AutomaticFidelityByPointAndItsKeys) {
  const auto spec_text = [](const std::string& extra) {
    return R"({"name": "auto", "workloads": ["../../../workloads/examples/tiny-dp.json"], "machines": ["frontier"],
      "gpus": [2, 128, 1024], "scaling": "weak")" +
           extra + "}";
  };
  const std::string path = spec_file("auto.json");
  const auto automatic = pp::parse_sweep_spec(spec_text(""), path);
  EXPECT_EQ(automatic.fidelity, "auto");
  const auto points = pp::enumerate_points(automatic);
  ASSERT_EQ(points.size(), 3u);
  const auto at = [&](size_t i) { return pp::point_fidelity(automatic, points[i]); };
  EXPECT_EQ(at(0).fidelity, "exact");
  EXPECT_EQ(at(1).fidelity, "fast");
  EXPECT_FALSE(at(1).fold);
  EXPECT_EQ(at(2).fidelity, "fast");
  EXPECT_TRUE(at(2).fold);
  // The default timeout follows SimGrid's cost at the point's fidelity.
  EXPECT_EQ(pp::default_point_timeout(automatic, points[0]), 600 + 5 * 2);
  EXPECT_EQ(pp::default_point_timeout(automatic, points[1]), 600 + 2 * 128);
  EXPECT_DOUBLE_EQ(pp::default_point_timeout(automatic, points[2]), 600 + 0.2 * 1024);
  EXPECT_NE(pp::sweep_start_line(3, 3, automatic, points[2], 1624)
                .find(", 1024 GPUs, simulate: fast fidelity, folded (auto: above 512 ranks); timeout 1624 s"),
            std::string::npos)
      << pp::sweep_start_line(3, 3, automatic, points[2], 1624);

  const auto exact = pp::enumerate_points(pp::parse_sweep_spec(spec_text(R"(, "fidelity": "exact")"), path));
  const auto fast = pp::enumerate_points(pp::parse_sweep_spec(spec_text(R"(, "fidelity": "fast")"), path));
  EXPECT_EQ(points[0].key, exact[0].key);
  EXPECT_EQ(points[1].key, fast[1].key);
  EXPECT_NE(points[2].key, fast[2].key);  // folded against one actor per rank
  EXPECT_NE(pp::sweep_start_line(2, 3, pp::parse_sweep_spec(spec_text(R"(, "fidelity": "fast")"), path), fast[1], 0)
                .find("fast fidelity (the spec's \"fidelity\": \"fast\"); no timeout"),
            std::string::npos);
  // "fold" goes with "auto" (every point folded) but not with "exact".
  const auto folded = pp::parse_sweep_spec(spec_text(R"(, "fold": true)"), path);
  EXPECT_TRUE(pp::point_fidelity(folded, pp::enumerate_points(folded)[0]).fold);
  EXPECT_THROW(pp::parse_sweep_spec(spec_text(R"(, "fidelity": "exact", "fold": true)"), path), paratwin::InputError);
}
