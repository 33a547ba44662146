// Enumerating a sweep's points and evaluating one: the point's workload (scaled to its GPU count and
// configured as the spec says), then predicted by SimGrid or the analytical model.
#include "predict/sweep_point.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "common/json_file.hpp"
#include "predict/predict.hpp"
#include "sim/search.hpp"

namespace paratwin::predict {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// FNV-1a, 64 bits: stable across compilers and runs, unlike std::hash.
std::string fnv1a_hex(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016" PRIx64, h);
  return out;
}

std::string point_key(const SweepSpec& spec, const SweepPoint& p, const std::string& workload_text) {
  nlohmann::json d = {{"workload", spec.workloads[p.workload]},
                      {"workload_text", workload_text},
                      {"machine", spec.machines[p.machine]},
                      {"machine_text", spec.machine_texts[p.machine]},
                      {"gpus", p.gpus},
                      {"scaling", to_string(spec.scaling)},
                      {"configurations", to_string(spec.configurations)},
                      {"model", p.model},
                      {"library", spec.library}};
  if (spec.configurations == ConfigurationMode::listed) {
    d["entry"] = spec.listed[p.configuration].entry;
  }
  if (p.model == "simulate") {  // the analytical model has neither
    // The fidelity the point runs at: "auto" and the same choice written out share their results.
    const auto choice = point_fidelity(spec, p);
    d["fidelity"] = choice.fidelity;
    d["fold"] = choice.fold;
  }
  return fnv1a_hex(d.dump());
}

}  // namespace

FidelityChoice point_fidelity(const SweepSpec& spec, const SweepPoint& point) {
  return choose_fidelity(point.gpus, spec.fidelity, spec.fold);
}

namespace {

// Ranks of one model replica in a workload `parallelism` object (tensor degree × experts × stages).
// Read leniently: the workload reader reports whatever is malformed, with its path, afterwards.
int64_t model_parallel_size(const nlohmann::json& p) {
  const auto get = [](const nlohmann::json& object, const char* key) -> int64_t {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer()) return 1;
    return std::max<int64_t>(1, object[key].get<int64_t>());
  };
  const nlohmann::json none = nlohmann::json::object();
  const auto& tensor = p.contains("tensor") ? p["tensor"] : none;
  const std::string mode = tensor.is_object() && tensor.contains("mode") && tensor["mode"].is_string()
                               ? tensor["mode"].get<std::string>()
                               : "none";
  int64_t degree = 1;
  if (mode == "megatron") degree = get(tensor, "size");
  if (mode == "optimus") degree = get(tensor, "q") * get(tensor, "q");
  if (mode == "axonn") degree = get(tensor, "x") * get(tensor, "y") * get(tensor, "z");
  return degree * get(p.contains("expert") ? p["expert"] : none, "size") *
         get(p.contains("pipeline") ? p["pipeline"] : none, "stages");
}

// Weak scaling keeps the batch per GPU (so per data-parallel replica, at the workload's model-parallel
// size); strong scaling keeps the global batch.
int64_t scaled_global_batch(const workloads::Workload& base, Scaling scaling, int64_t gpus) {
  const int64_t batch = base.training.global_batch;
  if (scaling == Scaling::strong) return batch;
  const int64_t ranks = base.total_ranks();
  if ((batch * gpus) % ranks != 0)
    throw InputError("", "weak scaling: the global batch " + std::to_string(batch) + " × " + std::to_string(gpus) +
                             " GPUs / the workload's " + std::to_string(ranks) + " GPUs is not an integer");
  return batch * gpus / ranks;
}

struct Configured {
  workloads::Workload workload;
  std::string label;
};

