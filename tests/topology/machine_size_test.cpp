// Machines too large to simulate are refused when read (a dragonfly of 8,192 groups once
// took minutes and 5.8 GB to start a 2-rank simulation, one of 65,536 groups ended in std::bad_alloc),
// each with the rule and the limit; machine_size(), which the limits rest on, counts exactly the
// resources a Topology builds.
#include "topology/machine_size.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/input_rejects.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace paratwin::topology {
namespace {

using nlohmann::json;

// 16 nodes of 4 devices in a ring, 2 NICs, a dragonfly of 4 groups × 4 switches × 2 NICs per switch.
json dragonfly() {
  return json::parse(R"({
    "name": "tiny",
    "node": {
      "device": {"kind": "test GPU", "count": 4, "peak_tflops": {"bf16": 100}, "memory_GB": 16, "memory_GBps": 1000},
      "routers": ["cpu0"],
      "links": [
        {"between": ["gpu0", "gpu1"], "GBps": 100}, {"between": ["gpu1", "gpu2"], "GBps": 100},
        {"between": ["gpu2", "gpu3"], "GBps": 100}, {"between": ["gpu3", "gpu0"], "GBps": 100},
        {"between": ["cpu0", "gpu0"], "GBps": 32}, {"between": ["nic0", "gpu1"], "GBps": 32},
        {"between": ["nic1", "gpu3"], "GBps": 32}
      ],
      "nics": [{"name": "nic0", "GBps": 25, "serves": [0, 1]}, {"name": "nic1", "GBps": 25, "serves": [2, 3]}]
    },
    "network": {
      "topology": "dragonfly", "nodes": 16,
      "dragonfly": {"groups": 4, "switches_per_group": 4, "nics_per_switch": 2, "global_links_per_pair": 2,
                    "local_GBps": 25, "global_GBps": 25}
    },
    "profile": {"library": "nccl"}
  })");
}

json fat_tree() {
  json d = dragonfly();
  d["network"] = json::parse(R"({
    "topology": "fat_tree", "nodes": 16, "fat_tree": {"down": [4, 8], "up": [1, 4], "link_GBps": 25}
  })");
  return d;
}

// One node of `devices` devices, each linked to the next (a chain; `ring` closes it).
json single_node(int devices, bool ring) {
  json d = dragonfly();
  d["node"].erase("nics");
  d["node"].erase("routers");
  d["node"]["device"]["count"] = devices;
  d["node"]["links"] = json::array();
  for (int i = 0; i + 1 < devices + (ring ? 1 : 0); ++i)
    d["node"]["links"].push_back(
        {{"between", {"gpu" + std::to_string(i), "gpu" + std::to_string((i + 1) % devices)}}, {"GBps", 10}});
  d["network"] = {{"topology", "none"}, {"nodes", 1}};
  return d;
}

::testing::AssertionResult rejects(const json& doc, const std::string& path, const std::string& needle) {
  return test::rejects_with<MachineError>([&] { parse_machine(doc, "m.json"); }, "MachineError", "machine",
                                          "m.json: " + path, needle);
}

TEST(MachineSize, CountsWhatTheTopologyBuilds) {
  json adaptive = dragonfly();
  adaptive["network"]["dragonfly"]["routing"] = "adaptive";
  json rails = fat_tree();
  rails["network"]["fat_tree"] = {{"down", {4, 2, 4}}, {"up", {1, 2, 2}}, {"link_GBps", 25}, {"rail_optimized", true}};
  for (const json& d : {dragonfly(), adaptive, fat_tree(), rails, single_node(8, true)}) {
    const Machine m = parse_machine(d, "");
    for (int64_t nodes : {int64_t{1}, m.network.nodes}) {
      const Machine slice = m.slice(nodes);
      EXPECT_EQ(machine_size(slice).resources(static_cast<double>(nodes)),
                static_cast<double>(Topology(slice).resources()))
          << d.dump();
    }
  }
  for (const auto& name : builtin_machine_names()) {
    const Machine m = resolve_machine(name);
    EXPECT_EQ(machine_size(m).resources(static_cast<double>(m.network.nodes)),
              static_cast<double>(Topology(m).resources()))
        << name;
  }
}

