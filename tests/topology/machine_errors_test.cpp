// Every class of malformed machine description the loader rejects: each test starts from a valid
// small machine (a dragonfly or a fat tree of 16 nodes with 4 devices and 2 NICs each), breaks one
// thing, and checks the MachineError's JSON path and that its message names the broken rule. Then
// the catalog: file names prefix error paths, unknown names list the built-in machines, --nodes
// slices are checked, and every built-in machine loads, matches its file and builds a Topology.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/input_rejects.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace paratwin::topology {
namespace {

using nlohmann::json;

// 16 nodes of 4 devices in a ring of 100 GB/s links, 2 NICs (devices 0-1 and 2-3), a dragonfly of
// 4 groups × 4 switches × 2 NICs per switch (4 nodes per group).
json base() {
  return json::parse(R"({
    "name": "tiny",
    "description": "valid starting point of the error tests",
    "sources": ["made up"],
    "node": {
      "device": {"kind": "test GPU", "count": 4, "peak_tflops": {"bf16": 100, "fp32": 20},
                 "empirical_tflops": {"bf16": 80}, "memory_GB": 16, "memory_GBps": 1000},
      "host": {"kind": "test CPU", "sockets": 1, "cores": 8, "memory_GB": 64, "memory_GBps": 100},
      "routers": ["cpu0"],
      "links": [
        {"between": ["gpu0", "gpu1"], "GBps": 100, "latency_us": 0.5, "note": "ring"},
        {"between": ["gpu1", "gpu2"], "GBps": 100, "latency_us": 0.5},
        {"between": ["gpu2", "gpu3"], "GBps": 100, "latency_us": 0.5},
        {"between": ["gpu3", "gpu0"], "GBps": 100, "latency_us": 0.5},
        {"between": ["cpu0", "gpu0"], "GBps": 32, "latency_us": 1},
        {"between": ["nic0", "gpu1"], "GBps": 32, "latency_us": 1},
        {"between": ["nic1", "gpu3"], "GBps": 32, "latency_us": 1}
      ],
      "nics": [
        {"name": "nic0", "GBps": 25, "serves": [0, 1], "source": "made up"},
        {"name": "nic1", "GBps": 25, "serves": [2, 3]}
      ]
    },
    "network": {
      "topology": "dragonfly", "nodes": 16, "link_latency_us": 0.05, "switch_latency_us": 0.3,
      "dragonfly": {"groups": 4, "switches_per_group": 4, "nics_per_switch": 2, "global_links_per_pair": 2,
                    "local_GBps": 25, "global_GBps": 25},
      "note": "test"
    },
    "profile": {"library": "nccl", "launch_overhead_us": 5, "gemm": {"bf16": {"tile_overhead_k": 64, "operand_reuse": 8, "fixed_us": 2}}}
  })");
}

// The same node on a two-level fat tree: 32 NIC ports in 8 leaves of 4.
json fat_tree_base() {
  json d = base();
  d["network"] = json::parse(R"({
    "topology": "fat_tree", "nodes": 16, "link_latency_us": 0.05, "switch_latency_us": 0.1,
    "fat_tree": {"down": [4, 8], "up": [1, 4], "link_GBps": 25}
  })");
  return d;
}

// A single node without a network.
json single_node_base() {
  json d = base();
  d["node"].erase("nics");
  d["node"]["links"].erase(6);
  d["node"]["links"].erase(5);
  d["network"] = {{"topology", "none"}, {"nodes", 1}};
  return d;
}

// Parses `doc` (or JSON text) and checks that it fails with a MachineError at `path` whose message
// contains `needle`, and that what() joins the two.
::testing::AssertionResult rejects(const json& doc, const std::string& path, const std::string& needle) {
  return test::rejects_with<MachineError>([&] { parse_machine(doc, ""); }, "MachineError", "machine", path, needle);
}

::testing::AssertionResult rejects_text(const std::string& text, const std::string& source, const std::string& path,
                                        const std::string& needle) {
  return test::rejects_with<MachineError>([&] { parse_machine_text(text, source); }, "MachineError", "machine", path,
                                          needle);
}

::testing::AssertionResult rejects_file(const std::string& file, const std::string& path, const std::string& needle) {
  return test::rejects_with<MachineError>([&] { (void)load_machine_file(file); }, "MachineError", "machine", path,
                                          needle);
}

constexpr const char* kUnknown = "unknown key (see topology/README.md";

// -------------------------------------------------------------------------------------------------
// The bases are valid, so every failure below comes from the one thing each test breaks.

