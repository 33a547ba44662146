#include "calibration/profile.hpp"

#include <array>

#include "calibration/profile_format.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/report_text.hpp"
#include "common/schema_version.hpp"

namespace paratwin::calibration {

namespace {

constexpr double kNominalPeakSlack = 4;  // a fitted peak above this many times the machine file's is refused
constexpr double kShapeAbovePeak = 1.5;  // a GEMM faster than this many times the profile's peak is refused

}  // namespace

void apply_profile(topology::Machine& machine, const std::string& path) {
  auto doc = parse_json<InputError>(read_text_file<InputError>(path), path);
  try {
    if (!doc.is_object()) throw InputError("", "must be a JSON object: a profile written by paratwin calibrate micro");
    upgrade_profile(doc);
    JsonReader top(doc, "");
    top.integer("schema_version", std::nullopt, 1, kSchemaVersion);
    const std::string measured = top.string("machine");
    if (measured != machine.name)
      top.fail("machine",
               "= \"" + measured + "\": the profile was measured on " + measured + ", not on " + machine.name);
    JsonReader fit = top.object("fit");
    const auto nominal = machine.node.device.peak_flops;  // the machine file's, before the profile's replace it
    // The GEMM model of every dtype measured, with the peak the kernels showed.
    JsonReader peaks = fit.object("peak_tflops");
    JsonReader gemm = fit.object("gemm");
    for (const std::string& dtype : topology::rate_dtypes()) {
      if (!gemm.has(dtype)) continue;
      JsonReader g = gemm.object(dtype);
      topology::GemmModel model;
      model.max_efficiency = g.number("max_efficiency", std::nullopt, 1e-6, 1.0);
      model.tile_overhead_k = g.number("tile_overhead_k", std::nullopt, 0, 1e6);
      model.operand_reuse = g.number("operand_reuse", std::nullopt, 0, 1e6);
      model.fixed_seconds = g.number("fixed_us", std::nullopt, 0, 1e6) * 1e-6;
      model.packing_bandwidth = g.number("packing_GBps", 0.0, 0, 1e9) * 1e9;
      g.finish();
      const double peak = peaks.number(dtype, std::nullopt, 1e-6, 1e6) * 1e12;
      // A nominal peak can be off by 2x either way (an assumed clock, a vector unit's width); 4x is no
      // measurement of this device.
      if (const auto it = nominal.find(dtype); it != nominal.end() && peak > kNominalPeakSlack * it->second)
        peaks.fail(dtype, printed("= %.4g TFLOP/s is more than %g x the %.4g TFLOP/s peak of ", peak / 1e12,
                                  kNominalPeakSlack, it->second / 1e12) +
                              machine.name + "'s device: not a measurement of it");
      machine.node.device.peak_flops[dtype] = peak;
      machine.profile.gemm[dtype] = model;
    }
    gemm.finish();
    peaks.finish();
    const double launch = fit.number("launch_overhead_us", std::nullopt, 0, 1e6);
    const double memory = fit.number("memory_GBps", std::nullopt, 1e-6, 1e9);
    machine.profile.launch_overhead = launch * 1e-6;
    machine.node.device.hbm_bandwidth = memory * 1e9;
    // Collectives were measured on a single node: one bandwidth for its links, and the per-step cost
    // (latency included) as the library's step cost.
    auto shapes = fit.objects("gemm_shapes");
    for (auto& e : shapes) {
      const std::string dtype = e.choice("dtype", topology::rate_dtypes());
      std::array<int64_t, 6> key = {e.integer("m", std::nullopt, 1), e.integer("n", std::nullopt, 1),
                                    e.integer("k", std::nullopt, 1), e.integer("batch", std::nullopt, 1),
                                    e.boolean("trans_a") ? 1 : 0,    e.boolean("trans_b") ? 1 : 0};
      const double seconds = e.number("time_s", std::nullopt, 0, 1e6);
      if (seconds <= 0) e.fail("time_s", "= 0: a GEMM takes time");
      // The profile's peak is the fastest its GEMMs ran; one shape well above it was not timed right.
      const auto peak = machine.node.device.peak_flops.find(dtype);
      const double rate = 2.0 * static_cast<double>(key[0]) * static_cast<double>(key[1]) *
                          static_cast<double>(key[2]) * static_cast<double>(key[3]) / seconds;
      if (peak != machine.node.device.peak_flops.end() && rate > kShapeAbovePeak * peak->second)
        e.fail("time_s", printed("= %.4g gives %.4g TFLOP/s, more than %g x the %s peak of %.4g TFLOP/s", seconds,
                                 rate / 1e12, kShapeAbovePeak, dtype.c_str(), peak->second / 1e12) +
                             ": physically impossible on this device");
      machine.profile.gemm_seconds[dtype][key] = seconds;
      e.finish();
    }
    if (fit.has("message_cost")) {
      JsonReader m = fit.object("message_cost");
      machine.profile.message_cost = {m.number("step_us", std::nullopt, 0, 1e6) * 1e-6,
                                      m.number("per_byte_ns", std::nullopt, 0, 1e6) * 1e-9};
    }
    if (fit.has("compute_slowdown_communicating"))
      machine.profile.compute_slowdown_communicating =
          fit.number("compute_slowdown_communicating", std::nullopt, 0, topology::kMaxComputeSlowdown);
    if (fit.has("overlapped_step_extra_us"))
      machine.profile.overlapped_step_extra = fit.number("overlapped_step_extra_us", std::nullopt, 0, 1e6) * 1e-6;
    for (auto& c : fit.objects("collective_costs")) {
      const std::string kind =
          c.choice("kind", {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"});
      machine.profile.collective_costs[kind] = {
          c.number("step_us", std::nullopt, 0, 1e6) * 1e-6, c.number("per_byte_ns", std::nullopt, 0, 1e6) * 1e-9,
          c.has("overlapped_extra_us") ? c.number("overlapped_extra_us", std::nullopt, 0, 1e6) * 1e-6 : -1.0};
      c.number("rms_relative_error", 0.0);  // the fit's, for people
      c.finish();
    }
    if (fit.has("collective_step_us")) {
      machine.profile.collective_step = fit.number("collective_step_us", std::nullopt, 0, 1e6) * 1e-6;
      const double link = fit.number("link_GBps", std::nullopt, 1e-6, 1e9) * 1e9;
      for (auto& l : machine.node.links) {
        l.bandwidth = link;
        l.latency = 0;
      }
    }
  } catch (const InputError& e) {
    throw InputError(path, e.what());
  }
}

}  // namespace paratwin::calibration
