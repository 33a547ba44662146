#pragma once
// A run summary as the text `paratwin simulate` and `exec` print after their heading: time, throughput,
// MFU and HFU, the bubble, the stage and collective tables, the memory verdict. Text, not printing: the
// commands print it.
#include <string>
#include <vector>

#include "reports/run_summary.hpp"
#include "workloads/workload.hpp"

namespace paratwin::reports {

// The model and hardware FLOPs lines of a report (MFU, HFU and the conventions), `dtype` naming the peak.
std::string flops_lines(const RunSummary& s, const std::string& dtype);
// The lines after a report's header, as text the caller prints: iteration time, throughput, bubble, the stage and
// collective tables and the memory verdict. `what` ends the out-of-memory warning ("simulated anyway"); `note`, if any,
// is a line under the collective table (an approximation of the run's fidelity).
std::string summary_text(const workloads::Workload& w, const RunSummary& s, const char* what,
                         const std::string& note = "");
// The collective table in nccl-tests' terms: per call size in bytes and own time in µs, algbw and busbw
// in GB/s, then the iteration's total, waiting-for-peers and exposed milliseconds per rank.
std::string collective_table_text(const std::vector<CollectiveSummary>& collectives, const std::string& note = "");

}  // namespace paratwin::reports