TEST(MachineErrors, BasesAreValid) {
  for (const json& d : {base(), fat_tree_base(), single_node_base()}) {
    Machine m;
    ASSERT_NO_THROW(m = parse_machine(d, "")) << d.dump();
    EXPECT_NO_THROW(Topology{m}) << d.dump();
  }
  const Machine m = parse_machine(base(), "");
  EXPECT_EQ(m.total_devices(), 64);
  EXPECT_EQ(m.nodes_per_group(), 4);
  EXPECT_EQ(m.nic_of(3), 1);
  EXPECT_DOUBLE_EQ(m.node.links[0].bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(m.node.links[0].latency, 0.5e-6);
  EXPECT_DOUBLE_EQ(m.node.device.peak_flops.at("bf16"), 100e12);
  EXPECT_DOUBLE_EQ(m.profile.gemm.at("bf16").max_efficiency, 0.8);  // empirical / peak
  EXPECT_DOUBLE_EQ(m.profile.gemm.at("bf16").tile_overhead_k, 64);
  EXPECT_DOUBLE_EQ(m.profile.gemm.at("bf16").operand_reuse, 8);
  EXPECT_DOUBLE_EQ(m.profile.gemm.at("bf16").fixed_seconds, 2e-6);
  EXPECT_EQ(m.node.device.compute_units, 1);  // not given: no waves
  EXPECT_TRUE(m.node.device.gemm_tiles.empty());
}

// -------------------------------------------------------------------------------------------------
// Syntax and shape

TEST(MachineErrors, NotJson) {
  EXPECT_TRUE(rejects_text("{\"name\": \"x\", \"node\": ", "m.json", "m.json", "is not valid JSON"));
  EXPECT_TRUE(rejects_text("", "m.json", "m.json", "is not valid JSON"));
}

TEST(MachineErrors, TopLevelNotAnObject) {
  EXPECT_TRUE(rejects(json::array({base()}), "(top level)", "expected a JSON object, found array"));
  EXPECT_TRUE(rejects_text("7", "", "(top level)", "expected a JSON object, found number"));
}

// -------------------------------------------------------------------------------------------------
// Required keys

TEST(MachineErrors, MissingName) {
  json d = base();
  d.erase("name");
  EXPECT_TRUE(rejects(d, "name", "is required but missing"));
  d["name"] = "";
  EXPECT_TRUE(rejects(d, "name", "must not be empty"));
}

TEST(MachineErrors, MissingDeviceCount) {
  json d = base();
  d["node"]["device"].erase("count");
  EXPECT_TRUE(rejects(d, "node.device.count", "is required but missing"));
}

TEST(MachineErrors, MissingDeviceKind) {
  json d = base();
  d["node"]["device"].erase("kind");
  EXPECT_TRUE(rejects(d, "node.device.kind", "is required but missing"));
}

TEST(MachineErrors, MissingPeak) {
  json d = base();
  d["node"]["device"].erase("peak_tflops");
  d["node"]["device"].erase("empirical_tflops");
  d.erase("profile");
  EXPECT_TRUE(rejects(d, "node.device.peak_tflops.bf16", "give at least one dtype's peak"));
  d = base();
  d["node"]["device"]["peak_tflops"] = json::object();
  EXPECT_TRUE(rejects(d, "node.device.peak_tflops.bf16", "give at least one dtype's peak"));
}

TEST(MachineErrors, MissingMemory) {
  json d = base();
  d["node"]["device"].erase("memory_GB");
  EXPECT_TRUE(rejects(d, "node.device.memory_GB", "is required but missing"));
  d = base();
  d["node"]["device"].erase("memory_GBps");
  EXPECT_TRUE(rejects(d, "node.device.memory_GBps", "is required but missing"));
}

TEST(MachineErrors, MissingNetworkNodes) {
  json d = base();
  d["network"].erase("nodes");
  EXPECT_TRUE(rejects(d, "network.nodes", "is required but missing"));
  d = base();
  d.erase("network");
  EXPECT_TRUE(rejects(d, "network.topology", "is required but missing"));
}

TEST(MachineErrors, MisspeltRequiredKeyIsNamed) {
  json d = base();
  d["node"]["device"].erase("count");
  d["node"]["device"]["cuont"] = 4;
  EXPECT_TRUE(rejects(d, "node.device.count", "found \"cuont\": misspelt?"));
}

TEST(MachineErrors, MissingLinkBandwidth) {
  json d = base();
  d["node"]["links"][2].erase("GBps");
  EXPECT_TRUE(rejects(d, "node.links[2].GBps", "is required but missing"));
}

TEST(MachineErrors, MissingDragonflyParameter) {
  json d = base();
  d["network"]["dragonfly"].erase("switches_per_group");
  EXPECT_TRUE(rejects(d, "network.dragonfly.switches_per_group", "is required but missing"));
  d = base();
  d["network"].erase("dragonfly");
  EXPECT_TRUE(rejects(d, "network.dragonfly.groups", "is required but missing"));
}

TEST(MachineErrors, DragonflyRouting) {
  json d = base();
  d["network"]["dragonfly"]["routing"] = "valiant";
  EXPECT_TRUE(rejects(d, "network.dragonfly.routing", "is not one of \"minimal\", \"adaptive\""));
  d = base();
  d["network"]["dragonfly"]["adaptive_share"] = 0.5;
  EXPECT_TRUE(rejects(d, "network.dragonfly.adaptive_share", "applies only to \"routing\": \"adaptive\""));
  d["network"]["dragonfly"]["routing"] = "adaptive";
  d["network"]["dragonfly"]["adaptive_share"] = 1.5;
  EXPECT_TRUE(rejects(d, "network.dragonfly.adaptive_share", "out of range"));
}

// -------------------------------------------------------------------------------------------------
// Wrong types and values out of range

TEST(MachineErrors, WrongTypes) {
  json d = base();
  d["node"]["device"]["count"] = "four";
  EXPECT_TRUE(rejects(d, "node.device.count", "expected an integer, found string"));
  d = base();
  d["network"]["nodes"] = 2.5;
  EXPECT_TRUE(rejects(d, "network.nodes", "expected an integer, found 2.5"));
  d = base();
  d["node"]["links"] = json::object();
  EXPECT_TRUE(rejects(d, "node.links", "expected an array of objects, found object"));
  d = base();
  d["node"]["links"][0]["GBps"] = "fast";
  EXPECT_TRUE(rejects(d, "node.links[0].GBps", "expected a number, found string"));
  d = base();
  d["node"]["nics"][0]["serves"] = 0;
  EXPECT_TRUE(rejects(d, "node.nics[0].serves", "expected an array of integers, found number"));
  d = base();
  d["node"]["routers"] = "cpu0";
  EXPECT_TRUE(rejects(d, "node.routers", "expected an array of strings, found string"));
  d = base();
  d["node"]["device"] = json::array();
  EXPECT_TRUE(rejects(d, "node.device", "expected a JSON object, found array"));
  d = base();
  d["network"].erase("dragonfly");
  d["network"]["fat_tree"] = 3;
  d["network"]["topology"] = "fat_tree";
  EXPECT_TRUE(rejects(d, "network.fat_tree", "expected a JSON object, found number"));
}

TEST(MachineErrors, ValuesOutOfRange) {
  json d = base();
  d["node"]["device"]["count"] = 0;
  EXPECT_TRUE(rejects(d, "node.device.count", "= 0 is out of range"));
  d = base();
  d["node"]["links"][1]["GBps"] = -1;
  EXPECT_TRUE(rejects(d, "node.links[1].GBps", "= -1 is out of range"));
  d = base();
  d["node"]["nics"][1]["GBps"] = 0;
  EXPECT_TRUE(rejects(d, "node.nics[1].GBps", "= 0 is out of range"));
  d = base();
  d["network"]["nodes"] = 0;
  EXPECT_TRUE(rejects(d, "network.nodes", "= 0 is out of range"));
  d = base();
  d["network"]["link_latency_us"] = -0.1;
  EXPECT_TRUE(rejects(d, "network.link_latency_us", "is out of range"));
  d = base();
  d["profile"]["gemm"]["bf16"]["max_efficiency"] = 1.5;
  EXPECT_TRUE(rejects(d, "profile.gemm.bf16.max_efficiency", "= 1.5 is out of range"));
  d = base();
  d["profile"]["gemm"]["bf16"]["half_gflop"] = 20;  // the size curve the shape model replaced
  EXPECT_TRUE(rejects(d, "profile.gemm.bf16.half_gflop", "replaced by the GEMM shape model"));
  d = base();
  d["profile"]["compute_while_communicating"] = {{"slowdown", 1.2}};  // the compute would stop
  EXPECT_TRUE(rejects(d, "profile.compute_while_communicating.slowdown", "= 1.2 is out of range"));
  d = base();
  d["profile"]["compute_while_communicating"] = json::object();
  EXPECT_TRUE(rejects(d, "profile.compute_while_communicating.slowdown", "missing"));
  d = base();
  d["node"]["device"]["compute_units"] = 0;
  EXPECT_TRUE(rejects(d, "node.device.compute_units", "= 0 is out of range"));
  d = base();
  d["node"]["device"]["gemm_tiles"] = json::array();
  EXPECT_TRUE(rejects(d, "node.device.gemm_tiles", "is empty"));
  d = base();
  d["node"]["device"]["gemm_tiles"] = {{{"m", 128}}};
  EXPECT_TRUE(rejects(d, "node.device.gemm_tiles[0].n", "missing"));
  d = base();
  d["node"]["device"]["gemm_blocks"] = {{"k", 448}, {"n", 448}};  // blocks of a cache not given
  EXPECT_TRUE(rejects(d, "node.device.gemm_blocks", "needs gemm_cache_MB"));
  d = base();
  d["node"]["device"]["gemm_cache_MB"] = 1;
  d["node"]["device"]["gemm_blocks"] = {{"k", 0}, {"n", 448}};
  EXPECT_TRUE(rejects(d, "node.device.gemm_blocks.k", "= 0 is out of range"));
}

TEST(MachineErrors, UnknownTopologyKind) {
  json d = base();
  d["network"]["topology"] = "torus";
  EXPECT_TRUE(rejects(d, "network.topology", "= \"torus\" is not one of \"none\", \"dragonfly\", \"fat_tree\""));
}

// -------------------------------------------------------------------------------------------------
// Unknown keys, at every level of the document

TEST(MachineErrors, UnknownKeysAtEveryLevel) {
  struct Case {
    std::vector<std::string> where;  // JSON pointer steps to the object that gets the extra key
    std::string path;                // expected error path
  };
  const std::vector<Case> cases = {
      {{}, "colour"},
      {{"node"}, "node.colour"},
      {{"node", "device"}, "node.device.colour"},
      {{"node", "device", "peak_tflops"}, "node.device.peak_tflops.colour"},
      {{"node", "device", "empirical_tflops"}, "node.device.empirical_tflops.colour"},
      {{"node", "host"}, "node.host.colour"},
      {{"node", "links", "3"}, "node.links[3].colour"},
      {{"node", "nics", "1"}, "node.nics[1].colour"},
      {{"network"}, "network.colour"},
      {{"network", "dragonfly"}, "network.dragonfly.colour"},
      {{"profile"}, "profile.colour"},
      {{"profile", "gemm"}, "profile.gemm.colour"},
      {{"profile", "gemm", "bf16"}, "profile.gemm.bf16.colour"},
  };
  for (const auto& c : cases) {
    json d = base();
    std::string pointer;
    for (const auto& step : c.where) pointer += "/" + step;
    d[json::json_pointer(pointer)]["colour"] = "blue";
    EXPECT_TRUE(rejects(d, c.path, kUnknown)) << c.path;
  }
  json d = fat_tree_base();
  d["network"]["fat_tree"]["colour"] = "blue";
  EXPECT_TRUE(rejects(d, "network.fat_tree.colour", kUnknown));
  // A dtype the loader does not know is an unknown key, not silently ignored.
  d = base();
  d["node"]["device"]["peak_tflops"]["fp4"] = 400;
  EXPECT_TRUE(rejects(d, "node.device.peak_tflops.fp4", kUnknown));
}

// Found by fuzzing: a key or value holding a newline or a terminal escape made a rejection of several
// lines (and let a file write to the terminal); they are escaped as in JSON.
TEST(MachineErrors, ControlCharactersStayOnOneLine) {
  json d = base();
  d["node"]["links"][2]["lat\ncy_us"] = 0.5;
  EXPECT_TRUE(rejects(d, "node.links[2].lat\\ncy_us", kUnknown));
  d = base();
  d["node"]["links"][1]["between"] = {"gpu1", "gpu\x1b[31m9\t"};
  EXPECT_TRUE(rejects(d, "node.links[1].between[1]", "= \"gpu\\u001b[31m9\\t\" is not a device"));
  try {
    parse_machine(d, "m\r.json");
    ADD_FAILURE() << "accepted";
  } catch (const MachineError& e) {
    EXPECT_EQ(std::string(e.what()).find_first_of("\n\r\t\x1b"), std::string::npos) << e.what();
    EXPECT_EQ(e.path(), "m\\r.json: node.links[1].between[1]");
  }
}

// -------------------------------------------------------------------------------------------------
// The node graph

TEST(MachineErrors, UnknownEndpointInLink) {
  json d = base();
  d["node"]["links"][1]["between"] = {"gpu1", "gpu9"};
  EXPECT_TRUE(
      rejects(d, "node.links[1].between[1]", "= \"gpu9\" is not a device (gpu0..gpu3), a NIC or a declared router"));
  d = base();
  d["node"]["links"][4]["between"] = {"cpu1", "gpu0"};  // routers declare only cpu0
  EXPECT_TRUE(rejects(d, "node.links[4].between[0]", "is not a device"));
}

TEST(MachineErrors, LinkWithoutTwoEndpoints) {
  json d = base();
  d["node"]["links"][0]["between"] = {"gpu0", "gpu1", "gpu2"};
  EXPECT_TRUE(rejects(d, "node.links[0].between", "must name exactly two endpoints"));
  d["node"]["links"][0]["between"] = {"gpu0"};
  EXPECT_TRUE(rejects(d, "node.links[0].between", "must name exactly two endpoints"));
}

TEST(MachineErrors, SelfLink) {
  json d = base();
  d["node"]["links"][2]["between"] = {"gpu2", "gpu2"};
  EXPECT_TRUE(rejects(d, "node.links[2].between", "connects \"gpu2\" to itself"));
}

TEST(MachineErrors, DuplicateLink) {
  json d = base();
  d["node"]["links"].push_back({{"between", {"gpu1", "gpu0"}}, {"GBps", 50}});  // reversed, still the same pair
  EXPECT_TRUE(rejects(d, "node.links[7].between", "a second link between \"gpu1\" and \"gpu0\""));
}

TEST(MachineErrors, DuplicateOrEmptyEndpointNames) {
  json d = base();
  d["node"]["routers"] = {"cpu0", "cpu0"};
  EXPECT_TRUE(rejects(d, "node.routers[1]", "names an endpoint twice"));
  d["node"]["routers"] = {"gpu2"};
  EXPECT_TRUE(rejects(d, "node.routers[0]", "names an endpoint twice"));
  d["node"]["routers"] = {""};
  EXPECT_TRUE(rejects(d, "node.routers[0]", "is empty"));
  d = base();
  d["node"]["nics"][1]["name"] = "nic0";
  EXPECT_TRUE(rejects(d, "node.nics[1].name", "= \"nic0\" is empty or names an endpoint twice"));
  d = base();
  d["node"]["nics"][0]["name"] = "cpu0";
  EXPECT_TRUE(rejects(d, "node.nics[0].name", "names an endpoint twice"));
}

TEST(MachineErrors, DeviceNotConnected) {
  json d = base();
  // Cut gpu2 and gpu3 off gpu0 and gpu1 (the ring's links 1-2 and 3-0 go).
  d["node"]["links"].erase(3);
  d["node"]["links"].erase(1);
  EXPECT_TRUE(rejects(d, "node.links", "do not connect gpu2 to gpu0"));
  // A single-node machine with no links at all.
  d = single_node_base();
  d["node"].erase("links");
  EXPECT_TRUE(rejects(d, "node.links", "do not connect gpu1 to gpu0"));
}

TEST(MachineErrors, NicNotConnected) {
  json d = base();
  d["node"]["links"].erase(6);  // nic1 - gpu3
  EXPECT_TRUE(rejects(d, "node.nics[1]", "NIC \"nic1\" is not connected to the devices by any link"));
}

TEST(MachineErrors, DeviceServedByTwoNics) {
  json d = base();
  d["node"]["nics"][1]["serves"] = {1, 2, 3};
  EXPECT_TRUE(rejects(d, "node.nics[1].serves", "device 1 is already served by nic0"));
  d = base();
  d["node"]["nics"][1]["serves"] = {2, 3, 0};
  EXPECT_TRUE(rejects(d, "node.nics[1].serves", "device 0 is already served by nic0"));
}

TEST(MachineErrors, DeviceListedTwiceByOneNic) {
  json d = base();
  d["node"]["nics"][0]["serves"] = {0, 1, 0};
  EXPECT_TRUE(rejects(d, "node.nics[0].serves", "device 0 is already served by nic0"));
  d = base();
  d["node"]["nics"][1]["serves"] = {2, 3, 3};
  EXPECT_TRUE(rejects(d, "node.nics[1].serves", "device 3 is already served by nic1"));
}

TEST(MachineErrors, DeviceServedByNoNic) {
  json d = base();
  d["node"]["nics"][1]["serves"] = {2};
  EXPECT_TRUE(rejects(d, "node.nics", "no NIC serves device 3 (every device needs exactly one)"));
}

TEST(MachineErrors, NicServesOutOfRangeDevice) {
  json d = base();
  d["node"]["nics"][1]["serves"] = {2, 3, 4};
  EXPECT_TRUE(rejects(d, "node.nics[1].serves[2]", "= 4 is out of range [0, 3]"));
  d["node"]["nics"][1]["serves"] = {-1, 2, 3};
  EXPECT_TRUE(rejects(d, "node.nics[1].serves[0]", "= -1 is out of range [0, 3]"));
}

// -------------------------------------------------------------------------------------------------
// The network

TEST(MachineErrors, TopologyNoneWithSeveralNodes) {
  json d = single_node_base();
  d["network"]["nodes"] = 2;
  EXPECT_TRUE(rejects(d, "network.topology", "= \"none\" describes a single node, but network.nodes = 2"));
}

TEST(MachineErrors, NetworkWithoutNics) {
  json d = base();
  d["node"].erase("nics");
  d["node"]["links"].erase(6);
  d["node"]["links"].erase(5);
  EXPECT_TRUE(rejects(d, "network.topology", "a network needs NICs: node.nics is empty"));
  json f = fat_tree_base();
  f["node"]["nics"] = json::array();
  f["node"]["links"].erase(6);
  f["node"]["links"].erase(5);
  EXPECT_TRUE(rejects(f, "network.topology", "a network needs NICs"));
}

TEST(MachineErrors, DragonflyTooSmall) {
  json d = base();
  d["network"]["nodes"] = 17;  // 4 groups × (4 switches × 2 NICs per switch / 2 NICs per node) = 16
  EXPECT_TRUE(rejects(d, "network.nodes", "= 17 exceeds the dragonfly's 16 node slots"));
}

TEST(MachineErrors, SwitchesPerGroupNotAMultipleOfNicsPerNode) {
  json d = base();
  d["network"]["dragonfly"]["switches_per_group"] = 3;
  d["network"]["dragonfly"]["nics_per_switch"] = 4;  // 12 NIC ports = 6 nodes, but 3 switches for 2 NICs
  d["network"]["nodes"] = 8;
  EXPECT_TRUE(rejects(d, "network.dragonfly.switches_per_group", "= 3 is not a multiple of the 2 NICs per node"));
}

TEST(MachineErrors, DragonflyBlockUnderOtherTopology) {
  json d = fat_tree_base();
  d["network"]["dragonfly"] = base()["network"]["dragonfly"];
  EXPECT_TRUE(rejects(d, "network.dragonfly", "applies only to topology \"dragonfly\""));
  d = single_node_base();
  d["network"]["dragonfly"] = base()["network"]["dragonfly"];
  EXPECT_TRUE(rejects(d, "network.dragonfly", "applies only to topology \"dragonfly\""));
}

TEST(MachineErrors, FatTreeBlockUnderOtherTopology) {
  json d = base();
  d["network"]["fat_tree"] = fat_tree_base()["network"]["fat_tree"];
  EXPECT_TRUE(rejects(d, "network.fat_tree", "applies only to topology \"fat_tree\""));
}

TEST(MachineErrors, FatTreeUpDownLengthMismatch) {
  json d = fat_tree_base();
  d["network"]["fat_tree"]["up"] = {1, 4, 2};
  EXPECT_TRUE(rejects(d, "network.fat_tree.up", "must have one entry per level, as many as \"down\""));
  d["network"]["fat_tree"]["up"] = json::array();
  d["network"]["fat_tree"]["down"] = json::array();
  EXPECT_TRUE(rejects(d, "network.fat_tree.up", "at least one"));
  d = fat_tree_base();
  d["network"]["fat_tree"]["down"] = {4, 0};
  EXPECT_TRUE(rejects(d, "network.fat_tree.down[1]", "= 0 is out of range"));
}

TEST(MachineErrors, FatTreeTooSmall) {
  json d = fat_tree_base();
  d["network"]["fat_tree"]["down"] = {4, 7};  // 28 ports for 16 nodes × 2 NICs
  EXPECT_TRUE(rejects(d, "network.nodes", "= 16 nodes with 2 NICs each exceed the fat tree's 28 NIC ports"));
}

// -------------------------------------------------------------------------------------------------
// Rates and the profile

TEST(MachineErrors, EmpiricalExceedsPeak) {
  json d = base();
  d["node"]["device"]["empirical_tflops"]["bf16"] = 120;
  EXPECT_TRUE(rejects(d, "node.device.empirical_tflops.bf16", "exceeds peak_tflops.bf16"));
}

TEST(MachineErrors, EmpiricalDtypeWithoutPeak) {
  json d = base();
  d["node"]["device"]["empirical_tflops"]["fp16"] = 50;
  EXPECT_TRUE(rejects(d, "node.device.empirical_tflops.fp16", "has no peak_tflops.fp16 to compare with"));
}

TEST(MachineErrors, ProfileGemmDtypeWithoutPeak) {
  json d = base();
  d["profile"]["gemm"]["fp64"] = {{"max_efficiency", 0.9}};
  EXPECT_TRUE(rejects(d, "profile.gemm.fp64", "has no node.device.peak_tflops.fp64"));
}

TEST(MachineErrors, UnknownLibrary) {
  json d = base();
  d["profile"]["library"] = "gloo";
  EXPECT_TRUE(
      rejects(d, "profile.library", "= \"gloo\" is not one of \"nccl\", \"rccl\", \"cray-mpich\", \"mpi\", \"pccl\""));
  d["profile"].erase("library");
  EXPECT_TRUE(rejects(d, "profile.library", "is required but missing"));
}

TEST(MachineErrors, NcclTuningTablesNamed) {
  json d = base();
  d["profile"]["nccl"] = {{"tuning", "2.18"}, {"compute_capability", 80}, {"cpu", "amd"}};
  EXPECT_TRUE(rejects(d, "profile.nccl.tuning", "= \"2.18\" is not one of \"2.15\", \"2.22\""));
  d["profile"]["nccl"]["tuning"] = "2.15";
  d["profile"]["nccl"]["cpu"] = "sparc";
  EXPECT_TRUE(rejects(d, "profile.nccl.cpu", "is not one of"));
  d["profile"]["nccl"]["cpu"] = "amd";
  d["profile"]["nccl"].erase("compute_capability");
  EXPECT_TRUE(rejects(d, "profile.nccl.compute_capability", "is required but missing"));
}

// -------------------------------------------------------------------------------------------------
// Files, the catalog and slices

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("paratwin-machine-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".json"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  static inline int counter_ = 0;
};

TEST(MachineCatalog, FileNamePrefixesThePath) {
  json d = base();
  d["network"].erase("nodes");
  const TempFile bad(d.dump(2));
  EXPECT_TRUE(rejects_file(bad.path(), bad.path() + ": network.nodes", "is required but missing"));
  // resolve_machine takes the path as well, with the same error.
  try {
    resolve_machine(bad.path());
    FAIL() << "accepted";
  } catch (const MachineError& e) {
    EXPECT_EQ(e.path(), bad.path() + ": network.nodes");
  }
  // A syntax error names the file alone.
  const TempFile broken("{\"name\": ");
  EXPECT_TRUE(rejects_file(broken.path(), broken.path(), "is not valid JSON"));
  // A valid file loads by path and records where it came from.
  const TempFile good(base().dump());
  const Machine m = resolve_machine(good.path());
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.source_file, good.path());
}

