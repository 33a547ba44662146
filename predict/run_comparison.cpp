#include "predict/run_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/report_text.hpp"
#include "common/schema_version.hpp"

namespace paratwin::predict {

namespace {

std::string collective_name(const reports::CollectiveSummary& c) {
  return std::string(workloads::to_string(c.kind)) + " " + c.group + " (group size " + std::to_string(c.group_size) +
         ")";
}

// Counts and bytes are whole numbers; the rest 6 significant digits.
std::string cell(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  return formatted(*v, unit.empty() || unit == "B" ? "%.0f" : "%.6g");
}

// B − A, or 0 where the two differ only by rounding (the same figure reached by another sum).
std::string difference(const ComparisonRow& r) {
  if (!r.a || !r.b) return "-";
  const double d = *r.b - *r.a;
  if (std::abs(d) <= 1e-9 * std::max(std::abs(*r.a), std::abs(*r.b))) return "0";
  return formatted(d, r.unit.empty() || r.unit == "B" ? "%+.0f" : "%+.6g");
}

ComparisonRow figures(std::string what, std::string unit, std::optional<double> a, std::optional<double> b) {
  ComparisonRow r;
  r.what = std::move(what);
  r.unit = std::move(unit);
  r.a = a;
  r.b = b;
  return r;
}

// What the two FLOP figures count, each side's recomputation, and which side is a legacy summary.
std::string flops_note(const reports::LabelledRun& a, const reports::LabelledRun& b) {
  auto recomputation = [](const reports::RunSummary& s) {
    return s.legacy_flops ? std::string("unknown") : s.recomputation;
  };
  std::string out = printed(
      "  (model FLOPs: forward + backward without recomputation, so they follow the throughput of one model; "
      "hardware FLOPs\n   add what checkpointing recomputes (A: %s, B: %s); both count the full s×s attention)\n",
      recomputation(a.second).c_str(), recomputation(b.second).c_str());
  for (const auto* side : {&a, &b})
    if (side->second.legacy_flops)
      out += printed(
          "  (%s: %s was saved by an older paratwin, whose model TFLOP/s counted recomputation: shown as hardware "
          "FLOPs)\n",
          side == &a ? "A" : "B", side->first.c_str());
  return out;
}

}  // namespace

std::optional<double> ComparisonRow::change_percent() const {
  if (!a || !b || *a == 0) return std::nullopt;
  return 100 * (*b - *a) / *a;
}

bool out_of_memory(const reports::RunSummary& s) {
  return !s.fits || s.max_bytes_per_rank > s.device_bytes;
}

std::vector<ComparisonRow> comparison_rows(const reports::RunSummary& a, const reports::RunSummary& b) {
  std::vector<ComparisonRow> rows;
  auto both = [&](const char* what, const char* unit, double va, double vb) {
    rows.push_back(figures(what, unit, va, vb));
  };
  both("iteration time", "s", a.iteration_seconds, b.iteration_seconds);
  both("throughput", "tokens/s", a.tokens_per_second, b.tokens_per_second);
  // Model FLOPs do not count recomputation: for one model and batch they follow the throughput.
  // A legacy summary knows only the figure that counted it (hardware); its model figures are absent.
  auto model = [](const reports::RunSummary& s, double v) {
    return s.legacy_flops ? std::nullopt : std::optional<double>(v);
  };
  rows.push_back(figures("model TFLOP/s per device", "TFLOP/s", model(a, a.model_tflops_per_device),
                         model(b, b.model_tflops_per_device)));
  rows.push_back(figures("model FLOPs: of peak (MFU)", "%", model(a, a.percent_of_peak), model(b, b.percent_of_peak)));
  both("hardware TFLOP/s per device", "TFLOP/s", a.hardware_tflops_per_device, b.hardware_tflops_per_device);
  both("hardware FLOPs: of peak (HFU)", "%", a.percent_of_peak_hardware, b.percent_of_peak_hardware);
  const auto& sa = a.busiest_stage();
  const auto& sb = b.busiest_stage();
  both("busiest stage: compute", "s", sa.compute, sb.compute);
  both("busiest stage: exposed communication", "s", sa.exposed_comm, sb.exposed_comm);
  both("busiest stage: pipeline bubble", "s", sa.bubble, sb.bubble);
  both("busiest stage: other idle", "s", sa.other_idle, sb.other_idle);
  // The memory verdict per run, as simulate prints it: a run that does not fit is marked, its times
  // being those of a configuration that cannot run.
  both("memory per rank", "GiB", a.max_bytes_per_rank / (1 << 30), b.max_bytes_per_rank / (1 << 30));
  const bool oom_a = out_of_memory(a), oom_b = out_of_memory(b);
  const std::string mark = !oom_a && !oom_b ? ""
                           : oom_a && oom_b ? "A and B: OUT OF MEMORY"
                           : oom_a          ? "A: OUT OF MEMORY"
                                            : "B: OUT OF MEMORY";
  rows.back().note = mark;
  both("device memory", "GiB", a.device_bytes / (1 << 30), b.device_bytes / (1 << 30));
  ComparisonRow fits = figures("fits in device memory", "", std::nullopt, std::nullopt);
  fits.a_text = oom_a ? "NO: OOM" : "yes";
  fits.b_text = oom_b ? "NO: OOM" : "yes";
  fits.note = mark;
  rows.push_back(std::move(fits));
  // Collectives by kind, group and group size, in A's order then B's own.
  std::vector<std::string> order;
  std::map<std::string, std::pair<const reports::CollectiveSummary*, const reports::CollectiveSummary*>> by_name;
  for (const auto& c : a.collectives) {
    order.push_back(collective_name(c));
    by_name[order.back()].first = &c;
  }
  for (const auto& c : b.collectives) {
    const auto name = collective_name(c);
    if (!by_name.count(name)) order.push_back(name);
    by_name[name].second = &c;
  }
  for (const auto& name : order) {
    const auto [ca, cb] = by_name[name];
    auto of = [](const reports::CollectiveSummary* c, double (*f)(const reports::CollectiveSummary&)) {
      return c ? std::optional<double>(f(*c)) : std::nullopt;
    };
    // The algorithm each run used (the library's choice, or --algorithm's), so that a change of
    // library or algorithm shows where it acted.
    ComparisonRow algorithm = figures(name + ": algorithm", "", std::nullopt, std::nullopt);
    if (ca) algorithm.a_text = ca->algorithm;
    if (cb) algorithm.b_text = cb->algorithm;
    rows.push_back(std::move(algorithm));
    rows.push_back(figures(name + ": calls", "", of(ca, [](const auto& c) { return static_cast<double>(c.count); }),
                           of(cb, [](const auto& c) { return static_cast<double>(c.count); })));
    rows.push_back(figures(name + ": size per call", "B", of(ca, [](const auto& c) { return c.bytes_per_call(); }),
                           of(cb, [](const auto& c) { return c.bytes_per_call(); })));
    rows.push_back(figures(name + ": busbw", "GB/s", of(ca, [](const auto& c) { return c.busbw() / 1e9; }),
                           of(cb, [](const auto& c) { return c.busbw() / 1e9; })));
    rows.push_back(figures(name + ": total", "ms", of(ca, [](const auto& c) { return 1e3 * c.seconds; }),
                           of(cb, [](const auto& c) { return 1e3 * c.seconds; })));
    rows.push_back(figures(name + ": exposed", "ms", of(ca, [](const auto& c) { return 1e3 * c.exposed; }),
                           of(cb, [](const auto& c) { return 1e3 * c.exposed; })));
  }
  return rows;
}

namespace {

// "45.9 GiB per rank of 16 GiB: fits" / "... : OUT OF MEMORY".
std::string memory_verdict(const reports::RunSummary& s) {
  return printed("memory %.3g GiB per rank of %.3g GiB: %s", s.max_bytes_per_rank / (1 << 30),
                 s.device_bytes / (1 << 30), out_of_memory(s) ? "OUT OF MEMORY" : "fits");
}

}  // namespace

std::string comparison_table(const reports::LabelledRun& a, const reports::LabelledRun& b,
                             const std::vector<std::string>& notes) {
  const auto rows = comparison_rows(a.second, b.second);
  size_t width = 10;
  for (const auto& r : rows) width = std::max(width, r.what.size() + r.unit.size() + 3);
  std::string out;
  for (const auto* run : {&a, &b})
    out += printed("%s  %s: %s on %s, %lld ranks%s; %s\n", run == &a ? "A" : "B", run->first.c_str(),
                   run->second.workload.c_str(), run->second.machine.c_str(), static_cast<long long>(run->second.ranks),
                   run->second.framework.empty() ? "" : (", framework " + run->second.framework).c_str(),
                   memory_verdict(run->second).c_str());
  out += printed("\n  %-*s %14s %14s %14s %9s\n", static_cast<int>(width), "", "A", "B", "B - A", "change");
  for (const auto& r : rows) {
    const std::string what = r.unit.empty() ? r.what : r.what + " [" + r.unit + "]";
    std::string line;
    if (r.is_text()) {
      const bool changed = r.a_text && r.b_text && *r.a_text != *r.b_text;
      line = printed("  %-*s %14s %14s %14s %9s", static_cast<int>(width), what.c_str(),
                     r.a_text ? r.a_text->c_str() : "-", r.b_text ? r.b_text->c_str() : "-", "",
                     !r.a_text || !r.b_text ? "-"
                     : changed              ? "changed"
                                            : "same");
    } else {
      const auto change = r.change_percent();
      const std::string d = difference(r);
      line = printed("  %-*s %14s %14s %14s %9s", static_cast<int>(width), what.c_str(), cell(r.a, r.unit).c_str(),
                     cell(r.b, r.unit).c_str(), d.c_str(),
                     d == "0" ? "0 %"
                     : change ? (formatted(*change, "%+.1f") + " %").c_str()
                              : "-");
    }
    out += line + (r.note.empty() ? "" : "   << " + r.note) + "\n";
  }
  out += flops_note(a, b);
  if (!notes.empty()) out += "\n";
  for (const auto& n : notes) out += "  " + n + "\n";
  for (const auto* run : {&a, &b})
    if (out_of_memory(run->second))
      out += printed(
          "\n  %s (%s): OUT OF MEMORY: %.3g GiB per rank of %.3g GiB; this configuration does not fit, "
          "its times are those of a run that cannot start\n",
          run == &a ? "A" : "B", run->first.c_str(), run->second.max_bytes_per_rank / (1 << 30),
          run->second.device_bytes / (1 << 30));
  return out;
}

nlohmann::json comparison_json(const reports::LabelledRun& a, const reports::LabelledRun& b,
                               const std::vector<std::string>& notes) {
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;  // schemas/compare.schema.json
  j["a"] = {{"label", a.first}, {"summary", to_json(a.second)}, {"out_of_memory", out_of_memory(a.second)}};
  j["b"] = {{"label", b.first}, {"summary", to_json(b.second)}, {"out_of_memory", out_of_memory(b.second)}};
  j["rows"] = nlohmann::json::array();
  for (const auto& r : comparison_rows(a.second, b.second)) {
    nlohmann::json row = {{"what", r.what}, {"unit", r.unit}};
    if (r.is_text()) {
      row["a"] = r.a_text ? nlohmann::json(*r.a_text) : nlohmann::json();
      row["b"] = r.b_text ? nlohmann::json(*r.b_text) : nlohmann::json();
      row["changed"] = r.a_text && r.b_text && *r.a_text != *r.b_text;
    } else {
      row["a"] = r.a ? nlohmann::json(*r.a) : nlohmann::json();
      row["b"] = r.b ? nlohmann::json(*r.b) : nlohmann::json();
      const auto change = r.change_percent();
      row["change_percent"] = change ? nlohmann::json(*change) : nlohmann::json();
    }
    if (!r.note.empty()) row["note"] = r.note;
    j["rows"].push_back(std::move(row));
  }
  j["notes"] = notes;
  return j;
}

}  // namespace paratwin::predict
