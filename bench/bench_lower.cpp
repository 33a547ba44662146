// Benchmark: lowering time and peak memory for large workloads (the target: GPT-320B on 32,768 ranks
// in under 1 s and 200 MB). Prints one line per workload; run it from the repository root.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "reports/lower_report.hpp"
#include "workloads/lower.hpp"

namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) files.emplace_back(argv[i]);
  if (files.empty()) files = {"workloads/examples/gpt-320b-frontier-32768.json"};
  std::printf("%-48s %8s %8s %10s %12s %12s\n", "workload", "ranks", "roles", "ops/role", "lower [s]",
              "peak RSS [MiB]");
  for (const auto& file : files) {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const auto w = paratwin::workloads::load_workload_file(file);
      const auto program = paratwin::workloads::lower(w);
      const auto t1 = std::chrono::steady_clock::now();
      size_t ops = 0;
      for (const auto& r : program.roles) ops = std::max(ops, r.ops.size());
      std::printf("%-48s %8lld %8zu %10zu %12.3f %12.1f\n", file.c_str(), static_cast<long long>(program.grid.size()),
                  program.roles.size(), ops, std::chrono::duration<double>(t1 - t0).count(), peak_rss_mib());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), e.what());
      return 1;
    }
  }
  return 0;
}
