#include "calibration/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "common/input_error.hpp"
#include "common/report_text.hpp"
#include "workloads/program.hpp"

namespace paratwin::calibration {

namespace {

constexpr size_t kExposed = 9, kBubble = 10, kIdle = 11;  // rows taken from the summaries

// The class row of an op kind as the traces name it ("cat"); -1: no time of its own (memory events).
int class_of(const std::string& kind) {
  static const std::map<std::string, int> rows = {{"gemm", 0},          {"elementwise", 1}, {"optimizer", 1},
                                                  {"host_transfer", 1}, {"all_reduce", 2},  {"reduce_scatter", 3},
                                                  {"all_gather", 4},    {"all_to_all", 5},  {"broadcast", 6},
                                                  {"reduce", 7},        {"send", 8},        {"recv", 8}};
  const auto it = rows.find(kind);
  return it == rows.end() ? -1 : it->second;
}

struct Bar {
  int64_t rank = 0;
  int stream = 0;
  double start = 0, end = 0;  // seconds from the iteration's first op
  int row = 0;                // class row
};

// The complete events ("ph": "X") of a Chrome trace; throws InputError naming the file.
std::vector<Bar> read_bars(const nlohmann::json& trace, const std::string& where) {
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    throw InputError(where, "traceEvents: missing: not a Chrome trace written by paratwin simulate or exec");
  std::vector<Bar> bars;
  double origin = INFINITY;
  const auto& events = trace["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string at = "traceEvents[" + std::to_string(i) + "]";
    // The op's kind: args.k (traces since they stream), or cat (older ones). A slice with neither is
    // no op (the idle thread's waits).
    const nlohmann::json* kind = nullptr;
    if (e.contains("args") && e["args"].is_object() && e["args"].contains("k")) kind = &e["args"]["k"];
    if (!kind && e.contains("cat")) kind = &e["cat"];
    if (!kind) continue;
    if (!kind->is_string() || !e.contains("ts") || !e["ts"].is_number() || !e.contains("dur") ||
        !e["dur"].is_number() || !e.contains("pid") || !e["pid"].is_number_integer())
      throw InputError(where, at + ": needs a kind (args.k or cat), ts, dur and pid");
    const int row = class_of(kind->get<std::string>());
    if (row < 0) continue;
    Bar b;
    b.rank = e["pid"].get<int64_t>();
    b.stream = e.value("tid", 0);
    b.start = e["ts"].get<double>() * 1e-6;
    b.end = b.start + e["dur"].get<double>() * 1e-6;
    b.row = row;
    origin = std::min(origin, b.start);
    bars.push_back(b);
  }
  if (bars.empty()) throw InputError(where, "traceEvents: no op events");
  for (auto& b : bars) {
    b.start -= origin;
    b.end -= origin;
  }
  return bars;
}

// Seconds per rank of each class row over the traced ranks, and exposed / bubble / idle from the
// summary's per-rank breakdown.
std::vector<double> class_seconds(const nlohmann::json& summary, const std::vector<Bar>& bars,
                                  const std::string& where) {
  std::vector<double> seconds(class_names().size(), 0);
  std::set<int64_t> ranks;
  for (const auto& b : bars) {
    seconds[static_cast<size_t>(b.row)] += b.end - b.start;
    ranks.insert(b.rank);
  }
  for (size_t r = 0; r < kExposed; ++r) seconds[r] /= static_cast<double>(ranks.size());
  const auto& per_rank = summary.at("ranks_compute_exposed_bubble_other_s");
  if (!per_rank.is_array() || per_rank.empty())
    throw InputError(where, "ranks_compute_exposed_bubble_other_s: must be a non-empty array");
  for (const auto& r : per_rank) {
    if (!r.is_array() || r.size() != 4)
      throw InputError(where, "ranks_compute_exposed_bubble_other_s: every entry must hold 4 numbers");
    seconds[kExposed] += r[1].get<double>() / static_cast<double>(per_rank.size());
    seconds[kBubble] += r[2].get<double>() / static_cast<double>(per_rank.size());
    seconds[kIdle] += r[3].get<double>() / static_cast<double>(per_rank.size());
  }
  return seconds;
}

double relative(double predicted, double measured) {
  if (measured == 0) return predicted == 0 ? 0 : INFINITY;
  return (predicted - measured) / measured;
}

std::string percent(double e) {
  return std::isfinite(e) ? formatted(100 * e, "%+.1f %%") : "—";
}

std::string seconds_text(double s) {
  return formatted(s, "%.4g");
}

}  // namespace

double ClassRow::error() const {
  return relative(predicted, measured);
}

double Comparison::error() const {
  return relative(predicted, measured_median);
}

double Comparison::worst_iteration_error() const {
  double worst = 0;
  for (double m : measured) worst = std::max(worst, std::fabs(relative(predicted, m)));
  return worst;
}

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names = {
      "GEMM",      "other compute", "all-reduce",     "reduce-scatter",        "all-gather", "all-to-all",
      "broadcast", "reduce",        "point-to-point", "exposed communication", "bubble",     "other idle"};
  return names;
}