// Found by fuzzing the sweep spec reader: a name the file system refuses (a component over 255 bytes)
// threw std::filesystem::filesystem_error instead of a MachineError.
TEST(MachineCatalog, OverlongName) {
  const std::string name = "machines/" + std::string(300, 'm') + ".json";
  EXPECT_TRUE(test::rejects_with<MachineError>([&] { resolve_machine(name); }, "MachineError", "machine", name,
                                               "is neither a built-in machine"));
}

TEST(MachineCatalog, MissingFile) {
  EXPECT_TRUE(rejects_file("/nonexistent/dir/machine.json", "/nonexistent/dir/machine.json", "cannot be opened"));
}

const std::vector<std::string> kBuiltins = {"alps",       "frontera", "frontier", "localhost",
                                            "perlmutter", "selene",   "summit"};

TEST(MachineCatalog, UnknownNameListsBuiltins) {
  try {
    resolve_machine("nosuch");
    FAIL() << "accepted";
  } catch (const MachineError& e) {
    EXPECT_EQ(e.path(), "nosuch");
    EXPECT_NE(e.message().find("is neither a built-in machine"), std::string::npos) << e.message();
    for (const auto& name : builtin_machine_names()) EXPECT_NE(e.message().find(name), std::string::npos) << name;
    for (const auto& name : kBuiltins) EXPECT_NE(e.message().find(name), std::string::npos) << name;
  }
}

