// Benchmark: ranking every configuration with the analytical model (the target: every 4-D configuration
// of GPT-80B on 1,024 GPUs in under 1 s), with every micro-batch, chunk, sequence-parallel,
// recomputation and ZeRO variant that applies. Prints one line per case; run it from the
// repository root.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/search.hpp"
#include "topology/machine.hpp"

namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

struct Case {
  std::string workload, machine, family;
  int64_t gpus;
};

}  // namespace

int main() {
  using namespace paratwin;
  const std::vector<Case> cases = {{"workloads/examples/gpt-80b-frontier-8192.json", "frontier", "4d", 1024},
                                   {"workloads/examples/gpt-80b-frontier-8192.json", "frontier", "4d", 8192},
                                   {"workloads/examples/gpt-20b-perlmutter-32.json", "perlmutter", "all", 32},
                                   {"workloads/examples/gpt3-175b-selene-1024.json", "selene", "ptdp", 1024}};
  std::printf("%-46s %-10s %6s %6s %8s %8s %8s %9s %9s %10s %12s\n", "workload", "machine", "family", "GPUs", "ranked",
              "no room", "invalid", "variants", "estimated", "wall [s]", "peak RSS [MiB]");
  for (const auto& c : cases) {
    const auto w = workloads::load_workload_file(c.workload);
    const auto machine = topology::resolve_machine(c.machine);
    const auto t0 = std::chrono::steady_clock::now();
    const topology::Topology topology(
        machine.slice((c.gpus + machine.devices_per_node() - 1) / machine.devices_per_node()));
    sim::SearchOptions options;
    options.gpus = c.gpus;
    if (c.family == "4d") options.families = {sim::Family::four_d};
    if (c.family == "ptdp") options.families = {sim::Family::ptdp};
    const auto r = sim::search(w, topology, options);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-46s %-10s %6s %6lld %8zu %8zu %8zu %9lld %9lld %10.3f %12.1f\n", c.workload.c_str(),
                c.machine.c_str(), c.family.c_str(), static_cast<long long>(c.gpus), r.ranked.size(), r.rejected.size(),
                r.invalid.size(), static_cast<long long>(r.variants), static_cast<long long>(r.estimated), wall,
                peak_rss_mib());
  }
  return 0;
}
