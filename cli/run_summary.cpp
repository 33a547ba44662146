// The summary JSON and text shared by `paratwin simulate` and `paratwin exec`.
#include "cli/run_summary.hpp"

#include <algorithm>
#include <cstdio>

namespace paratwin::cli {

namespace {

double bus_factor(workloads::OpKind kind, double n) {
  switch (kind) {
    case workloads::OpKind::all_reduce:
      return 2 * (n - 1) / n;
    case workloads::OpKind::reduce_scatter:
    case workloads::OpKind::all_gather:
    case workloads::OpKind::all_to_all:
      return (n - 1) / n;
    default:
      return 1;
  }
}

}  // namespace

nlohmann::json run_summary(const workloads::Workload& w, const workloads::Program& program,
                           const topology::Machine& machine, double iteration_seconds,
                           const std::vector<RankRow>& ranks, const std::vector<CollectiveRow>& collectives) {
  // Throughput and efficiency (seed 003 eq. 3 style model FLOPs).
  const double T = iteration_seconds;
  const double devices = static_cast<double>(program.grid.size());
  const double flops_per_device = program.model_flops / T / devices;
  const auto& dev = machine.node.device;
  const std::string dtype = workloads::to_string(w.training.dtype);
  const double peak = dev.peak_flops.count(dtype) ? dev.peak_flops.at(dtype) : dev.peak_flops.begin()->second;
  nlohmann::json j;
  j["workload"] = w.name;
  j["machine"] = machine.name;
  j["ranks"] = program.grid.size();
  j["iteration_seconds"] = T;
  j["tokens_per_second"] = static_cast<double>(program.tokens_per_iteration) / T;
  j["model_tflops_per_device"] = flops_per_device / 1e12;
  j["percent_of_peak"] = 100 * flops_per_device / peak;
  if (dev.empirical_flops.count(dtype))
    j["percent_of_empirical_peak"] = 100 * flops_per_device / dev.empirical_flops.at(dtype);
  // Pipeline bubble: measured from the timeline against (p-1)/m, or (p-1)/(v·m) interleaved.
  const auto& pp = w.parallel.pipeline;
  const double analytical = static_cast<double>(pp.stages - 1) /
                            (static_cast<double>(pp.chunks) * static_cast<double>(program.micro_batches));
  double bubble = 0, compute = 0;
  for (const auto& t : ranks) {
    bubble += t.bubble;
    compute += t.compute;
  }
  j["bubble_fraction"] = {{"measured", compute > 0 ? bubble / compute : 0}, {"analytical", analytical}};
  for (size_t s = 0; s < program.roles.size(); ++s) {
    double c = 0, e = 0, b = 0, o = 0, n = 0;
    for (int64_t rank = 0; rank < program.grid.size(); ++rank)
      if (program.role_of(rank) == static_cast<int64_t>(s)) {
        const auto& t = ranks[static_cast<size_t>(rank)];
        c += t.compute;
        e += t.exposed_comm;
        b += t.bubble;
        o += t.other_idle;
        ++n;
      }
    j["stages"].push_back(
        {{"stage", s}, {"compute", c / n}, {"exposed_comm", e / n}, {"bubble", b / n}, {"other_idle", o / n}});
  }
  // Per rank, in rank order: [compute, exposed communication, bubble, other idle] seconds.
  nlohmann::json per_rank = nlohmann::json::array();
  for (const auto& t : ranks) per_rank.push_back({t.compute, t.exposed_comm, t.bubble, t.other_idle});
  j["ranks_compute_exposed_bubble_other"] = std::move(per_rank);
  for (const auto& c : collectives) {
    const double algbw = c.seconds > 0 ? c.bytes / c.seconds : 0;
    const int64_t group_size = program.grid.group_size(c.group);
    j["collectives"].push_back({{"kind", workloads::to_string(c.kind)},
                                {"algorithm", c.algorithm.empty() ? "measured" : c.algorithm},
                                {"group", program.grid.mask_name(c.group)},
                                {"group_size", group_size},
                                {"count", c.count},
                                {"bytes", c.bytes},
                                {"seconds", c.seconds},
                                {"exposed_seconds", c.exposed},
                                {"overlapped_seconds", std::max(0.0, c.seconds - c.exposed)},
                                {"algbw", algbw},
                                {"busbw", algbw * bus_factor(c.kind, static_cast<double>(group_size))}});
  }
  double worst_memory = 0;
  for (const auto& role : program.roles) worst_memory = std::max(worst_memory, role.memory.total());
  j["memory"] = {
      {"max_bytes_per_rank", worst_memory}, {"device_bytes", dev.memory}, {"fits", worst_memory <= dev.memory}};
  return j;
}

void print_summary(const workloads::Workload& w, const nlohmann::json& j, const char* what) {
  const std::string dtype = workloads::to_string(w.training.dtype);
  std::printf("  iteration time        %.6g s\n", j["iteration_seconds"].get<double>());
  std::printf("  throughput            %.4g tokens/s, %.4g model TFLOP/s per device = %.3g%% of %s peak",
              j["tokens_per_second"].get<double>(), j["model_tflops_per_device"].get<double>(),
              j["percent_of_peak"].get<double>(), dtype.c_str());
  if (j.contains("percent_of_empirical_peak"))
    std::printf(" (%.3g%% of measured GEMM peak)", j["percent_of_empirical_peak"].get<double>());
  std::printf("\n  pipeline bubble       measured %.4f of compute, analytical (p-1)/(v·m) = %.4f\n",
              j["bubble_fraction"]["measured"].get<double>(), j["bubble_fraction"]["analytical"].get<double>());
  std::printf("\n  %-6s %12s %14s %12s %12s   (seconds, mean over the stage's ranks)\n", "stage", "compute",
              "exposed comm", "bubble", "other idle");
  for (const auto& s : j["stages"])
    std::printf("  %-6d %12.6g %14.6g %12.6g %12.6g\n", s["stage"].get<int>(), s["compute"].get<double>(),
                s["exposed_comm"].get<double>(), s["bubble"].get<double>(), s["other_idle"].get<double>());
  if (j.contains("collectives")) {
    std::printf("\n  %-15s %-13s %-12s %5s %7s %12s %12s %12s %10s %10s  (per rank)\n", "collective", "algorithm",
                "group", "size", "count", "bytes", "time [s]", "exposed [s]", "algbw GB/s", "busbw GB/s");
    for (const auto& c : j["collectives"])
      std::printf("  %-15s %-13s %-12s %5lld %7lld %12.4g %12.6g %12.6g %10.4g %10.4g\n",
                  c["kind"].get<std::string>().c_str(), c["algorithm"].get<std::string>().c_str(),
                  c["group"].get<std::string>().c_str(), static_cast<long long>(c["group_size"].get<int64_t>()),
                  static_cast<long long>(c["count"].get<int64_t>()), c["bytes"].get<double>(),
                  c["seconds"].get<double>(), c["exposed_seconds"].get<double>(), c["algbw"].get<double>() / 1e9,
                  c["busbw"].get<double>() / 1e9);
  }
  const double worst_memory = j["memory"]["max_bytes_per_rank"].get<double>();
  const double device_memory = j["memory"]["device_bytes"].get<double>();
  std::printf("\n  memory per rank       %.3g GiB of %.3g GiB", worst_memory / (1 << 30), device_memory / (1 << 30));
  if (worst_memory > device_memory) std::printf("  — OUT OF MEMORY: this configuration does not fit (%s)", what);
  std::printf("\n");
}

}  // namespace paratwin::cli
