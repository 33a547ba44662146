#pragma once
// Fitting the GEMM shape model (topology/gemm_model.hpp) to measured kernels: its main-loop
// efficiency, a tile's overhead in K steps, operand reuse, the kernel's fixed time and (CPU) the
// operand-packing bandwidth, by least squares
// on the relative error (a 15 µs GEMM counts as much as a 5 ms one).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "topology/gemm_model.hpp"
#include "topology/machine.hpp"

namespace paratwin::calibration {

// A GEMM that took `seconds`, launch overhead included, as a benchmark times it.
struct GemmSample {
  topology::GemmShape shape;
  double seconds = 0;
};

struct GemmModelFit {
  topology::GemmModel model;
  // Where the kernels beat the device's nominal peak (a CPU core's turbo clock), the peak to use, as a
  // multiple of the nominal one; max_efficiency is then 1.
  double peak_scale = 1;
  double rms_relative_error = 0;
  double max_relative_error = 0;
};

// `device` gives the peak, compute units, tiles, bandwidth and element size; `launch_seconds` the
// per-call overhead measured apart (the profile's), which every sample includes; `packing` fits the
// operand-packing bandwidth too (CPU BLAS), else leaves it 0.
GemmModelFit fit_gemm_model(const std::vector<GemmSample>& samples, const topology::GemmDevice& device,
                            double launch_seconds, bool packing = false);

// The model's prediction of one sample (launch included) and its relative error.
double predicted_seconds(const GemmSample& s, const topology::GemmDevice& device, const topology::GemmModel& model,
                         double launch_seconds);

// Fits the GEMM model of every dtype a profile (`calibrate micro`'s JSON) timed — its measurements of
// kind gemm and its fit.gemm_shapes — on `machine`'s device (peak, compute units, tiles) with the
// profile's own launch overhead and memory bandwidth, and writes fit.gemm, fit.peak_tflops and
// fit_error.gemm_* into it. Throws std::invalid_argument when a dtype has too few GEMMs to fit.
void fit_profile_gemms(nlohmann::json& profile, const topology::Machine& machine);

// `calibrate refit`: fit_profile_gemms on the machine the profile names, for a profile read from
// `source`. Throws InputError naming `source` when it is not a profile `calibrate micro` wrote or its
// GEMMs cannot be fitted.
void refit_profile_gemms(nlohmann::json& profile, const std::string& source);

}  // namespace paratwin::calibration
