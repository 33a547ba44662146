#include "topology/machine_text.hpp"

#include <cmath>
#include <sstream>

#include "common/report_text.hpp"
#include "topology/gemm_model.hpp"
#include "topology/topology.hpp"

namespace paratwin::topology {

namespace {

std::string gbps(double bytes_per_s) {
  return printed("%.4g GB/s", bytes_per_s / 1e9);
}

std::string network_summary(const Machine& m) {
  std::ostringstream o;
  const auto& n = m.network;
  o << to_string(n.kind);
  if (n.kind == NetworkKind::dragonfly) {
    const auto& d = n.dragonfly;
    o << ": " << d.groups << " groups × " << d.switches_per_group << " switches (" << m.nodes_per_group()
      << " nodes per group, " << d.nics_per_switch << " NICs per switch), " << d.global_links_per_pair
      << " global links per group pair, local " << gbps(d.local_bandwidth) << ", global " << gbps(d.global_bandwidth);
    if (d.adaptive)
      o << ", adaptive routing (a group's global links shared by its flows, share " << d.adaptive_share << ")";
    else
      o << ", minimal routing";
  } else if (n.kind == NetworkKind::fat_tree) {
    const auto& f = n.fat_tree;
    o << ": " << f.down.size() << " levels, down";
    for (auto x : f.down) o << ' ' << x;
    o << ", up";
    for (auto x : f.up) o << ' ' << x;
    o << ", links " << gbps(f.link_bandwidth);
  }
  return o.str();
}

void device_and_host(std::ostringstream& o, const Machine& m) {
  const auto& d = m.node.device;
  o << "nodes " << m.network.nodes << " × " << d.count << " " << d.kind << " = " << m.total_devices() << " devices\n";
  o << "device: " << d.memory / 1e9 << " GB at " << gbps(d.hbm_bandwidth) << ", " << d.compute_units
    << " compute unit(s)";
  if (d.gemm_cache > 0) o << ", GEMM blocks in a " << d.gemm_cache / (1024 * 1024) << " MiB cache";
  if (d.gemm_block_k > 0)
    o << " (" << d.gemm_block_k << " of K per pass over C, " << d.gemm_block_n << " columns per pass over A)";
  o << "; peak";
  for (const auto& [dtype, f] : d.peak_flops) o << ' ' << dtype << ' ' << f / 1e12 << " TFLOP/s";
  if (!d.empirical_flops.empty()) {
    o << "; measured GEMM";
    for (const auto& [dtype, f] : d.empirical_flops) o << ' ' << dtype << ' ' << f / 1e12 << " TFLOP/s";
  }
  o << "\nhost: " << m.node.host.kind << ", " << m.node.host.sockets << " socket(s), " << m.node.host.cores
    << " cores, " << m.node.host.memory / 1e9 << " GB\n";
  o << "\nintra-node links (" << m.node.links.size() << "):\n";
  for (const auto& l : m.node.links)
    o << printed("  %-8s — %-8s %12s %8.3g us  %s\n", l.a.c_str(), l.b.c_str(), gbps(l.bandwidth).c_str(),
                 l.latency * 1e6, l.note.c_str());
  o << "NICs:\n";
  for (const auto& nic : m.node.nics) {
    o << "  " << nic.name << " " << gbps(nic.bandwidth) << " serves";
    for (int s : nic.serves) o << " gpu" << s;
    o << "\n";
  }
}

// Routes through the node's link graph, and between nodes through the network.
void paths(std::ostringstream& o, const Machine& m) {
  const int64_t count = m.node.device.count;
  const Topology topo(m);
  o << "\npath bandwidth between devices of one node (GB/s; route through the link graph):\n      ";
  for (int64_t b = 0; b < count; ++b) o << printed("%7s", ("gpu" + std::to_string(b)).c_str());
  o << "\n";
  for (int64_t a = 0; a < count; ++a) {
    o << printed("  %-4s", ("gpu" + std::to_string(a)).c_str());
    for (int64_t b = 0; b < count; ++b) {
      if (a == b) {
        o << printed("%7s", "-");
      } else {
        const auto p = topo.path(a, b);
        o << printed("%6.0f%s", p.bandwidth / 1e9, p.links > 1 ? "*" : " ");
      }
    }
    o << "\n";
  }
  o << "  (* multi-hop route)\n";
  o << "\nnetwork: " << network_summary(m) << "\n";
  if (!m.network.note.empty()) o << "  note: " << m.network.note << "\n";
  if (m.network.nodes > 1) {
    const auto near = topo.path(0, count);
    const auto far = topo.path(0, m.total_devices() - 1);
    o << "  gpu0 of node 0 to gpu0 of node 1: " << gbps(near.bandwidth) << ", " << near.latency * 1e6 << " us, "
      << near.switches << " switch(es)\n";
    o << "  first to last device: " << gbps(far.bandwidth) << ", " << far.latency * 1e6 << " us, " << far.switches
      << " switch(es), " << far.global_hops << " global hop(s)\n";
  }
}

void profile(std::ostringstream& o, const Machine& m) {
  const auto& d = m.node.device;
  o << "\nprofile: library " << m.profile.library << ", launch overhead " << m.profile.launch_overhead * 1e6 << " us";
  if (m.profile.collective_step > 0) o << ", " << m.profile.collective_step * 1e6 << " us per collective step";
  if (m.profile.compute_slowdown_communicating > 0)
    o << ", compute " << m.profile.compute_slowdown_communicating * 100
      << " % slower while a collective runs beside it";
  o << "\n";
  if (const auto& n = m.profile.nccl)
    o << "  NCCL: tuning tables of v" << n->tuning << " (protocol and latency of each ring and tree"
      << (n->tuning >= "2.23" ? "; PAT for all-gather and reduce-scatter over one GPU per node" : "") << "), sm"
      << n->compute_capability << ", " << n->cpu << " host, LL128 " << (n->ll128 ? "enabled" : "disabled") << "\n";
  // Square GEMMs' share of peak, so that the model's parameters read as rates.
  for (const auto& [dtype, g] : m.profile.gemm) {
    const auto gd = gemm_device(d, d.peak_flops.at(dtype), d.hbm_bandwidth, dtype_bytes(dtype));
    o << "  GEMM " << dtype << ": main loop at " << g.max_efficiency * 100 << "% of peak, tile overhead "
      << g.tile_overhead_k << " K steps, operand reuse " << g.operand_reuse << ", fixed " << g.fixed_seconds * 1e6
      << " us";
    if (g.packing_bandwidth > 0) o << ", packing at " << g.packing_bandwidth / 1e9 << " GB/s";
    o << "; square GEMMs (kernel only):";
    for (const int64_t n : {1024, 4096, 16384}) {
      const auto t = gemm_timing({n, n, n, 1}, gd, g);
      const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      o << " " << n << "^3 " << std::lround(100 * flops / t.seconds / gd.peak_flops) << "%";
    }
    o << " of peak\n";
  }
}

}  // namespace

std::string machine_list_text() {
  std::string out =
      printed("%-12s %8s %14s %10s %-10s %s\n", "machine", "nodes", "devices/node", "devices", "network", "device");
  for (const auto& name : builtin_machine_names()) {
    const auto m = resolve_machine(name);
    out += printed("%-12s %8lld %14lld %10lld %-10s %s\n", name.c_str(), static_cast<long long>(m.network.nodes),
                   static_cast<long long>(m.devices_per_node()), static_cast<long long>(m.total_devices()),
                   to_string(m.network.kind), m.node.device.kind.c_str());
  }
  return out + "\nAny command that takes a machine also takes a path to a machine file (topology/README.md).\n";
}

std::string machine_text(const Machine& m) {
  std::ostringstream o;
  o << m.name << ": " << m.description << "\n  from " << m.source_file << "\n\n";
  device_and_host(o, m);
  paths(o, m);
  profile(o, m);
  if (!m.sources.empty()) {
    o << "\nsources:\n";
    for (const auto& s : m.sources) o << "  - " << s << "\n";
  }
  return o.str();
}

}  // namespace paratwin::topology
