#include "reports/summary_text.hpp"

#include <cstdio>

#include "common/report_text.hpp"
#include "workloads/arithmetic.hpp"

namespace paratwin::reports {

std::string collective_table_text(const std::vector<CollectiveSummary>& collectives, const std::string& note) {
  std::string out;
  // nccl-tests' terms: size is the buffer per rank of one call, as nccl-tests counts it (all-gather: the
  // output, reduce-scatter: the input); time is one call's own, from its group's last member reaching it
  // to its last member's end (nccl-tests starts every rank together); algbw = size / time and busbw =
  // algbw × the kind's bus factor. Total, waiting and exposed are per rank and iteration, total from each
  // rank's own start, so waiting <= total and exposed <= total.
  out += printed("\n  %-15s %-13s %-10s %6s %6s %14s %12s %8s %8s %12s %12s %12s\n", "collective", "algorithm", "group",
                 "group", "calls", "size [B]", "time [us]", "algbw", "busbw", "total [ms]", "waiting [ms]",
                 "exposed [ms]");
  out += printed("  %-15s %-13s %-10s %6s %6s %14s %12s %8s %8s %12s %12s %12s\n", "", "", "", "size", "", "per call",
                 "per call", "[GB/s]", "[GB/s]", "", "for peers", "");
  bool unknown = false;  // a measured row: no call's own time, no waiting
  for (const auto& c : collectives) {
    unknown |= c.call_seconds < 0;
    char waiting[32];
    std::snprintf(waiting, sizeof waiting, "%.3f", 1e3 * c.waiting);
    out += printed("  %-15s %-13s %-10s %6lld %6lld %14.0f %12.1f %8.2f %8.2f %12.3f %12s %12.3f\n",
                   workloads::to_string(c.kind), c.algorithm.c_str(), c.group.c_str(),
                   static_cast<long long>(c.group_size), static_cast<long long>(c.count), c.bytes_per_call(),
                   1e6 * c.seconds_per_call(), c.algbw() / 1e9, c.busbw() / 1e9, 1e3 * c.seconds,
                   c.call_seconds < 0 ? "-" : waiting, 1e3 * c.exposed);
  }
  out += printed(
      "  (per rank: size and time are the mean call's, time from the group's last member reaching the call to its "
      "last\n   member's end%s; total, waiting and exposed are summed over the iteration's calls: total from the "
      "rank's own\n   start, waiting the part before the last member arrived, exposed the part the compute stream "
      "waited for)\n",
      unknown ? " (measured: from the rank's own call to its end)" : "");
  if (!note.empty()) out += printed("  (%s)\n", note.c_str());
  return out;
}

std::string flops_lines(const RunSummary& s, const std::string& dtype) {
  std::string out;
  char line[256];
  if (!s.legacy_flops) {
    std::snprintf(line, sizeof line, "  model FLOPs           %.4g TFLOP/s per device = %.3g%% of %s peak (MFU",
                  s.model_tflops_per_device, s.percent_of_peak, dtype.c_str());
    out += line;
    if (s.percent_of_empirical_peak) {
      std::snprintf(line, sizeof line, "; %.3g%% of the measured GEMM peak", *s.percent_of_empirical_peak);
      out += line;
    }
    out += ")\n";
  }
  const std::string partial = s.recompute_num_layers == 1
                                  ? std::string("with full recomputation of the first layer of each model chunk")
                                  : "with full recomputation of the first " + std::to_string(s.recompute_num_layers) +
                                        " layers of each model chunk";
  const std::string with =
      s.legacy_flops                      ? "saved by an older paratwin, recomputation counted"
      : s.recomputation == "full"         ? (s.recompute_num_layers > 0 ? partial : "with full recomputation")
      : s.recomputation == "selective"    ? "with the selective recomputation of attention"
      : s.recomputation == "selective_op" ? "with every other matmul of a block recomputed (per-op selective)"
                                          : "no recomputation: = MFU";
  std::snprintf(line, sizeof line, "  hardware FLOPs        %.4g TFLOP/s per device = %.3g%% of %s peak (HFU, %s)\n",
                s.hardware_tflops_per_device, s.percent_of_peak_hardware, dtype.c_str(), with.c_str());
  out += line;
  return out +
         "  (model FLOPs: forward + backward, no recomputation, 6N + 12·l·h·s per token as PaLM App. B; hardware "
         "FLOPs add\n   what checkpointing recomputes, Megatron SC21 eq. 3 with full; both count the full s×s "
         "attention, not the causal half)\n";
}

std::string summary_text(const workloads::Workload& w, const RunSummary& s, const char* what, const std::string& note) {
  std::string out;
  const std::string dtype = workloads::to_string(w.training.dtype);
  out += printed("  model                 %s\n", workloads::parameters_label(w.model).c_str());
  out += printed("  iteration time        %.6g s\n", s.iteration_seconds);
  out += printed("  throughput            %.4g tokens/s\n", s.tokens_per_second);
  // A machine without a peak in the run's dtype (exec of a bf16 run on localhost's CPU cores): the
  // percentages are of another dtype's peak, and the line says so rather than "of bf16 peak".
  const bool other_peak = !s.peak_dtype.empty() && s.peak_dtype != dtype;
  out += flops_lines(s, other_peak ? s.peak_dtype : dtype);
  if (w.training.fp8 != workloads::Fp8::none)
    out += printed(
        "  (fp8 GEMMs: the percentages are of the %s peak, as Megatron-LM and Transformer Engine report MFU "
        "for fp8 runs)\n",
        (other_peak ? s.peak_dtype : dtype).c_str());
  if (other_peak)
    out += printed("  (%s lists no %s peak: the percentages are of its %s peak; give the machine the run is on, -m)\n",
                   s.machine.c_str(), dtype.c_str(), s.peak_dtype.c_str());
  out += printed("\n  pipeline bubble       measured %.4f of compute, analytical (p-1)/(v·m) = %.4f\n",
                 s.bubble_measured, s.bubble_analytical);
  out += printed("\n  %-6s %12s %14s %12s %12s   (seconds, mean over the stage's ranks)\n", "stage", "compute",
                 "exposed comm", "bubble", "other idle");
  for (const auto& st : s.stages)
    out += printed("  %-6d %12.6g %14.6g %12.6g %12.6g\n", static_cast<int>(st.stage), st.compute, st.exposed_comm,
                   st.bubble, st.other_idle);
  if (!s.collectives.empty()) out += collective_table_text(s.collectives, note);
  out += printed("\n  memory per rank       %.3g GiB of %.3g GiB", s.max_bytes_per_rank / (1 << 30),
                 s.device_bytes / (1 << 30));
  if (s.max_bytes_per_rank > s.device_bytes)
    out += printed("  — OUT OF MEMORY: this configuration does not fit (%s)", what);
  return out + "\n";
}

}  // namespace paratwin::reports
