#pragma once
// One comparison of predicted with measured times as `calibrate compare` prints it: the iteration, then
// a table of the op classes per rank.
#include <string>

#include "calibration/compare.hpp"

namespace paratwin::calibration {

std::string comparison_text(const Comparison& c);

}  // namespace paratwin::calibration