Comparison compare_runs(const nlohmann::json& predicted_summary, const nlohmann::json& predicted_trace,
                        const nlohmann::json& measured_summary, const nlohmann::json& measured_trace,
                        const std::string& where_predicted, const std::string& where_measured) {
  Comparison c;
  std::vector<double> predicted, measured;
  try {
    for (const auto& [doc, where] :
         {std::pair{&predicted_summary, &where_predicted}, std::pair{&measured_summary, &where_measured}})
      for (const char* key : {"workload", "machine", "ranks", "iteration_s", "ranks_compute_exposed_bubble_other_s"})
        if (!doc->is_object() || !doc->contains(key))
          throw InputError(*where,
                           std::string(key) + ": missing: not a summary written by simulate --json or exec --json");
    // Each timed iteration's seconds (named "iterations" before schema version 1).
    const char* iterations = measured_summary.contains("iterations_s") ? "iterations_s" : "iterations";
    if (!measured_summary.contains(iterations) || !measured_summary[iterations].is_array() ||
        measured_summary[iterations].empty())
      throw InputError(where_measured, "iterations_s: missing: not a summary written by exec --json");
    c.workload = measured_summary["workload"].get<std::string>();
    c.machine = measured_summary["machine"].get<std::string>();
    c.backend = measured_summary.value("backend", "");
    c.ranks = measured_summary["ranks"].get<int64_t>();
    if (predicted_summary["workload"] != measured_summary["workload"])
      throw InputError(where_predicted, "workload = " + predicted_summary["workload"].dump() + ", but " +
                                            where_measured + " measured " + measured_summary["workload"].dump());
    if (predicted_summary["ranks"] != measured_summary["ranks"])
      throw InputError(where_predicted, "ranks = " + predicted_summary["ranks"].dump() + ", but " + where_measured +
                                            " ran on " + measured_summary["ranks"].dump());
    c.predicted = predicted_summary["iteration_s"].get<double>();
    c.measured_median = measured_summary["iteration_s"].get<double>();
    for (const auto& t : measured_summary[iterations]) c.measured.push_back(t.get<double>());
    predicted = class_seconds(predicted_summary, read_bars(predicted_trace, where_predicted), where_predicted);
    measured = class_seconds(measured_summary, read_bars(measured_trace, where_measured), where_measured);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where_measured + " / " + where_predicted, std::string("unexpected value: ") + e.what());
  }
  for (size_t r = 0; r < class_names().size(); ++r)
    if (predicted[r] > 0 || measured[r] > 0) c.classes.push_back({class_names()[r], predicted[r], measured[r]});
  return c;
}

std::string comparison_markdown(const Comparison& c) {
  std::ostringstream md;
  auto sorted = c.measured;
  std::sort(sorted.begin(), sorted.end());
  md << "### " << c.workload << " — " << c.ranks << " ranks, " << (c.backend.empty() ? "" : c.backend + " backend ")
     << "on " << c.machine << "\n\n";
  md << "| | predicted [s] | measured [s] | error |\n|---|---:|---:|---:|\n";
  md << "| iteration (measured: median of " << c.measured.size() << ") | " << seconds_text(c.predicted) << " | "
     << seconds_text(c.measured_median) << " | " << percent(c.error()) << " |\n";
  md << "| fastest / slowest measured iteration | | " << seconds_text(sorted.front()) << " / "
     << seconds_text(sorted.back()) << " | largest against one iteration: " << percent(c.worst_iteration_error())
     << " |\n\n";
  md << "Per op class, seconds per rank in one iteration (measured: the last iteration; communication classes "
        "count time in flight, overlapped or not). Exposed communication, bubble and other idle are the one idle "
        "ledger that the simulator and the executor both keep (workloads/op_walker.hpp): each instant the compute "
        "stream waited is charged to the op on its critical path at that instant, a collective, a pipeline "
        "message or anything else:\n\n";
  md << "| op class | predicted [s] | measured [s] | error |\n|---|---:|---:|---:|\n";
  for (const auto& r : c.classes)
    md << "| " << r.name << " | " << seconds_text(r.predicted) << " | " << seconds_text(r.measured) << " | "
       << percent(r.error()) << " |\n";
  return md.str();
}

