#pragma once
// The first lines `paratwin simulate` prints of a SimGrid prediction, before the run summary's: what
// ran where, at which fidelity and with which library, the fitted profile applied, and how the ranks
// became actors.
#include <string>

#include "predict/prediction.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

// The text report `paratwin simulate` prints of a simulated prediction: the heading, then the run
// summary's text.
std::string simulation_report_text(const workloads::Workload& w, const Prediction& p);

// `p` holds a simulation (summary and record).
std::string simulation_heading(const workloads::Workload& w, const Prediction& p);
// The line under the collective table that states the fidelity's approximation of the waiting column,
// or "" where there is none to state.
std::string collective_table_note(const Prediction& p);

}  // namespace paratwin::predict
