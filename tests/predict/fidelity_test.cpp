// The fidelity a SimGrid prediction runs at, and the algorithm overrides it accepts.
#include "predict/fidelity.hpp"

#include <gtest/gtest.h>

#include "common/input_error.hpp"

namespace pp = paratwin::predict;
using paratwin::InputError;

TEST(Fidelity, AutomaticByRankCount) {
  auto c = pp::choose_fidelity(pp::kAutoExactUpToRanks, "auto", false);
  EXPECT_EQ(c.fidelity, "exact");
  EXPECT_FALSE(c.fold);
  EXPECT_TRUE(c.automatic);
  c = pp::choose_fidelity(pp::kAutoExactUpToRanks + 1, "auto", false);
  EXPECT_EQ(c.fidelity, "fast");
  EXPECT_FALSE(c.fold);
  c = pp::choose_fidelity(pp::kAutoFoldAboveRanks + 1, "auto", false);
  EXPECT_EQ(c.fidelity, "fast");
  EXPECT_TRUE(c.fold);
  EXPECT_EQ(c.why, "auto: above 512 ranks");
}

// A search re-ranks its best few: automatic above 64 ranks, its simulations fold; what is asked wins.
TEST(Fidelity, SearchFoldsAboveExact) {
  auto c = pp::choose_search_fidelity(pp::kAutoExactUpToRanks, "auto", false);
  EXPECT_EQ(c.fidelity, "exact");
  c = pp::choose_search_fidelity(pp::kAutoExactUpToRanks + 1, "auto", false);
  EXPECT_EQ(c.fidelity, "fast");
  EXPECT_TRUE(c.fold);
  EXPECT_TRUE(c.automatic);
  EXPECT_EQ(c.why, "auto for a search: above 64 ranks");
  c = pp::choose_search_fidelity(512, "fast", false);
  EXPECT_FALSE(c.fold);
  EXPECT_FALSE(c.automatic);
  EXPECT_THROW(pp::choose_search_fidelity(512, "exact", true), InputError);
}

TEST(Fidelity, AskedForAndFolded) {
  auto c = pp::choose_fidelity(8, "auto", true);  // --fold with auto: fast, folded, whatever the count
  EXPECT_EQ(c.fidelity, "fast");
  EXPECT_TRUE(c.fold);
  EXPECT_FALSE(c.automatic);
  c = pp::choose_fidelity(8192, "exact", false);
  EXPECT_EQ(c.fidelity, "exact");
  EXPECT_EQ(c.why, "--fidelity exact");
  EXPECT_EQ(pp::describe(c, 8192), "8192 ranks: exact fidelity (--fidelity exact)");
}

TEST(Fidelity, RefusesWhatCannotRun) {
  try {
    pp::choose_fidelity(8, "exact", true);
    FAIL() << "folding with exact fidelity was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.path(), "--fold");
  }
  EXPECT_THROW(pp::choose_fidelity(8, "fastest", false), InputError);
}

TEST(Fidelity, AlgorithmOverrides) {
  const auto a = pp::parse_algorithms({"all_reduce=tree", "all_gather=recursive"});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.at(paratwin::workloads::OpKind::all_reduce), paratwin::sim::Algorithm::tree);
  for (const char* bad : {"all_reduce", "allreduce=ring", "all_reduce=spiral", "all_gather=tree"}) {
    try {
      pp::parse_algorithms({bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.path(), "--algorithm") << bad;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}
