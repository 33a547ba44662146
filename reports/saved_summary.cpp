#include "reports/saved_summary.hpp"

#include <cmath>
#include <vector>

#include "common/input_error.hpp"
#include "common/json_reader.hpp"

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

namespace {

std::string item(const std::string& key, size_t i) {
  return key + "[" + std::to_string(i) + "]";
}

// A figure that must be above zero: an iteration of no time has no throughput to compare.
double positive(JsonReader& r, const std::string& key, double max) {
  const double v = r.number(key, std::nullopt, 0, max);
  if (v <= 0) r.fail(key, "= 0 is not a run's figure: it must be above 0");
  return v;
}

double seconds(JsonReader& r, const std::string& key) {
  return r.number(key, std::nullopt, 0, kSummaryMaxSeconds);
}

// The key a figure is under: its name since schema version 1, or the one summaries saved before it used
// (when only that one is there); errors name the current one.
std::string named(const JsonReader& r, const std::string& now, const std::string& before) {
  return !r.has(now) && r.has(before) ? before : now;
}

StageSummary stage(JsonReader& r, int64_t ranks) {
  StageSummary s;
  s.stage = r.integer("stage", std::nullopt, 0, ranks - 1);
  s.compute = seconds(r, named(r, "compute_s", "compute"));
  s.exposed_comm = seconds(r, named(r, "exposed_comm_s", "exposed_comm"));
  s.bubble = seconds(r, named(r, "bubble_s", "bubble"));
  s.other_idle = seconds(r, named(r, "other_idle_s", "other_idle"));
  return s;
}

CollectiveSummary collective(JsonReader& r, int64_t ranks) {
  std::vector<std::string> kinds;
  for (int k = 0; k < workloads::kOpKinds; ++k) {
    const auto kind = static_cast<workloads::OpKind>(k);
    if (workloads::is_collective(kind) || workloads::is_p2p(kind)) kinds.emplace_back(workloads::to_string(kind));
  }
  CollectiveSummary c;
  c.kind = *workloads::parse_op_kind(r.choice("kind", kinds));
  c.algorithm = r.string("algorithm");
  c.group = r.string("group");
  c.group_size = r.integer("group_size", std::nullopt, 1, ranks);
  c.count = r.integer("count", std::nullopt, 0, kSummaryMaxCalls);
  c.bytes = r.number("bytes", std::nullopt, 0, kSummaryMaxBytes);
  c.seconds = seconds(r, named(r, "total_s", "seconds"));
  c.exposed = seconds(r, named(r, "exposed_s", "exposed_seconds"));
  // Absent from summaries saved before the arrival skew was told apart.
  const auto waiting = named(r, "waiting_s", "waiting_seconds");
  c.waiting = r.has(waiting) ? seconds(r, waiting) : 0.0;
  const auto call = named(r, "call_s", "call_seconds");
  if (r.has(call)) c.call_seconds = seconds(r, call);
  return c;
}

}  // namespace

