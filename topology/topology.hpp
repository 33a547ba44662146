#pragma once
// Routing through a machine without SimGrid: every direction of every link (intra-node links, NIC
// injection links, switch-to-switch links) is one resource with an id; a route between two devices
// is a list of resource ids. The SimGrid platform and the analytical queries share these routes.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "topology/machine.hpp"

namespace paratwin::topology {

struct Resource {
  double bandwidth = 0;  // bytes/s in this direction
  double latency = 0;    // seconds
};

enum class ResourceKind { node_link, injection, network };

struct Route {
  std::vector<uint32_t> resources;
  double latency = 0;   // links and switches
  int switches = 0;     // switches traversed
  int global_hops = 0;  // dragonfly links between groups
};

struct PathInfo {
  double bandwidth = 0;  // bottleneck of the route
  double latency = 0;
  int links = 0;
  int switches = 0;
  int global_hops = 0;
};

// How a set of rings that run at once (every group of one axis, as in [singh2025dissertation] eq. 5.7) load the
// machine: each ring step is one flow; a resource crossed by k flows gives each 1/k of its bandwidth.
struct RingLoad {
  double bandwidth = 0;       // the slowest ring's bottleneck bandwidth per flow
  int max_flows_per_nic = 0;  // most ring flows through one NIC direction
  bool crosses_nodes = false;
};

struct TopologyOptions {
  // Every inter-node flow of a node leaves and enters through its first NIC, as Cray MPICH drives the
  // NICs ([singh2025dissertation] §6.1.2), instead of the NIC serving each device.
  bool one_nic_per_node = false;
  // An inter-node transfer leaves its node through the NIC of the receiver's device index (the receiver's
  // rail), reached over the node's own links, instead of through the NIC serving the sender: NCCL's ring
  // graphs first search NET n -> GPU a -> ... -> GPU x -> NET n with the same NIC in and out (crossNic 0
  // tried before 1, NCCL_CROSS_NIC default 2), and its point-to-point transfers go out through the NIC
  // local to the peer's device, over NVLink to the GPU beside it (PXN, NCCL_P2P_PXN_LEVEL default 2;
  // NCCL 2.30 src/graph/search.cc ncclTopoCompute, ncclTopoGetNetDev). Only on a rail-optimized fat tree,
  // where the NIC decides whether a transfer stays under its rail's leaf switches; on the other networks
  // the machines' node models lack NCCL's path to another GPU's NIC (Perlmutter's NIC k is modelled as
  // hanging off GPU k, where the real one sits behind the CPU), so the sender's own NIC stands there.
  bool rail_matched_nics = false;
};

class Topology {
 public:
  explicit Topology(Machine machine, TopologyOptions options = {});

  const Machine& machine() const { return machine_; }
  const TopologyOptions& options() const { return options_; }
  int64_t devices() const { return machine_.total_devices(); }
  size_t resources() const { return resources_.size(); }
  const Resource& resource(uint32_t id) const { return resources_[id]; }
  ResourceKind kind(uint32_t id) const;
  std::string resource_name(uint32_t id) const;
  // The node a resource belongs to: its node links, its NICs' injection links and, in a fat tree, the
  // links from its NICs' ports to their leaf switches; -1 for a network resource nodes share.
  int64_t node_of(uint32_t id) const;
  // The same resource on another node (a resource nodes share is returned as is).
  uint32_t on_node(uint32_t id, int64_t node) const;

  void route(int64_t from, int64_t to, Route& out) const;
  Route route(int64_t from, int64_t to) const;
  PathInfo path(int64_t from, int64_t to) const;
  // Each ring lists devices in ring order; the last one sends to the first.
  RingLoad rings(const std::vector<std::vector<int64_t>>& rings) const;

  // Dragonfly: the switch (global index) that node's NIC k attaches to.
  int64_t switch_of(int64_t node, int nic) const;

 private:
  struct NodeRoute {
    std::vector<std::pair<int, bool>> links;  // (node link, direction a->b)
    double latency = 0;
  };
  void build_node_routes();
  void build_network();
  // The share of a dragonfly group's global bandwidth left to the job's own flows under adaptive
  // routing, for the groups the job's nodes span.
  double global_share() const;
  void node_path(int64_t node, int from, int to, Route& out) const;
  void network_path(int64_t node_a, int nic_a, int64_t node_b, int nic_b, Route& out) const;
  void dragonfly_path(int64_t node_a, int nic_a, int64_t node_b, int nic_b, Route& out) const;
  void fat_tree_path(int64_t port_a, int64_t port_b, Route& out) const;
  uint32_t node_link(int64_t node, int link, bool forward) const;
  uint32_t injection(int64_t node, int nic, bool up) const;
  // Fat tree: end ports (one per NIC) and the level-0 links between them and the leaf switches.
  bool is_port_link(uint32_t id) const;
  int64_t port_of(uint32_t id) const;
  std::pair<int64_t, int> port_node(int64_t port) const;  // (node, NIC)
  int64_t port_at(int64_t node, int nic) const;

  Machine machine_;
  TopologyOptions options_;
  std::vector<std::string> endpoint_names_;          // devices first, then NICs, then routers
  std::vector<std::vector<NodeRoute>> node_routes_;  // [from][to], devices and NICs
  std::vector<Resource> resources_;
  uint32_t injection_base_ = 0, network_base_ = 0;
  // Dragonfly bookkeeping.
  int64_t S_ = 0, G_ = 0, L_ = 0;
  uint32_t local_base_ = 0, global_base_ = 0;
  // Adaptive routing: each group's global egress and ingress, then each switch's local ones.
  uint32_t group_base_ = 0, switch_base_ = 0;
  // Fat tree: per level, the number of elements and the first resource of its up links.
  std::vector<int64_t> ft_elements_;
  std::vector<uint32_t> ft_up_base_;
};

}  // namespace paratwin::topology
