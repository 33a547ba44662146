// What a library adds to an algorithm's steps: the profile's step costs, CPU reductions, and NCCL's
// tuning model (the protocol of each ring and tree, its latency and bytes on the wire).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/collectives.hpp"
#include "sim/library.hpp"

namespace paratwin::sim {

using workloads::OpKind;

StepCosts StepCosts::of(const topology::Machine& machine, const std::string& library) {
  StepCosts c;
  c.collective_step = machine.profile.collective_step;
  c.overlapped_step_extra = machine.profile.overlapped_step_extra;
  for (const auto& [name, cost] : machine.profile.collective_costs)
    if (const auto kind = workloads::parse_op_kind(name); kind && workloads::is_collective(*kind))
      c.by_kind[static_cast<int>(*kind)] = cost;
  const LibrarySpec& spec = library_spec(library);
  c.host_reductions = spec.host_reductions;
  const double host = machine.node.host.memory_bandwidth, hbm = machine.node.device.hbm_bandwidth;
  c.host_memory_bandwidth = host > 0 ? host : 100e9;
  c.device_memory_bandwidth = hbm > 0 ? hbm : 1e12;
  // A library that leaves some kinds to the vendor library (PCCL: the all-reduce, broadcast and reduce)
  // runs those as the vendor does, with NCCL's tables where NCCL is the vendor (library_running); its own
  // plans take no NCCL protocol.
  const bool tables =
      spec.nccl_tables || (!spec.implements_every_kind() && library_spec(vendor_library(machine)).nccl_tables);
  if (tables && machine.profile.nccl) c.nccl = nccl_hardware(machine);
  return c;
}

NcclHardware nccl_hardware(const topology::Machine& machine) {
  const auto& spec = *machine.profile.nccl;
  NcclHardware hw;
  hw.version = spec.tuning;
  hw.compute_capability = spec.compute_capability;
  hw.cpu = spec.cpu;
  hw.ll128 = spec.ll128;
  // NCCL's rings inside a node run over every NVLink of a device at once (one channel per link
  // pair), at the rate its topology model gives a link: gpu0's links to devices and switches.
  double device_links = 0;
  bool pcie_only = true;
  const auto is_router = [&](const std::string& e) {
    return std::find(machine.node.routers.begin(), machine.node.routers.end(), e) != machine.node.routers.end();
  };
  for (const auto& l : machine.node.links) {
    if (l.a != "gpu0" && l.b != "gpu0") continue;
    const std::string& other = l.a == "gpu0" ? l.b : l.a;
    const bool device = other.rfind("gpu", 0) == 0;
    const bool fabric = is_router(other) && other.rfind("cpu", 0) != 0;  // NVSwitch, not a CPU socket
    if (device || fabric) {
      device_links += l.bandwidth;
      pcie_only = false;
    }
  }
  hw.nvlink = !pcie_only;
  hw.intra_bus_GBps = device_links * machine.profile.device_link_efficiency / 1e9;
  if (pcie_only)  // PCIe through the host: one link's rate
    for (const auto& l : machine.node.links)
      if (l.a == "gpu0" || l.b == "gpu0") hw.intra_bus_GBps = std::max(hw.intra_bus_GBps, l.bandwidth / 1e9);
  for (const auto& nic : machine.node.nics) hw.inter_bus_GBps += nic.bandwidth / 1e9;
  hw.devices_per_node = static_cast<int>(machine.devices_per_node());
  return hw;
}

std::optional<NcclChoice> StepCosts::nccl_choice_for(OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                                     double bytes) const {
  if (!nccl || layout.size() <= 1) return std::nullopt;
  const AlgorithmSpec& a = spec(algorithm);
  const auto priced = a.nccl && a.supports(kind) ? a.nccl(kind) : std::nullopt;
  if (!priced) return std::nullopt;
  const bool pat = *priced == NcclAlgorithm::pat;
  // Nodes are numbered in order of first appearance.
  const int nodes = *std::max_element(layout.node.begin(), layout.node.end()) + 1;
  // PAT forced where NCCL would not run it (--algorithm): the profile's step costs price its steps.
  if (pat && !nccl_pat_enabled(*nccl, kind, layout.size(), nodes)) return std::nullopt;
  return nccl_choice(*nccl, kind, *priced, layout.size(), nodes, bytes);
}

namespace {

// A member's steps as the protocol runs them: its latency spread over the steps that move data (the
// steps a fast phase stands for included), its bytes on the wire.
void apply(std::vector<Step>& steps, const NcclChoice& c) {
  double count = 0;
  for (const Step& s : steps)
    if (!s.sends.empty() || !s.recvs.empty()) count += 1 + s.extra_latencies;
  if (count <= 0) return;
  const double wire = 1 / c.bandwidth_share;
  for (Step& s : steps) {
    s.library_step = c.latency / count;
    for (auto* list : {&s.sends, &s.recvs})
      for (Transfer& t : *list) t.bytes *= wire;
  }
}

}  // namespace

std::vector<Step> StepCosts::plan(OpKind kind, Algorithm algorithm, const GroupLayout& layout, int32_t me, double bytes,
                                  int32_t root, Fidelity fidelity) const {
  auto steps = sim::plan(kind, algorithm, layout, me, bytes, root, fidelity);
  if (const auto c = nccl_choice_for(kind, algorithm, layout, bytes)) apply(steps, *c);
  return steps;
}

std::vector<std::vector<Step>> StepCosts::plan_group(OpKind kind, Algorithm algorithm, const GroupLayout& layout,
                                                     double bytes, int32_t root, Fidelity fidelity) const {
  auto plans = sim::plan_group(kind, algorithm, layout, bytes, root, fidelity);
  if (const auto c = nccl_choice_for(kind, algorithm, layout, bytes))
    for (auto& steps : plans) apply(steps, *c);
  return plans;
}

double StepCosts::after_transfers(const Step& step, double path_latency, workloads::OpKind kind, bool computing) const {
  double per_step = step.library_step >= 0 ? step.library_step : collective_step, moved = 0,
         extra = overlapped_step_extra;
  // NCCL's per-hop latency includes the hop's own.
  if (step.library_step >= 0) path_latency = 0;
  if (const auto it = by_kind.find(static_cast<int>(kind)); it != by_kind.end()) {
    per_step = it->second.step;
    if (it->second.overlapped_extra >= 0) extra = it->second.overlapped_extra;
    double sent = 0, received = 0;
    for (const auto& t : step.sends) sent += t.bytes;
    for (const auto& t : step.recvs) received += t.bytes;
    moved = std::max(sent, received) * it->second.per_byte;
  }
  if (computing) per_step += extra;
  double seconds = moved + step.extra_latencies * path_latency + per_step * (1 + step.extra_latencies) +
                   step.local_bytes / device_memory_bandwidth;
  if (host_reductions) seconds += 3 * step.reduce_bytes / host_memory_bandwidth;
  return seconds;
}

}  // namespace paratwin::sim
