#pragma once
// Closed-form collective times for the analytical model: the algorithm's steps (as `plan` gives them
// in fast fidelity) with every transfer at the bandwidth one flow gets when every group of the same
// axes runs the collective at once — [singh2025dissertation] eq. 5.7 generalised: the flows of all those rings are
// routed through the real node graph, NICs and network, and a link crossed by k flows gives each 1/k.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/tuner.hpp"
#include "topology/topology.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

class CollectiveTimes {
 public:
  // placement_aware false: every transfer at one NIC's bandwidth, wherever the members sit (the
  // placement-agnostic baseline of [singh2025dissertation] §5.1.2).
  // `forced`: the algorithm per kind overriding the library's choice (what-if studies, and the test that
  // times every registered algorithm).
  CollectiveTimes(const topology::Topology& topology, std::string library, bool placement_aware,
                  std::map<workloads::OpKind, Algorithm> forced = {});

  // Seconds one collective of `kind` over `rank`'s group along `mask` takes; `bytes` as Op::bytes.
  double seconds(const workloads::Program& program, const workloads::PlacementMap& placement, int64_t rank,
                 workloads::OpKind kind, workloads::AxisMask mask, double bytes, int32_t root);
  // The bandwidth one ring flow of that group gets (bytes/s).
  double ring_bandwidth(const workloads::Program& program, const workloads::PlacementMap& placement, int64_t rank,
                        workloads::AxisMask mask);
  // Seconds a pipeline message of `bytes` between neighbouring stages takes.
  double message_seconds(const workloads::Program& program, const workloads::PlacementMap& placement, int64_t rank,
                         double bytes);
  const std::string& library() const { return library_; }

  // The group's axes, as sizes in placement order with the masked ones marked, adjacent runs merged:
  // groups with the same key sit on the machine the same way.
  static std::vector<int64_t> structure(const workloads::PlacementMap& placement, workloads::AxisMask mask);

 private:
  // Flows per resource when every group of the axes runs the same pattern at once.
  using Loads = std::unordered_map<uint32_t, uint32_t>;
  // The groups of one axis that sit on their nodes alike: members on the same device slots, with the
  // same steps between their nodes. Groups that do not line up with node boundaries (tensor groups of
  // 4 on Summit's 6-GPU nodes) come in several shapes, and the slowest one holds the iteration up.
  struct Shape {
    GroupLayout layout;
    std::vector<int64_t> devices;              // of the first such group's members, by index
    std::vector<std::vector<int64_t>> groups;  // every such group's devices, by index
    double latency = 0;                        // the slowest path between neighbouring members
    double ring_bandwidth = 0;                 // the slowest ring flow's share
  };
  struct Group {
    std::vector<Shape> shapes;
    Loads rings;  // every ring of every group (ring-based algorithms)
    Loads pairs;  // every pair of every group exchanging (all-to-all); filled when needed
    bool pairs_known = false;
    // Per step of the double binary tree (up, then down), the edges every group sends along in that
    // step, each in its own direction; filled when needed.
    std::vector<Loads> trees;
    bool trees_known = false;
    double ring_bandwidth = 0;  // the slowest ring flow's share over every shape (reported)
    // Bandwidth of a flow (from, to, tree step) under ring / pair / tree loads.
    std::map<std::tuple<int64_t, int64_t, size_t>, double> edges[3];
    // Algorithms timed step by step under their own flows (AnalyticalLoads::own_steps), per algorithm,
    // kind and root (all-gather and reduce-scatter run their steps in opposite orders; a chain's flows
    // start at its root): per step, every group's flows of that step, and the bandwidth of a flow
    // (from, to, step) under them.
    struct Stepped {
      std::vector<Loads> loads;
      std::map<std::tuple<int64_t, int64_t, size_t>, double> edges;
    };
    std::map<std::tuple<int, int, int32_t>, Stepped> stepped;
  };
  // `vendor`: the group as PCCL's vendor library lays it out, for the kinds it runs (library_running).
  Group& group(const workloads::Program& program, const workloads::PlacementMap& placement, int64_t rank,
               workloads::AxisMask mask, bool vendor = false);
  void load(Loads& loads, const std::vector<std::vector<int64_t>>& rings) const;
  void load_directed(Loads& loads, const std::vector<std::pair<int64_t, int64_t>>& edges) const;
  // The bandwidth one flow from device `from` to `to` gets: its route's slowest link, shared by the
  // flows the group's pattern puts on it.
  enum class Pattern { rings, pairs, trees };
  // The loads an algorithm's edges are timed under (ring and own-step flows share the rings' cache).
  static Pattern pattern_of(AnalyticalLoads loads);
  double edge_bandwidth(Group& g, int64_t from, int64_t to, Pattern pattern, size_t tree_step = 0);
  // The same under the flows of step `step` of every group's plan of `algorithm` for `kind` (filled when
  // first needed).
  double stepped_bandwidth(Group& g, Algorithm algorithm, workloads::OpKind kind, int32_t root, int64_t from,
                           int64_t to, size_t step);
  // Seconds one group of `shape` takes, the loads of every group in place.
  double shape_seconds(Group& g, const Shape& shape, workloads::OpKind kind, double bytes, int32_t root);

  const topology::Topology& topology_;
  std::string library_;
  bool placement_aware_;
  StepCosts step_costs_;
  Tuner tuner_;
  double flat_bandwidth_ = 0;  // one NIC
  std::map<std::vector<int64_t>, Group> groups_;
  std::map<std::tuple<std::vector<int64_t>, int, double, int32_t>, double> seconds_;
};

}  // namespace paratwin::sim
