#pragma once
// `paratwin validate --fit`: a framework profile's kernel_efficiency fitted to a machine's calibration
// points, by least squares on the relative error of their predictions.
#include <cstdint>
#include <string>
#include <vector>

#include "validation/reference_points.hpp"
#include "validation/report.hpp"

namespace paratwin::validation {

struct FitPoint {
  size_t suite = 0, point = 0;
  bool calibration = false;
};

class KernelEfficiencyFit {
 public:
  // `options`: where machines come from and how many points run at once; a point of up to
  // `simulate_up_to` GPUs is simulated where the model is "auto".
  KernelEfficiencyFit(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus, std::string framework,
                      ReferenceOptions options, int64_t simulate_up_to)
      : suites_(suites),
        gpus_(gpus),
        framework_(std::move(framework)),
        options_(std::move(options)),
        simulate_up_to_(simulate_up_to) {}

  // The relative errors of `points` with kernel_efficiency `value`, predicted by `model` ("auto": as
  // validate chooses). Throws InputError naming a point that cannot be predicted.
  std::vector<ValidationRow> predict(const std::vector<FitPoint>& points, double value, const std::string& model);
  // Least squares on the relative error: golden-section search of the one parameter over (0.2, 1].
  double fit(const std::vector<FitPoint>& points, const std::string& model);

 private:
  const std::vector<ReferenceSuite>& suites_;
  const PointGpus& gpus_;
  std::string framework_;
  ReferenceOptions options_;
  int64_t simulate_up_to_;
};

}  // namespace paratwin::validation