TEST(MachineCatalog, BuiltinNamesAreTheMachineFiles) {
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(PARATWIN_MACHINES_DIR))
    if (f.path().extension() == ".json") files.push_back(f.path().stem().string());
  std::sort(files.begin(), files.end());
  std::vector<std::string> names = builtin_machine_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, files) << "rebuild (re-run cmake) after adding a machine file";
  for (const auto& name : kBuiltins)
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " is not built in";
}

TEST(MachineCatalog, SliceChecksNodes) {
  const Machine m = resolve_machine("frontier");
  for (int64_t bad : {int64_t{0}, int64_t{-3}, m.network.nodes + 1}) {
    EXPECT_TRUE(test::rejects_with<MachineError>([&] { (void)m.slice(bad); }, "MachineError", "slice", "--nodes",
                                                 "= " + std::to_string(bad) + " but frontier has 9408 nodes"))
        << "slice(" << bad << ")";
  }
  const Machine s = m.slice(m.network.nodes);
  EXPECT_EQ(s.network.nodes, 9408);
  const Machine two = m.slice(2);
  EXPECT_EQ(two.network.nodes, 2);
  EXPECT_EQ(two.total_devices(), 16);
  EXPECT_EQ(two.network.dragonfly.groups, 74);  // the slice keeps the network's shape
  EXPECT_EQ(Topology(two).devices(), 16);
}

