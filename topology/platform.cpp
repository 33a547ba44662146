#include "topology/platform.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

namespace paratwin::topology {

namespace {

namespace kr = simgrid::kernel::routing;
namespace sg4 = simgrid::s4u;

// Hosts are added in device order, so a host's netpoint id is its device index.
class MachineZone final : public kr::NetZoneImpl {
 public:
  MachineZone(const std::string& name, const Topology& topology, bool zero_latency)
      : NetZoneImpl(name), topology_(topology), zero_latency_(zero_latency) {}

  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;

  void get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst, kr::Route* into, double* latency) override {
    thread_local Route route;
    topology_.route(static_cast<int64_t>(src->id()), static_cast<int64_t>(dst->id()), route);
    for (uint32_t id : route.resources) into->link_list_.push_back(links[id]);
    if (latency && !zero_latency_) *latency += route.latency;
  }

 private:
  const Topology& topology_;
  bool zero_latency_;
};

double host_speed(const DeviceSpec& d) {
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32", "fp64"})
    if (d.peak_flops.count(dtype)) return d.peak_flops.at(dtype);
  return 1e12;
}

}  // namespace

void configure_engine(sg4::Engine& engine) {
  engine.set_config("network/model:CM02");
  engine.set_config("network/TCP-gamma:0");
  engine.set_config("network/crosstraffic:0");
}

std::unique_ptr<sg4::Engine> start_engine() {
  int argc = 2;
  char arg0[] = "paratwin";
  char arg1[] = "--log=root.thresh:warning";
  char* argv[] = {arg0, arg1, nullptr};
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  configure_engine(*engine);
  return engine;
}

Platform build_platform(const Topology& topology, bool zero_latency) {
  const Machine& m = topology.machine();
  auto* zone = new MachineZone(m.name, topology, zero_latency);
  zone->set_parent(nullptr);
  sg4::NetZone* iface = zone->get_iface();
  Platform p;
  const double speed = host_speed(m.node.device);
  p.hosts.reserve(static_cast<size_t>(topology.devices()));
  for (int64_t d = 0; d < topology.devices(); ++d) {
    auto* host = iface->create_host(
        "n" + std::to_string(d / m.devices_per_node()) + ".gpu" + std::to_string(d % m.devices_per_node()), speed);
    host->seal();
    p.hosts.push_back(host);
  }
  zone->links.reserve(topology.resources());
  for (uint32_t id = 0; id < topology.resources(); ++id) {
    const Resource& r = topology.resource(id);
    sg4::Link* link = iface->create_link("r" + std::to_string(id), r.bandwidth);
    link->set_latency(r.latency);
    link->seal();
    zone->links.push_back(link->get_impl());
  }
  iface->seal();
  return p;
}

}  // namespace paratwin::topology