// The workload's own parallelism ("as-is") or a listed one, with data parallelism filling the GPUs.
Configured configure_fixed(const SweepSpec& spec, const SweepPoint& p, const workloads::Workload& base,
                           int64_t global_batch) {
  nlohmann::json doc = workloads::to_json(base);
  std::string source = spec.workload_files[p.workload];
  if (spec.configurations == ConfigurationMode::listed) {
    const auto& listed = spec.listed[p.configuration];
    doc["parallelism"] = listed.parallelism;
    if (!listed.optimizations.is_null()) doc["optimizations"] = listed.optimizations;
    if (listed.micro_batch > 0) doc["training"]["micro_batch"] = listed.micro_batch;
    source += " with " + spec.file + " configurations[" + std::to_string(p.configuration) + "]";
  }
  const int64_t mp = model_parallel_size(doc["parallelism"]);
  if (p.gpus % mp != 0)
    throw InputError("gpus", "= " + std::to_string(p.gpus) + " is not a multiple of the model-parallel size " +
                                 std::to_string(mp) + " (tensor × expert × pipeline ranks of one replica)");
  doc["parallelism"]["data"]["size"] = p.gpus / mp;
  doc["training"]["global_batch"] = global_batch;
  Configured c;
  c.workload = workloads::parse_workload(doc, source);
  c.label = spec.configurations == ConfigurationMode::listed && !spec.listed[p.configuration].label.empty()
                ? spec.listed[p.configuration].label
                : workloads::configuration_label(c.workload);
  return c;
}

void fill_from(nlohmann::json& row, const Prediction& p) {
  row["iteration_s"] = p.iteration_seconds;
  row["tokens_per_s"] = p.tokens_per_second;
  row["model_tflops_per_gpu"] = p.model_tflops_per_device;
  row["percent_of_peak"] = p.percent_of_peak;
  row["hardware_tflops_per_gpu"] = p.hardware_tflops_per_device;
  row["percent_of_peak_hardware"] = p.percent_of_peak_hardware;
  row["compute_s"] = p.compute_seconds;
  row["exposed_comm_s"] = p.exposed_comm_seconds;
  row["bubble_s"] = p.bubble_seconds;
  row["memory_gib_per_gpu"] = p.memory_bytes_per_rank / kGiB;
  row["fits"] = p.fits;
}

// The columns every row has, whatever happens to the point, the workload named `name`.
nlohmann::json identity_row(const SweepSpec& spec, const SweepPoint& p, const std::string& name) {
  nlohmann::json row;
  row["workload"] = name;
  row["machine"] = spec.machines[p.machine];
  row["gpus"] = p.gpus;
  row["model"] = p.model;
  switch (spec.configurations) {
    case ConfigurationMode::listed: {
      const auto& label = spec.listed[p.configuration].label;
      row["configuration"] = label.empty() ? "configurations[" + std::to_string(p.configuration) + "]" : label;
      break;
    }
    default:
      row["configuration"] = to_string(spec.configurations);
  }
  for (const char* column : {"nodes", "global_batch", "iteration_s", "tokens_per_s", "model_tflops_per_gpu",
                             "percent_of_peak", "hardware_tflops_per_gpu", "percent_of_peak_hardware", "compute_s",
                             "exposed_comm_s", "bubble_s", "memory_gib_per_gpu", "fits"})
    row[column] = nullptr;
  row["status"] = "ok";
  row["error"] = "";
  return row;
}

// The same, the workload named as its file says.
nlohmann::json identity_row(const SweepSpec& spec, const SweepPoint& p) {
  std::string name = spec.workloads[p.workload];
  try {
    name = workloads::load_workload_file(spec.workload_files[p.workload]).name;
  } catch (const std::exception&) {  // the point reports it; the row is named by the spec's path
  }
  return identity_row(spec, p, name);
}

}  // namespace

