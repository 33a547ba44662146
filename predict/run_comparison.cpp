#include "predict/run_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/report_text.hpp"

namespace paratwin::predict {

namespace {

std::string collective_name(const CollectiveSummary& c) {
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

// What the two FLOP figures count, each side's recomputation, and which side is a legacy summary.
std::string flops_note(const LabelledRun& a, const LabelledRun& b) {
  auto recomputation = [](const RunSummary& s) { return s.legacy_flops ? std::string("unknown") : s.recomputation; };
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

std::vector<ComparisonRow> comparison_rows(const RunSummary& a, const RunSummary& b) {
  std::vector<ComparisonRow> rows;
  auto both = [&](const char* what, const char* unit, double va, double vb) { rows.push_back({what, unit, va, vb}); };
  both("iteration time", "s", a.iteration_seconds, b.iteration_seconds);
  both("throughput", "tokens/s", a.tokens_per_second, b.tokens_per_second);
  // Model FLOPs do not count recomputation: for one model and batch they follow the throughput.
  // A legacy summary knows only the figure that counted it (hardware); its model figures are absent.
  auto model = [](const RunSummary& s, double v) { return s.legacy_flops ? std::nullopt : std::optional<double>(v); };
  rows.push_back({"model TFLOP/s per device", "TFLOP/s", model(a, a.model_tflops_per_device),
                  model(b, b.model_tflops_per_device)});
  rows.push_back({"model FLOPs: of peak (MFU)", "%", model(a, a.percent_of_peak), model(b, b.percent_of_peak)});
  both("hardware TFLOP/s per device", "TFLOP/s", a.hardware_tflops_per_device, b.hardware_tflops_per_device);
  both("hardware FLOPs: of peak (HFU)", "%", a.percent_of_peak_hardware, b.percent_of_peak_hardware);
  const auto& sa = a.busiest_stage();
  const auto& sb = b.busiest_stage();
  both("busiest stage: compute", "s", sa.compute, sb.compute);
  both("busiest stage: exposed communication", "s", sa.exposed_comm, sb.exposed_comm);
  both("busiest stage: pipeline bubble", "s", sa.bubble, sb.bubble);
  both("busiest stage: other idle", "s", sa.other_idle, sb.other_idle);
  both("memory per rank", "GiB", a.max_bytes_per_rank / (1 << 30), b.max_bytes_per_rank / (1 << 30));
  // Collectives by kind, group and group size, in A's order then B's own.
  std::vector<std::string> order;
  std::map<std::string, std::pair<const CollectiveSummary*, const CollectiveSummary*>> by_name;
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
    auto of = [](const CollectiveSummary* c, double (*f)(const CollectiveSummary&)) {
      return c ? std::optional<double>(f(*c)) : std::nullopt;
    };
    rows.push_back({name + ": calls", "", of(ca, [](const auto& c) { return static_cast<double>(c.count); }),
                    of(cb, [](const auto& c) { return static_cast<double>(c.count); })});
    rows.push_back({name + ": size per call", "B", of(ca, [](const auto& c) { return c.bytes_per_call(); }),
                    of(cb, [](const auto& c) { return c.bytes_per_call(); })});
    rows.push_back({name + ": busbw", "GB/s", of(ca, [](const auto& c) { return c.busbw() / 1e9; }),
                    of(cb, [](const auto& c) { return c.busbw() / 1e9; })});
    rows.push_back({name + ": total", "ms", of(ca, [](const auto& c) { return 1e3 * c.seconds; }),
                    of(cb, [](const auto& c) { return 1e3 * c.seconds; })});
    rows.push_back({name + ": exposed", "ms", of(ca, [](const auto& c) { return 1e3 * c.exposed; }),
                    of(cb, [](const auto& c) { return 1e3 * c.exposed; })});
  }
  return rows;
}

std::string comparison_table(const LabelledRun& a, const LabelledRun& b) {
  const auto rows = comparison_rows(a.second, b.second);
  size_t width = 10;
  for (const auto& r : rows) width = std::max(width, r.what.size() + r.unit.size() + 3);
  std::string out = printed("A  %s: %s on %s, %lld ranks\nB  %s: %s on %s, %lld ranks\n\n", a.first.c_str(),
                            a.second.workload.c_str(), a.second.machine.c_str(), static_cast<long long>(a.second.ranks),
                            b.first.c_str(), b.second.workload.c_str(), b.second.machine.c_str(),
                            static_cast<long long>(b.second.ranks));
  out += printed("  %-*s %14s %14s %14s %9s\n", static_cast<int>(width), "", "A", "B", "B - A", "change");
  for (const auto& r : rows) {
    const std::string what = r.unit.empty() ? r.what : r.what + " [" + r.unit + "]";
    const auto change = r.change_percent();
    const std::string d = difference(r);
    out += printed("  %-*s %14s %14s %14s %9s\n", static_cast<int>(width), what.c_str(), cell(r.a, r.unit).c_str(),
                   cell(r.b, r.unit).c_str(), d.c_str(),
                   d == "0" ? "0 %"
                   : change ? (formatted(*change, "%+.1f") + " %").c_str()
                            : "-");
  }
  return out + flops_note(a, b);
}

nlohmann::json comparison_json(const LabelledRun& a, const LabelledRun& b) {
  nlohmann::json j;
  j["a"] = {{"label", a.first}, {"summary", to_json(a.second)}};
  j["b"] = {{"label", b.first}, {"summary", to_json(b.second)}};
  j["rows"] = nlohmann::json::array();
  for (const auto& r : comparison_rows(a.second, b.second)) {
    nlohmann::json row = {{"what", r.what}, {"unit", r.unit}};
    row["a"] = r.a ? nlohmann::json(*r.a) : nlohmann::json();
    row["b"] = r.b ? nlohmann::json(*r.b) : nlohmann::json();
    const auto change = r.change_percent();
    row["change_percent"] = change ? nlohmann::json(*change) : nlohmann::json();
    j["rows"].push_back(std::move(row));
  }
  return j;
}

}  // namespace paratwin::predict