RunSummary read_saved_summary(const nlohmann::json& doc, const std::string& file) {
  RunSummary s;
  try {
    JsonReader r(doc, "");
    s.workload = r.string("workload");
    s.machine = r.string("machine");
    s.ranks = r.integer("ranks", std::nullopt, 1, kSummaryMaxRanks);
    s.iteration_seconds = positive(r, named(r, "iteration_s", "iteration_seconds"), kSummaryMaxSeconds);
    s.tokens_per_second =
        r.number(named(r, "tokens_per_s", "tokens_per_second"), std::nullopt, 0, kSummaryMaxTokensPerSecond);
    if (r.has("hardware_tflops_per_gpu") || r.has("hardware_tflops_per_device")) {
      s.hardware_tflops_per_device = r.number(named(r, "hardware_tflops_per_gpu", "hardware_tflops_per_device"),
                                              std::nullopt, 0, kSummaryMaxTflops);
      s.percent_of_peak_hardware = r.number("percent_of_peak_hardware", std::nullopt, 0, kSummaryMaxPercent);
      s.legacy_flops = !r.has("model_tflops_per_gpu") && !r.has("model_tflops_per_device");
      if (!s.legacy_flops) {
        s.model_tflops_per_device =
            r.number(named(r, "model_tflops_per_gpu", "model_tflops_per_device"), std::nullopt, 0, kSummaryMaxTflops);
        s.percent_of_peak = r.number("percent_of_peak", std::nullopt, 0, kSummaryMaxPercent);
        s.recomputation = r.object("flops_convention").choice("recomputation", {"none", "selective", "full"});
      }
    } else {
      // Saved before model and hardware FLOPs were told apart: its "model" figure counted the recomputed
      // forward of full checkpointing (Megatron SC21 eq. 3), so it is a hardware figure.
      s.legacy_flops = true;
      s.hardware_tflops_per_device = r.number("model_tflops_per_device", std::nullopt, 0, kSummaryMaxTflops);
      s.percent_of_peak_hardware = r.number("percent_of_peak", std::nullopt, 0, kSummaryMaxPercent);
    }
    if (r.has("percent_of_empirical_peak"))
      s.percent_of_empirical_peak = r.number("percent_of_empirical_peak", std::nullopt, 0, kSummaryMaxPercent);
    JsonReader bubble = r.object("bubble_fraction");
    // A bubble fraction is bubble over compute: above 1 when a stage idles longer than it computes.
    s.bubble_measured = bubble.number("measured", std::nullopt, 0, kSummaryMaxSeconds);
    s.bubble_analytical = bubble.number("analytical", std::nullopt, 0, kSummaryMaxSeconds);
    if (!r.has("stages")) r.fail("stages", "is required but missing");
    for (JsonReader& st : r.objects("stages")) s.stages.push_back(stage(st, s.ranks));
    if (s.stages.empty()) r.fail("stages", "= []: a run has at least one pipeline stage");
    const std::string rows_key = named(r, "ranks_compute_exposed_bubble_other_s", "ranks_compute_exposed_bubble_other");
    if (!r.has(rows_key)) r.fail(rows_key, "is required but missing");
    const nlohmann::json& rows = doc.at(rows_key);
    if (!rows.is_array()) r.fail(rows_key, "expected an array of [compute, exposed, bubble, other] rows");
    if (static_cast<int64_t>(rows.size()) != s.ranks)
      r.fail(rows_key, "has " + std::to_string(rows.size()) + " rows but \"ranks\" = " + std::to_string(s.ranks) +
                           ": one row per rank");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string at = item(rows_key, i);
      if (!rows[i].is_array() || rows[i].size() != 4)
        r.fail(at, "expected [compute, exposed communication, bubble, other idle] seconds");
      RankRow row;
      double* fields[] = {&row.compute, &row.exposed_comm, &row.bubble, &row.other_idle};
      for (size_t k = 0; k < 4; ++k) {
        const auto& v = rows[i][k];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
            v.get<double>() > kSummaryMaxSeconds)
          r.fail(item(at, k), "= " + v.dump() + " is out of range [0, 1e+09] (seconds)");
        *fields[k] = v.get<double>();
      }
      s.per_rank.push_back(row);
    }
    for (JsonReader& c : r.objects("collectives")) s.collectives.push_back(collective(c, s.ranks));
    JsonReader memory = r.object("memory");
    s.max_bytes_per_rank =
        memory.number(named(memory, "max_bytes_per_gpu", "max_bytes_per_rank"), std::nullopt, 0, kSummaryMaxBytes);
    s.device_bytes = positive(memory, "device_bytes", kSummaryMaxBytes);
    s.fits = memory.boolean("fits");
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.path(), e.message());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, std::string("is not a run summary of paratwin simulate or exec --json: ") + e.what());
  }
  return s;
}

}  // namespace paratwin::reports
