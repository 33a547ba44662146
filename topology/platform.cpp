#include "topology/platform.hpp"

#include <signal.h>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <stdexcept>
#include <string>

namespace paratwin::topology {

namespace {

namespace kr = simgrid::kernel::routing;
namespace sg4 = simgrid::s4u;

// Hosts are added in device order, so a host's netpoint id is its device index.
// Hosts are added in order: devices, then actor hosts (if any), then sinks; a netpoint's id is its
// position in that order.
class MachineZone final : public kr::NetZoneImpl {
 public:
  MachineZone(const std::string& name, const Topology& topology, const PlatformOptions& options,
              std::shared_ptr<PhaseRoutes> phase_routes)
      : NetZoneImpl(name),
        topology_(topology),
        zero_latency_(options.zero_latency),
        devices_(topology.devices()),
        sinks_from_(devices_ * (options.actor_hosts ? 2 : 1)),
        phase_routes_(std::move(phase_routes)) {}

  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;

  void get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst, kr::Route* into, double* latency) override {
    const auto from = static_cast<int64_t>(src->id()), to = static_cast<int64_t>(dst->id());
    if (from < devices_ && to >= sinks_from_) {
      for (uint32_t id : phase_routes_->get(from, static_cast<int>(to - sinks_from_)))
        into->link_list_.push_back(links[id]);
      return;
    }
    if (from >= devices_ || to >= devices_) {  // actor hosts: synchronisation only
      if (latency) *latency += kSyncLatency;
      return;
    }
    thread_local Route route;
    topology_.route(from, to, route);
    for (uint32_t id : route.resources) into->link_list_.push_back(links[id]);
    if (latency && !zero_latency_) *latency += route.latency;
  }

 private:
  const Topology& topology_;
  bool zero_latency_;
  int64_t devices_, sinks_from_;
  std::shared_ptr<PhaseRoutes> phase_routes_;
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
  engine.set_config("contexts/guard-size:0");
  engine.set_config("contexts/stack-size:" + std::to_string(kActorStackKiB));
}

void PhaseRoutes::set(int64_t device, int sink, const std::vector<uint32_t>& resources) {
  routes_[(static_cast<uint64_t>(device) << 16) | static_cast<uint64_t>(sink)] = &resources;
}

const std::vector<uint32_t>& PhaseRoutes::get(int64_t device, int sink) const {
  const auto it = routes_.find((static_cast<uint64_t>(device) << 16) | static_cast<uint64_t>(sink));
  if (it == routes_.end())
    throw std::logic_error("no phase route from device " + std::to_string(device) + " to sink " + std::to_string(sink));
  return *it->second;
}

std::unique_ptr<sg4::Engine> start_engine() {
  int argc = 2;
  char arg0[] = "paratwin";
  char arg1[] = "--log=root.thresh:warning";
  char* argv[] = {arg0, arg1, nullptr};
  // SimGrid 3.32's engine replaces the process's SIGINT disposition with its own handler, which logs
  // "CTRL-C pressed" and calls exit(1) (src/kernel/EngineImpl.cpp, EngineImpl::initialize): an
  // interrupted simulation would end as an internal error, past paratwin's own cleanup of temporary
  // outputs. Keep whatever the process had: the default (end by the signal, status 128 + 2 in a shell),
  // a handler of paratwin's, or SIG_IGN where the caller ignores it.
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  ::sigaction(SIGINT, &before, nullptr);
  configure_engine(*engine);
  return engine;
}

Platform build_platform(const Topology& topology, const PlatformOptions& options) {
  const Machine& m = topology.machine();
  Platform p;
  p.phase_routes = std::make_shared<PhaseRoutes>();
  auto* zone = new MachineZone(m.name, topology, options, p.phase_routes);
  zone->set_parent(nullptr);
  sg4::NetZone* iface = zone->get_iface();
  const double speed = host_speed(m.node.device);
  p.hosts.reserve(static_cast<size_t>(topology.devices()));
  for (int64_t d = 0; d < topology.devices(); ++d) {
    auto* host = iface->create_host(
        "n" + std::to_string(d / m.devices_per_node()) + ".gpu" + std::to_string(d % m.devices_per_node()), speed);
    host->seal();
    p.hosts.push_back(host);
  }
  if (options.actor_hosts)
    for (int64_t d = 0; d < topology.devices(); ++d) {
      auto* host = iface->create_host("a" + std::to_string(d), speed);
      host->seal();
      p.actor_hosts.push_back(host);
    }
  for (int k = 0; k < options.sinks; ++k) {
    auto* host = iface->create_host("sink" + std::to_string(k), 1.0);
    host->seal();
    p.sinks.push_back(host);
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
