#pragma once
// A fitted profile (`paratwin calibrate micro --out`) applied to a machine model: the GEMM curve and
// peak, launch overhead, memory bandwidth, the per-step cost of collectives and the link bandwidth.
#include <string>

#include "topology/machine.hpp"

namespace paratwin::calibration {

// Throws InputError naming the file and JSON path of a missing or out-of-range value, or a profile
// measured on another machine.
void apply_profile(topology::Machine& machine, const std::string& path);

}  // namespace paratwin::calibration
