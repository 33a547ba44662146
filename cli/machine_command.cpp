// `paratwin machine list` and `paratwin machine show NAME|FILE [--nodes N]`.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "topology/machine.hpp"
#include "topology/topology.hpp"

namespace paratwin::cli {

namespace {

std::string gbps(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g GB/s", bytes_per_s / 1e9);
  return buf;
}

std::string network_summary(const topology::Machine& m) {
  std::ostringstream o;
  const auto& n = m.network;
  o << to_string(n.kind);
  if (n.kind == topology::NetworkKind::dragonfly) {
    const auto& d = n.dragonfly;
    o << ": " << d.groups << " groups × " << d.switches_per_group << " switches (" << m.nodes_per_group()
      << " nodes per group, " << d.nics_per_switch << " NICs per switch), " << d.global_links_per_pair
      << " global links per group pair, local " << gbps(d.local_bandwidth) << ", global " << gbps(d.global_bandwidth);
    if (d.adaptive)
      o << ", adaptive routing (a group's global links shared by its flows, share " << d.adaptive_share << ")";
    else
      o << ", minimal routing";
  } else if (n.kind == topology::NetworkKind::fat_tree) {
    const auto& f = n.fat_tree;
    o << ": " << f.down.size() << " levels, down";
    for (auto x : f.down) o << ' ' << x;
    o << ", up";
    for (auto x : f.up) o << ' ' << x;
    o << ", links " << gbps(f.link_bandwidth);
  }
  return o.str();
}

void list_machines() {
  std::printf("%-12s %8s %14s %10s %-10s %s\n", "machine", "nodes", "devices/node", "devices", "network", "device");
  for (const auto& name : topology::builtin_machine_names()) {
    const auto m = topology::resolve_machine(name);
    std::printf("%-12s %8lld %14lld %10lld %-10s %s\n", name.c_str(), static_cast<long long>(m.network.nodes),
                static_cast<long long>(m.devices_per_node()), static_cast<long long>(m.total_devices()),
                to_string(m.network.kind), m.node.device.kind.c_str());
  }
  std::printf("\nAny command that takes a machine also takes a path to a machine file (topology/README.md).\n");
}

void show_machine(const topology::Machine& m) {
  const auto& d = m.node.device;
  std::cout << m.name << ": " << m.description << "\n  from " << m.source_file << "\n\n";
  std::cout << "nodes " << m.network.nodes << " × " << d.count << " " << d.kind << " = " << m.total_devices()
            << " devices\n";
  std::cout << "device: " << d.memory / 1e9 << " GB at " << gbps(d.hbm_bandwidth) << ", " << d.compute_units
            << " compute unit(s)";
  if (d.gemm_cache > 0) std::cout << ", GEMM blocks in a " << d.gemm_cache / (1024 * 1024) << " MiB cache";
  if (d.gemm_block_k > 0)
    std::cout << " (" << d.gemm_block_k << " of K per pass over C, " << d.gemm_block_n << " columns per pass over A)";
  std::cout << "; peak";
  for (const auto& [dtype, f] : d.peak_flops) std::cout << ' ' << dtype << ' ' << f / 1e12 << " TFLOP/s";
  if (!d.empirical_flops.empty()) {
    std::cout << "; measured GEMM";
    for (const auto& [dtype, f] : d.empirical_flops) std::cout << ' ' << dtype << ' ' << f / 1e12 << " TFLOP/s";
  }
  std::cout << "\nhost: " << m.node.host.kind << ", " << m.node.host.sockets << " socket(s), " << m.node.host.cores
            << " cores, " << m.node.host.memory / 1e9 << " GB\n";
  std::cout << "\nintra-node links (" << m.node.links.size() << "):\n";
  for (const auto& l : m.node.links)
    std::printf("  %-8s — %-8s %12s %8.3g us  %s\n", l.a.c_str(), l.b.c_str(), gbps(l.bandwidth).c_str(),
                l.latency * 1e6, l.note.c_str());
  std::cout << "NICs:\n";
  for (const auto& nic : m.node.nics) {
    std::cout << "  " << nic.name << " " << gbps(nic.bandwidth) << " serves";
    for (int s : nic.serves) std::cout << " gpu" << s;
    std::cout << "\n";
  }
  const topology::Topology topo(m);
  std::cout << "\npath bandwidth between devices of one node (GB/s; route through the link graph):\n      ";
  for (int64_t b = 0; b < d.count; ++b) std::printf("%7s", ("gpu" + std::to_string(b)).c_str());
  std::cout << "\n";
  for (int64_t a = 0; a < d.count; ++a) {
    std::printf("  %-4s", ("gpu" + std::to_string(a)).c_str());
    for (int64_t b = 0; b < d.count; ++b) {
      if (a == b)
        std::printf("%7s", "-");
      else {
        const auto p = topo.path(a, b);
        std::printf("%6.0f%s", p.bandwidth / 1e9, p.links > 1 ? "*" : " ");
      }
    }
    std::cout << "\n";
  }
  std::cout << "  (* multi-hop route)\n";
  std::cout << "\nnetwork: " << network_summary(m) << "\n";
  if (!m.network.note.empty()) std::cout << "  note: " << m.network.note << "\n";
  if (m.network.nodes > 1) {
    const int64_t last = m.total_devices() - 1;
    const auto near = topo.path(0, d.count);
    const auto far = topo.path(0, last);
    std::cout << "  gpu0 of node 0 to gpu0 of node 1: " << gbps(near.bandwidth) << ", " << near.latency * 1e6 << " us, "
              << near.switches << " switch(es)\n";
    std::cout << "  first to last device: " << gbps(far.bandwidth) << ", " << far.latency * 1e6 << " us, "
              << far.switches << " switch(es), " << far.global_hops << " global hop(s)\n";
  }
  std::cout << "\nprofile: library " << m.profile.library << ", launch overhead " << m.profile.launch_overhead * 1e6
            << " us";
  if (m.profile.collective_step > 0) std::cout << ", " << m.profile.collective_step * 1e6 << " us per collective step";
  std::cout << "\n";
  if (const auto& n = m.profile.nccl)
    std::cout << "  NCCL: tuning tables of v" << n->tuning << " (protocol and latency of each ring and tree), sm"
              << n->compute_capability << ", " << n->cpu << " host, LL128 " << (n->ll128 ? "enabled" : "disabled")
              << "\n";
  // What the GEMM model makes of square GEMMs, so the parameters read as rates.
  for (const auto& [dtype, g] : m.profile.gemm) {
    const auto gd = topology::gemm_device(d, d.peak_flops.at(dtype), d.hbm_bandwidth, topology::dtype_bytes(dtype));
    std::cout << "  GEMM " << dtype << ": main loop at " << g.max_efficiency * 100 << "% of peak, tile overhead "
              << g.tile_overhead_k << " K steps, operand reuse " << g.operand_reuse << ", fixed "
              << g.fixed_seconds * 1e6 << " us";
    if (g.packing_bandwidth > 0) std::cout << ", packing at " << g.packing_bandwidth / 1e9 << " GB/s";
    std::cout << "; square GEMMs (kernel only):";
    for (const int64_t n : {1024, 4096, 16384}) {
      const auto t = topology::gemm_timing({n, n, n, 1}, gd, g);
      const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      std::cout << " " << n << "^3 " << std::lround(100 * flops / t.seconds / gd.peak_flops) << "%";
    }
    std::cout << " of peak\n";
  }
  if (!m.sources.empty()) {
    std::cout << "\nsources:\n";
    for (const auto& s : m.sources) std::cout << "  - " << s << "\n";
  }
}

}  // namespace

Action add_machine_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("machine", "List the built-in machines or show one machine's description");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "List the built-in machines");
  auto name = std::make_shared<std::string>();
  auto nodes = std::make_shared<int64_t>(0);
  CLI::App* show = cmd->add_subcommand("show", "Show a machine: devices, links, NICs, path bandwidths, network");
  show->add_option("machine", *name, "a built-in machine name or a machine file")->required();
  show->add_option("--nodes", *nodes, "take a slice of the machine of this many nodes")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  return [list, show, name, nodes]() -> int {
    if (list->parsed()) {
      list_machines();
      return 0;
    }
    if (show->parsed()) {
      auto m = topology::resolve_machine(*name);
      if (*nodes > 0) m = m.slice(*nodes);
      show_machine(m);
    }
    return 0;
  };
}

}  // namespace paratwin::cli