// Dragonflies the reader once accepted: then minutes and gigabytes (8,192 groups) or std::bad_alloc (65,536).
TEST(MachineSize, DragonflyWithTooManyGroups) {
  for (int groups : {8192, 65536}) {
    json d = dragonfly();
    d["network"]["dragonfly"]["groups"] = groups;
    d["network"]["dragonfly"]["global_links_per_pair"] = 1;
    EXPECT_TRUE(rejects(d, "network.dragonfly.groups",
                        "= " + std::to_string(groups) + " makes " +
                            std::to_string(int64_t{groups} * (groups - 1) + int64_t{groups} * 12) +
                            " network links (both directions of " + std::to_string(int64_t{groups} * (groups - 1) / 2) +
                            " global links"))
        << groups;
    EXPECT_TRUE(rejects(d, "network.dragonfly.groups", "more than the 4194304 SimGrid links"));
  }
  // 1,024 groups with one link per pair are 1,047,552 global link directions: within the limit.
  json d = dragonfly();
  d["network"]["dragonfly"]["groups"] = 1024;
  d["network"]["dragonfly"]["global_links_per_pair"] = 1;
  EXPECT_NO_THROW(parse_machine(d, ""));
  d["network"]["dragonfly"]["global_links_per_pair"] = 5;
  EXPECT_TRUE(rejects(d, "network.dragonfly.groups", "× global_links_per_pair"));
}

TEST(MachineSize, DragonflyWithTooManySwitches) {
  json d = dragonfly();
  d["network"]["dragonfly"]["switches_per_group"] = 4096;
  EXPECT_TRUE(rejects(d, "network.dragonfly.switches_per_group", "= 4096 makes"));
}

// Products of radices beyond int64 are counted, not overflowed.
TEST(MachineSize, FatTreeTooLarge) {
  json d = fat_tree();
  d["network"]["fat_tree"]["down"] = {4096, 4096, 4096, 4096, 4096, 4096};
  d["network"]["fat_tree"]["up"] = {4096, 4096, 4096, 4096, 4096, 4096};
  EXPECT_TRUE(rejects(d, "network.fat_tree.up", "make a tree of 1.16e+26 links"));
  // 2^21 + 2 × 2^18 links.
  d["network"]["fat_tree"]["down"] = {512, 64, 64};
  d["network"]["fat_tree"]["up"] = {1, 64, 64};
  EXPECT_TRUE(rejects(d, "network.fat_tree.up", "make a tree of 2621440 links, 5242880 in both directions"));
}

TEST(MachineSize, WholeMachineTooLarge) {
  // 512 groups of 64 switches: a network within the limit, room for 2^20 nodes of 18 link directions.
  json d = dragonfly();
  d["network"]["dragonfly"] = {
      {"groups", 512}, {"switches_per_group", 64}, {"nics_per_switch", 64}, {"local_GBps", 25}, {"global_GBps", 25}};
  d["network"]["nodes"] = 1 << 20;
  EXPECT_TRUE(rejects(d, "network.nodes", "= 1048576 nodes of 18 link directions each"));
  d["network"]["nodes"] = 100000;
  EXPECT_NO_THROW(parse_machine(d, ""));
}

TEST(MachineSize, NodeRouteTable) {
  // A ring of 1,024 devices: 2^28 hops over the routes between every two of them.
  EXPECT_TRUE(rejects(single_node(1024, true), "node.links", "give routes of 268435456 hops in all"));
  EXPECT_NO_THROW(parse_machine(single_node(64, true), ""));
  // More endpoints and links than routing searches from every device.
  json d = dragonfly();
  for (int i = 0; i < 2044; ++i) d["node"]["routers"].push_back("r" + std::to_string(i));
  EXPECT_TRUE(rejects(d, "node.routers", "make the node 2051 endpoints (4 devices, 2 NICs, 2045 routers)"));
  d = single_node(1024, false);
  for (int i = 0; i < 1024 && d["node"]["links"].size() <= 8192; ++i)
    for (int j = i + 2; j < 1024 && d["node"]["links"].size() <= 8192; j += 50)
      d["node"]["links"].push_back({{"between", {"gpu" + std::to_string(i), "gpu" + std::to_string(j)}}, {"GBps", 1}});
  EXPECT_TRUE(rejects(d, "node.links", "has 8193 links, more than the 8192"));
}

}  // namespace
}  // namespace paratwin::topology
