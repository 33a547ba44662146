// The registries of collective algorithms (sim/algorithms/registry.hpp) and communication libraries
// (topology/communication_libraries.hpp): every entry is complete — named, planned for every kind it
// supports, timed by the analytical model — and every library's selector picks, for every collective
// kind, an algorithm that supports it.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "sim/analytical_collectives.hpp"
#include "sim/collectives.hpp"
#include "sim/library.hpp"
#include "tests/sim/one_collective.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace ps = paratwin::sim;
namespace pt = paratwin::topology;
namespace pw = paratwin::workloads;

namespace {

const pw::OpKind kCollectives[] = {pw::OpKind::all_reduce, pw::OpKind::reduce_scatter, pw::OpKind::all_gather,
                                   pw::OpKind::broadcast,  pw::OpKind::reduce,         pw::OpKind::all_to_all};

// 16 members over two nodes of 8: a power of two, so that every algorithm can run.
ps::GroupLayout two_nodes() {
  ps::GroupLayout layout;
  for (int32_t i = 0; i < 16; ++i) layout.node.push_back(i / 8);
  return layout;
}

double moved(const std::vector<ps::Step>& steps) {
  double bytes = 0;
  for (const auto& s : steps)
    for (const auto& t : s.sends) bytes += t.bytes;
  return bytes;
}

}  // namespace

TEST(AlgorithmRegistry, EveryEntryIsNamedAndIndexedByItsEnumerator) {
  const auto& all = ps::registered_algorithms();
  ASSERT_GE(all.size(), 8u);
  std::set<std::string> names;
  for (size_t i = 0; i < all.size(); ++i) {
    const auto a = static_cast<ps::Algorithm>(i);
    ASSERT_NE(all[i].supports, nullptr) << all[i].name;
    ASSERT_NE(all[i].plan, nullptr) << all[i].name;
    EXPECT_TRUE(names.insert(all[i].name).second) << all[i].name << " is registered twice";
    EXPECT_EQ(ps::parse_algorithm(all[i].name), a) << all[i].name;
    EXPECT_STREQ(ps::to_string(a), all[i].name);
    int kinds = 0;
    for (auto kind : kCollectives) kinds += ps::supports(a, kind) ? 1 : 0;
    EXPECT_GT(kinds, 0) << all[i].name << " supports no collective";
  }
  EXPECT_EQ(ps::parse_algorithm("butterfly"), std::nullopt);
}

TEST(AlgorithmRegistry, EveryEntryPlansEveryKindItSupportsAndRefusesTheOthers) {
  const auto layout = two_nodes();
  for (size_t i = 0; i < ps::registered_algorithms().size(); ++i) {
    const auto a = static_cast<ps::Algorithm>(i);
    for (auto kind : kCollectives) {
      if (!ps::supports(a, kind)) {
        EXPECT_THROW(ps::plan(kind, a, layout, 0, 1 << 20, 0, ps::Fidelity::exact), std::invalid_argument);
        continue;
      }
      for (auto fidelity : {ps::Fidelity::exact, ps::Fidelity::fast}) {
        const auto plans = ps::plan_group(kind, a, layout, 1 << 20, 0, fidelity);
        ASSERT_EQ(plans.size(), 16u);
        double total = 0;
        for (const auto& steps : plans) total += moved(steps);
        EXPECT_GT(total, 0) << ps::to_string(a) << " " << pw::to_string(kind) << " moves nothing";
      }
    }
  }
}

// The analytical model has no default: every registered algorithm it is asked to time, for every kind the
// algorithm supports, gives a finite positive time (an algorithm registered without its loads does not
// build: sim/analytical_collectives.cpp switches over AnalyticalLoads without a default).
TEST(AlgorithmRegistry, TheAnalyticalModelTimesEveryEntry) {
  const pt::Topology topology(pt::resolve_machine("frontier").slice(2));
  for (size_t i = 0; i < ps::registered_algorithms().size(); ++i) {
    const auto a = static_cast<ps::Algorithm>(i);
    for (auto kind : kCollectives) {
      if (!ps::supports(a, kind)) continue;
      const auto program =
          paratwin::test::one_collective(pw::Grid({{"inner", 1}, {"pipe", 1}, {"data", 16}}), 8, kind, 64e6);
      for (bool aware : {true, false}) {
        ps::CollectiveTimes times(topology, "rccl", aware, {{kind, a}});
        const double s = times.seconds(program, program.placement(), 0, kind, program.grid.mask("data"), 64e6, 0);
        EXPECT_TRUE(std::isfinite(s) && s > 0) << ps::to_string(a) << " " << pw::to_string(kind) << ": " << s;
      }
    }
  }
}

TEST(LibraryRegistry, EveryNamedLibraryIsRegisteredWithASelectorForEveryKind) {
  const auto& names = pt::communication_libraries();
  ASSERT_EQ(names.size(), ps::registered_libraries().size());
  for (const auto& name : names) {
    const auto& lib = ps::library_spec(name);
    EXPECT_EQ(lib.name, name);
    ASSERT_NE(lib.default_algorithm, nullptr) << name;
    ASSERT_NE(lib.select, nullptr) << name;
    for (auto kind : kCollectives)
      EXPECT_TRUE(ps::supports(lib.default_algorithm(kind), kind))
          << name << " picks " << ps::to_string(lib.default_algorithm(kind)) << " for " << pw::to_string(kind);
  }
  EXPECT_THROW(ps::library_spec("gloo"), std::invalid_argument);
}

TEST(LibraryRegistry, EveryLibraryRunsEveryKindOnEveryMachineItCanBeNamedOn) {
  for (const auto& name : pt::communication_libraries())
    for (const char* machine : {"frontier", "perlmutter"}) {
      const pt::Topology topology(pt::resolve_machine(machine).slice(2), ps::topology_options(name));
      const int64_t per_node = topology.machine().devices_per_node();
      for (auto kind : kCollectives) {
        const auto program = paratwin::test::one_collective(
            pw::Grid({{"inner", 1}, {"pipe", 1}, {"data", 2 * per_node}}), per_node, kind, 64e6);
        ps::CollectiveTimes times(topology, name, true);
        const double s = times.seconds(program, program.placement(), 0, kind, program.grid.mask("data"), 64e6, 0);
        EXPECT_TRUE(std::isfinite(s) && s > 0) << name << " on " << machine << ", " << pw::to_string(kind);
      }
    }
}

TEST(AlgorithmRegistry, EveryEntryTellsTheAnalyticalModelHowItLoadsTheNetwork) {
  for (const auto& a : ps::registered_algorithms()) EXPECT_TRUE(a.loads.has_value()) << a.name;
}
