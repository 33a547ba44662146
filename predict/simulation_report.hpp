#pragma once
// How `paratwin simulate` and `search` show a SimGrid prediction: the steps of a long run on stderr,
// and the text report.
#include <functional>
#include <string>

#include "predict/prediction.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

// "paratwin simulate: [12.3 s] routing 1024 nodes of frontier" on stderr, the seconds since the call.
std::function<void(const std::string&)> step_log();

// "paratwin: warning: ..." on stderr.
void print_warning(const std::string& what);

// The text report `paratwin simulate` prints of a simulated prediction.
void print_simulation_report(const workloads::Workload& w, const Prediction& p);

}  // namespace paratwin::predict
