// `paratwin machine list` and `machine show` as text: the catalog, and a machine's node, path
// bandwidths, network paths and profile as the CLI prints them.
#include "topology/machine_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pt = paratwin::topology;

TEST(MachineText, TheCatalogHasALinePerBuiltInMachine) {
  const auto text = pt::machine_list_text();
  EXPECT_EQ(text.rfind("machine         nodes   devices/node    devices network    device\n", 0), 0u) << text;
  for (const auto& name : pt::builtin_machine_names())
    EXPECT_NE(text.find("\n" + name + " "), std::string::npos) << name;
  EXPECT_NE(text.find("\nsummit           4608              6      27648 fat_tree   NVIDIA V100-SXM2 16 GB\n"),
            std::string::npos)
      << text;
}

TEST(MachineText, AMachineShowsItsNodePathsNetworkAndProfile) {
  const auto text = pt::machine_text(pt::resolve_machine("frontier"));
  EXPECT_EQ(text.rfind("frontier: OLCF Frontier", 0), 0u);
  EXPECT_NE(text.find("\nnodes 9408 × 8 AMD MI250X GCD = 75264 devices\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  gpu0     — gpu1         200 GB/s      0.5 us  same package"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  nic0 25 GB/s serves gpu0 gpu1\n"), std::string::npos) << text;
  // The path table: one hop between the package's two GCDs, a multi-hop route marked.
  EXPECT_NE(text.find("\n  gpu0      -   200     50     50*    50*    50*   100    100*\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nnetwork: dragonfly: 74 groups × 32 switches (128 nodes per group"), std::string::npos);
  EXPECT_NE(text.find("\n  first to last device: 25 GB/s, 3.15 us, 4 switch(es), 1 global hop(s)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nprofile: library rccl, launch overhead 10 us, 39 us per collective step, compute 15.9 % "
                      "slower while a collective runs beside it\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("square GEMMs (kernel only): 1024^3 32% 4096^3 59% 16384^3 64% of peak\n"), std::string::npos);
  EXPECT_NE(text.find("\nsources:\n  - OLCF Frontier User Guide"), std::string::npos);

  // One node: no network paths to show.
  const auto one = pt::machine_text(pt::resolve_machine("localhost"));
  EXPECT_EQ(one.find("first to last device"), std::string::npos);
  EXPECT_NE(one.find(", packing at 34 GB/s; square GEMMs"), std::string::npos) << one;
  EXPECT_NE(pt::machine_text(pt::resolve_machine("summit").slice(4)).find("nodes 4 × 6 NVIDIA V100"),
            std::string::npos);
}