std::string comparison_csv(const Comparison& c) {
  std::ostringstream csv;
  csv << "workload,ranks,class,predicted_seconds,measured_seconds,relative_error\n";
  const auto row = [&](const std::string& name, double p, double m) {
    const double e = relative(p, m);
    csv << csv_field(c.workload) << "," << c.ranks << "," << csv_field(name) << "," << fixed_number(p) << ","
        << fixed_number(m) << "," << (std::isfinite(e) ? fixed_number(e) : "") << "\n";
  };
  row("iteration", c.predicted, c.measured_median);
  for (const auto& r : c.classes) row(r.name, r.predicted, r.measured);
  return csv.str();
}

std::string timeline_script(const Comparison& c, const nlohmann::json& predicted_trace,
                            const nlohmann::json& measured_trace, const std::string& png) {
  const auto measured = read_bars(measured_trace, "measured trace");
  const auto predicted = read_bars(predicted_trace, "predicted trace");
  // One row per (rank, stream) that either run used, the same rows in both panels.
  std::set<std::pair<int64_t, int>> lanes;
  std::set<int> present;  // class rows either run used: the key lists those
  double end = 0;
  for (const auto* bars : {&measured, &predicted})
    for (const auto& b : *bars) {
      lanes.insert({b.rank, b.stream});
      present.insert(b.row);
      end = std::max(end, b.end);
    }
  std::map<std::pair<int64_t, int>, int> y;
  std::ostringstream tics;
  for (const auto& lane : lanes) {
    const int index = static_cast<int>(y.size());
    y[lane] = index;
    const bool known = lane.second >= 0 && lane.second < workloads::kStreams;
    tics << (index ? ", " : "")
         << gp_label("rank " + std::to_string(lane.first) + " " +
                     (known ? workloads::to_string(static_cast<workloads::Stream>(lane.second))
                            : "stream " + std::to_string(lane.second)))
         << " " << index;
  }
  static const char* colours[] = {"#4477aa", "#88ccee", "#ee6677", "#228833", "#ccbb44", "#aa3377",
                                  "#66ccee", "#bbbbbb", "#ee7733", "#000000", "#000000", "#000000"};
  std::ostringstream gp;
  gp << "# Generated by paratwin calibrate: the measured (top) and predicted (bottom) timelines of " << c.workload
     << ".\n# Redraw with: gnuplot "
     << "<this file>\n";
  gp << "set terminal pngcairo size 1600," << 260 + 2 * 28 * static_cast<int>(lanes.size()) << " font 'sans,10'\n";
  gp << "set output " << gp_string(png) << "\nset termoption noenhanced\n";  // stream names hold underscores
  for (size_t r = 0; r + 3 < class_names().size(); ++r)
    gp << "set linetype " << r + 1 << " lc rgb " << gp_string(colours[r]) << "\n";
  for (const auto& [name, bars] : {std::pair{"M", &measured}, std::pair{"P", &predicted}}) {
    gp << "$" << name << " << EOD\n";
    for (const auto& b : *bars) {
      char line[128];
      std::snprintf(line, sizeof line, "%.6f %d %.6f 0.38 %d\n", 500 * (b.start + b.end), y[{b.rank, b.stream}],
                    500 * (b.end - b.start), b.row + 1);
      gp << line;
    }
    gp << "EOD\n";
  }
  gp << "set multiplot layout 2,1 title "
     << gp_string(c.workload + " on " + std::to_string(c.ranks) + " ranks of " + c.machine) << "\n";
  gp << "set xrange [0:" << 1000 * end * 1.01 << "]\nset yrange [-0.6:" << lanes.size() - 0.4 << "]\n";
  gp << "set ytics (" << tics.str() << ")\nset xlabel 'milliseconds from the iteration start'\nset grid x\n";
  gp << "set key outside right top\nset style fill solid 1.0 noborder\n";
  const auto panel = [&](const char* data, const std::string& title, bool key) {
    gp << "set title " << gp_string(title) << "\nplot " << data
       << " using 1:2:3:4:5 with boxxyerror lc variable notitle";
    if (key)
      for (int r : present)
        gp << ", keyentry with boxes lc " << r + 1 << " title " << gp_string(class_names()[static_cast<size_t>(r)]);
    gp << "\n";
  };
  panel("$M", "measured (last iteration): " + seconds_text(c.measured.empty() ? 0 : c.measured.back()) + " s", true);
  panel("$P", "predicted: " + seconds_text(c.predicted) + " s", true);
  gp << "unset multiplot\n";
  return gp.str();
}

}  // namespace paratwin::calibration