// The fields in which two machines differ (what matters to routing, rates and reports).
std::vector<std::string> differences(const Machine& a, const Machine& b) {
  std::vector<std::string> out;
  auto field = [&](const char* name, bool same) {
    if (!same) out.emplace_back(name);
  };
  field("name", a.name == b.name);
  field("description", a.description == b.description);
  field("sources", a.sources == b.sources);
  field("node.device.count", a.node.device.count == b.node.device.count);
  field("node.device.peak_tflops", a.node.device.peak_flops == b.node.device.peak_flops);
  field("node.device.empirical_tflops", a.node.device.empirical_flops == b.node.device.empirical_flops);
  field("node.device.memory_GB", a.node.device.memory == b.node.device.memory);
  field("node.routers", a.node.routers == b.node.routers);
  bool links = a.node.links.size() == b.node.links.size();
  for (size_t i = 0; links && i < a.node.links.size(); ++i)
    links = a.node.links[i].a == b.node.links[i].a && a.node.links[i].b == b.node.links[i].b &&
            a.node.links[i].bandwidth == b.node.links[i].bandwidth &&
            a.node.links[i].latency == b.node.links[i].latency;
  field("node.links", links);
  bool nics = a.node.nics.size() == b.node.nics.size();
  for (size_t k = 0; nics && k < a.node.nics.size(); ++k)
    nics = a.node.nics[k].name == b.node.nics[k].name && a.node.nics[k].bandwidth == b.node.nics[k].bandwidth &&
           a.node.nics[k].serves == b.node.nics[k].serves;
  field("node.nics", nics);
  field("network.topology", a.network.kind == b.network.kind);
  field("network.nodes", a.network.nodes == b.network.nodes);
  field("network.link_latency_us", a.network.link_latency == b.network.link_latency);
  field("network.switch_latency_us", a.network.switch_latency == b.network.switch_latency);
  field("network.note", a.network.note == b.network.note);
  const auto &fa = a.network.fat_tree, &fb = b.network.fat_tree;
  field("network.fat_tree", fa.down == fb.down && fa.up == fb.up && fa.link_bandwidth == fb.link_bandwidth &&
                                fa.rail_optimized == fb.rail_optimized);
  const auto &da = a.network.dragonfly, &db = b.network.dragonfly;
  field("network.dragonfly",
        da.groups == db.groups && da.switches_per_group == db.switches_per_group &&
            da.nics_per_switch == db.nics_per_switch && da.global_links_per_pair == db.global_links_per_pair &&
            da.local_bandwidth == db.local_bandwidth && da.global_bandwidth == db.global_bandwidth);
  field("profile.library", a.profile.library == b.profile.library);
  field("profile.launch_overhead_us", a.profile.launch_overhead == b.profile.launch_overhead);
  bool gemm = a.profile.gemm.size() == b.profile.gemm.size();
  for (const auto& [dtype, g] : a.profile.gemm)
    gemm = gemm && b.profile.gemm.count(dtype) && b.profile.gemm.at(dtype).max_efficiency == g.max_efficiency &&
           b.profile.gemm.at(dtype).tile_overhead_k == g.tile_overhead_k &&
           b.profile.gemm.at(dtype).operand_reuse == g.operand_reuse &&
           b.profile.gemm.at(dtype).fixed_seconds == g.fixed_seconds;
  field("profile.gemm", gemm);
  return out;
}

