#include "calibration/micro_report.hpp"

#include <cmath>

#include "common/report_text.hpp"

namespace paratwin::calibration {

std::string gemm_fit_text(const nlohmann::json& profile) {
  const auto& f = profile["fit"];
  std::string out;
  for (const auto& [dtype, g] : f["gemm"].items()) {
    const std::string suffix = dtype == "fp32" ? "" : "_" + dtype;
    const std::string packing = g.value("packing_GBps", 0.0) > 0
                                    ? std::to_string(std::lround(g["packing_GBps"].get<double>())) + " GB/s"
                                    : "none";
    out += printed(
        "  GEMM %s: peak %.4g TFLOP/s, main loop at %.3f of it, tile overhead %.3g K steps, operand reuse %.3g, "
        "fixed %.3g us, packing %s (rms error %.1f %%, max %.1f %%)\n",
        dtype.c_str(), f["peak_tflops"][dtype].get<double>(), g["max_efficiency"].get<double>(),
        g["tile_overhead_k"].get<double>(), g["operand_reuse"].get<double>(), g["fixed_us"].get<double>(),
        packing.c_str(), 100 * profile["fit_error"]["gemm_rms_relative" + suffix].get<double>(),
        100 * profile["fit_error"]["gemm_max_relative" + suffix].get<double>());
  }
  return out;
}

std::string micro_fit_text(const nlohmann::json& profile) {
  const auto& f = profile["fit"];
  std::string out = gemm_fit_text(profile);
  out += printed("  element-wise: launch %.3g us, memory %.3g GB/s (rms error %.1f %%)\n",
                 f["launch_overhead_us"].get<double>(), f["memory_GBps"].get<double>(),
                 100 * profile["fit_error"]["sweep_rms_relative"].get<double>());
  if (f.contains("collectives")) {
    out += printed("  %-15s %5s %14s %12s %10s\n", "collective", "ranks", "alpha/step us", "busbw GB/s", "rms err");
    for (const auto& c : f["collectives"])
      out += printed("  %-15s %5lld %14.3g %12.3g %9.1f%%\n", c["kind"].get<std::string>().c_str(),
                     static_cast<long long>(c["group_size"].get<int64_t>()), c["alpha_us_per_step"].get<double>(),
                     c["busbw_GBps"].get<double>(), 100 * c["rms_relative_error"].get<double>());
    out += printed(
        "  profile: link %.3g GB/s (the fastest kind's bus bandwidth); per kind the step cost and the cost per byte "
        "beyond the link's (collective_costs); collective_step %.3g us (median) for other kinds\n",
        f["link_GBps"].get<double>(), f["collective_step_us"].get<double>());
  }
  if (f.contains("messages"))
    out += printed("  messages between rank pairs: alpha %.3g us, %.3g GB/s (rms error %.1f %%)\n",
                   f["messages"]["alpha_us"].get<double>(), f["messages"]["GBps"].get<double>(),
                   100 * f["messages"]["rms_relative_error"].get<double>());
  if (f.contains("compute_slowdown_communicating"))
    out += printed("  GEMMs run %.3g %% slower while a collective is in flight (polls and copies on the same core)\n",
                   100 * f["compute_slowdown_communicating"].get<double>());
  if (!f["gemm_shapes"].empty())
    out += printed("  %zu GEMM shapes of the workloads timed one by one\n", f["gemm_shapes"].size());
  if (f.contains("overlapped_step_extra_us"))
    out += printed("  a collective step costs %.3g us more while its rank computes (polled between GEMM slices)\n",
                   f["overlapped_step_extra_us"].get<double>());
  return out;
}

}  // namespace paratwin::calibration
