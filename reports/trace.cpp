#include "reports/trace.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "reports/trace_writer.hpp"

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

std::string chrome_trace(const Program& program, const std::vector<OpEvent>& events) {
  std::ostringstream out;
  ChromeTraceWriter writer(program, out, program.workload_name + ": measured");
  std::set<int64_t> ranks;
  for (const auto& e : events) ranks.insert(e.rank);
  for (const int64_t r : ranks) writer.traced(r, {r});
  // Starts and ends in time order, as a run would report them: at one instant, ops that ran for a
  // while end first, then ops start, then the ops that took no time end.
  std::vector<std::tuple<double, int, size_t>> moments;
  for (size_t i = 0; i < events.size(); ++i) {
    const bool instant = events[i].end <= events[i].start;
    moments.emplace_back(events[i].start, 1, i);
    moments.emplace_back(events[i].end, instant ? 2 : 0, i);
  }
  std::sort(moments.begin(), moments.end());
  for (const auto& [at, what, i] : moments) {
    if (what == 1)
      writer.started(events[i].rank, events[i].op, at);
    else
      writer.finished(events[i]);
  }
  writer.finish();
  return out.str();
}

std::vector<int64_t> default_trace_ranks(const Program& program) {
  const Grid& grid = program.grid;
  std::set<int64_t> ranks;
  const int pipe = grid.axis_index("pipe");
  const int64_t stages = pipe >= 0 ? grid.axes()[static_cast<size_t>(pipe)].size : 1;
  for (int64_t s = 0; s < stages; ++s) ranks.insert(pipe >= 0 ? grid.with_coord(0, pipe, s) : 0);
  AxisMask tensor = 0;
  std::vector<AxisMask> tensor_axes;
  for (const Axis& a : grid.axes())
    if (a.name != "expert" && a.name != "pipe" && a.name != "data") {
      tensor |= grid.mask(a.name);
      tensor_axes.push_back(grid.mask(a.name));
    }
  if (tensor != 0 && grid.group_size(tensor) <= kSmallTensorGroup) {
    for (const int64_t r : grid.group(0, tensor)) ranks.insert(r);
  } else {
    for (const AxisMask m : tensor_axes)
      for (const int64_t r : grid.group(0, m)) ranks.insert(r);
  }
  return {ranks.begin(), ranks.end()};
}

}  // namespace paratwin::reports