// The catalog embeds topology/machines/*.json when CMake configures the build; what a built-in name
// gives must be what its file says.
TEST(MachineCatalog, BuiltinsMatchTheirFiles) {
  std::vector<std::string> stale;
  for (const auto& name : builtin_machine_names()) {
    const auto diff = differences(resolve_machine(name),
                                  load_machine_file(std::string(PARATWIN_MACHINES_DIR) + "/" + name + ".json"));
    if (!diff.empty()) stale.push_back(name + " (" + diff.front() + (diff.size() > 1 ? ", ..." : "") + ")");
  }
  // The machine files are configure dependencies, so a build always embeds their current text.
  EXPECT_TRUE(stale.empty()) << "built-in copies differ from their files: " << testing::PrintToString(stale);
}

// Every built-in machine loads and builds a Topology in which every device of a
// node reaches every other device and (on a network) the devices of the next node, at a finite,
// positive bandwidth.
TEST(MachineCatalog, EveryBuiltinLoadsAndBuilds) {
  for (const auto& name : builtin_machine_names()) {
    SCOPED_TRACE(name);
    Machine m;
    ASSERT_NO_THROW(m = resolve_machine(name));
    EXPECT_EQ(m.name, name);
    EXPECT_EQ(m.source_file, "topology/machines/" + name + ".json");
    const Machine file = load_machine_file(std::string(PARATWIN_MACHINES_DIR) + "/" + name + ".json");
    EXPECT_EQ(file.name, name) << "a machine file's name is its file name";
    EXPECT_GT(m.node.device.memory, 0);
    EXPECT_FALSE(m.node.device.peak_flops.empty());
    for (const auto& [dtype, g] : m.profile.gemm) {
      EXPECT_GT(g.max_efficiency, 0) << dtype;
      EXPECT_LE(g.max_efficiency, 1) << dtype;
    }
    std::unique_ptr<Topology> full;
    ASSERT_NO_THROW(full = std::make_unique<Topology>(m));  // the whole machine
    const Topology t(m.slice(std::min<int64_t>(2, m.network.nodes)));
    const int64_t per_node = m.devices_per_node();
    for (int64_t a = 0; a < t.devices(); ++a)
      for (int64_t b = 0; b < t.devices(); ++b) {
        if (a == b) continue;
        const PathInfo p = t.path(a, b);
        EXPECT_GT(p.links, 0) << a << " -> " << b;
        EXPECT_GT(p.bandwidth, 0) << a << " -> " << b;
        EXPECT_TRUE(std::isfinite(p.bandwidth)) << a << " -> " << b;
        EXPECT_GE(p.latency, 0);
        if (a / per_node != b / per_node) {
          EXPECT_GE(p.switches, 1) << a << " -> " << b;
        }
      }
    if (m.network.nodes > 1) {
      const PathInfo far = full->path(0, full->devices() - 1);
      EXPECT_GT(far.bandwidth, 0);
      EXPECT_TRUE(std::isfinite(far.bandwidth));
    }
  }
}

}  // namespace
}  // namespace paratwin::topology
