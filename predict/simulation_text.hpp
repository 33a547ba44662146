#pragma once
// The first lines `paratwin simulate` prints of a SimGrid prediction, before the run summary's: what
// ran where, at which fidelity and with which library, the fitted profile applied, and how the ranks
// became actors.
#include <string>

#include "predict/prediction.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

// `p` holds a simulation (summary and record).
std::string simulation_heading(const workloads::Workload& w, const Prediction& p);

}  // namespace paratwin::predict