std::string row_problem(const SweepSpec& spec, const SweepPoint& point, const nlohmann::json& row) {
  if (!row.is_object()) return std::string("row is ") + row.type_name() + ", not an object";
  // The workload's name is not compared: reading its file for every journal row would tell nothing more.
  const auto expected = identity_row(spec, point, spec.workloads[point.workload]);
  for (const auto& [key, value] : row.items())
    if (!expected.contains(key)) return "row." + key + " is not a column of a sweep";
  for (const auto& [key, value] : expected.items())
    if (!row.contains(key)) return "row." + key + " is missing";
  const auto string = [&](const char* key) { return row[key].is_string(); };
  for (const char* key : {"workload", "machine", "model", "configuration", "status", "error"})
    if (!string(key)) return std::string("row.") + key + " is not a string";
  if (row["machine"] != expected["machine"] || row["gpus"] != expected["gpus"] || row["model"] != expected["model"])
    return "row is for " + row["machine"].dump() + ", " + row["gpus"].dump() + " GPUs, " + row["model"].dump() +
           " but the point is " + expected["machine"].dump() + ", " + expected["gpus"].dump() + " GPUs, " +
           expected["model"].dump();
  const auto& status = row["status"];
  if (status == "failed") return row["error"].get<std::string>().empty() ? "row.error is empty for a failed point" : "";
  if (status != "ok") return "row.status = " + status.dump() + " is neither \"ok\" nor \"failed\"";
  for (const char* key : {"nodes", "global_batch"})
    if (!row[key].is_number_integer() || row[key].get<int64_t>() < 1)
      return std::string("row.") + key + " is not a positive integer";
  for (const char* key :
       {"iteration_s", "tokens_per_s", "model_tflops_per_gpu", "percent_of_peak", "hardware_tflops_per_gpu",
        "percent_of_peak_hardware", "compute_s", "exposed_comm_s", "bubble_s", "memory_gib_per_gpu"}) {
    const auto& v = row[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      return std::string("row.") + key + " is not a finite, non-negative number";
  }
  if (row["iteration_s"].get<double>() <= 0) return "row.iteration_s is not positive";
  if (!row["fits"].is_boolean()) return "row.fits is not true or false";
  return "";
}

std::vector<SweepPoint> enumerate_points(const SweepSpec& spec) {
  std::vector<std::string> texts;
  for (const auto& file : spec.workload_files) {
    try {
      texts.push_back(read_text_file<InputError>(file));
    } catch (const InputError&) {
      texts.emplace_back();  // unreadable: its points fail and say so
    }
  }
  std::vector<SweepPoint> points;
  for (size_t w = 0; w < spec.workloads.size(); ++w)
    for (size_t m = 0; m < spec.machines.size(); ++m)
      for (size_t c = 0; c < spec.configuration_count(); ++c)
        for (const auto& model : spec.models)
          for (const int64_t gpus : spec.gpus) {
            SweepPoint p;
            p.index = points.size();
            p.workload = w;
            p.machine = m;
            p.configuration = c;
            p.gpus = gpus;
            p.model = model;
            p.key = point_key(spec, p, texts[w]);
            points.push_back(std::move(p));
          }
  return points;
}

nlohmann::json failed_row(const SweepSpec& spec, const SweepPoint& point, const std::string& error) {
  nlohmann::json row = identity_row(spec, point);
  row["status"] = "failed";
  row["error"] = error;
  return row;
}

nlohmann::json evaluate_point(const SweepSpec& spec, const SweepPoint& p) {
  nlohmann::json row = identity_row(spec, p);
  try {
    const auto base = workloads::load_workload_file(spec.workload_files[p.workload]);
    const auto machine = load_machine(spec.machine_refs[p.machine]);
    const int64_t nodes = nodes_for(machine, p.gpus);
    if (nodes > machine.network.nodes)
      throw InputError("gpus", "= " + std::to_string(p.gpus) + " exceeds " + machine.name + "'s " +
                                   std::to_string(machine.total_devices()) + " devices");
    row["nodes"] = nodes;
    const int64_t global_batch = scaled_global_batch(base, spec.scaling, p.gpus);
    row["global_batch"] = global_batch;
    const std::string library = library_for(machine, spec.library);

    Configured configured;
    if (spec.configurations == ConfigurationMode::best) {
      workloads::Workload scaled = base;  // search replaces its parallelism
      scaled.training.global_batch = global_batch;
      sim::SearchOptions options;
      options.gpus = p.gpus;
      options.model.library = library;
      if (const auto why = sim::families_problem(scaled, options.families); !why.empty()) throw InputError("", why);
      const auto result = sim::search(scaled, topology_for(machine, p.gpus, library), options);
      if (result.ranked.empty())
        throw InputError("", "no configuration of " + std::to_string(p.gpus) + " GPUs fits in memory (" +
                                 std::to_string(result.rejected.size()) + " too large, " +
                                 std::to_string(result.invalid.size()) + " invalid)");
      configured.workload = result.ranked.front().workload;
      configured.label = std::string(sim::to_string(result.ranked.front().family)) + " " + result.ranked.front().label;
    } else {
      configured = configure_fixed(spec, p, base, global_batch);
    }
    row["configuration"] = configured.label;

    PointOptions options;
    options.model = p.model == "simulate" ? Model::simulate : Model::analytical;
    options.nodes = nodes;
    options.library = library;
    options.fidelity = spec.fidelity;
    options.fold = spec.fold;
    fill_from(row, predict(configured.workload, machine, options));
  } catch (const std::exception& e) {
    row["status"] = "failed";
    row["error"] = e.what();
  }
  return row;
}

}  // namespace paratwin::predict
