#include "validation/reference_points.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/report_text.hpp"
#include "predict/child_pool.hpp"
#include "predict/collective.hpp"
#include "predict/predict.hpp"
#include "sim/search.hpp"
#include "topology/machine.hpp"
#include "workloads/error.hpp"
#include "workloads/workload.hpp"

namespace paratwin::validation {

// What this library drives of the prediction library (predict/).
using predict::ChildPool;
using predict::ChildResult;
using predict::library_for;
using predict::Model;
using predict::PointOptions;
using predict::Prediction;
using predict::topology_for;

namespace {

workloads::OpKind op_kind(const std::string& name) {
  using workloads::OpKind;
  const auto kind = workloads::parse_op_kind(name);
  if (!kind || !(*kind == OpKind::all_gather || *kind == OpKind::reduce_scatter || *kind == OpKind::all_reduce))
    throw InputError("", "unknown collective kind " + name);
  return *kind;
}

Model model_named(const std::string& model) {
  return model == "analytical" ? Model::analytical : Model::simulate;
}

// Seconds of one collective of the point with `library`, SimGrid or closed form.
double collective_seconds(const ReferenceCollective& c, const topology::Machine& machine, const std::string& library,
                          const std::string& model) {
  return predict::collective_seconds(machine, op_kind(c.kind), c.bytes, c.gpus, library, model_named(model));
}

// A workload metric from either model's prediction of one iteration. The papers' FLOP rates are [narayanan2021megatron]
// eq. (3)'s, which counts full recomputation as a fourth forward pass ([narayanan2021megatron] §5.1: "8TP/nX"), and
// every published run of those suites recomputed fully: they are hardware FLOPs, and are compared with
// the prediction's hardware FLOPs (results/reference/README.md, Metrics). Sources that publish model FLOPs
// (MFU: Megatron-LM's num_floating_point_operations, PaLM's 6N + 12·l·h·s) are compared with the model's.
double metric_value(Metric metric, const Prediction& p, const workloads::Workload& w) {
  switch (metric) {
    case Metric::percent_of_peak:
      return p.percent_of_peak_hardware;
    case Metric::iteration_s:
      return p.iteration_seconds;
    case Metric::tflops_per_gpu:
      return p.hardware_tflops_per_device;
    case Metric::model_tflops_per_gpu:
      return p.model_tflops_per_device;
    case Metric::pflops:
      return p.hardware_tflops_per_device * static_cast<double>(w.total_ranks()) / 1e3;
    case Metric::sequences_per_s:
      return static_cast<double>(w.training.global_batch) / p.iteration_seconds;
    case Metric::tokens_per_s_per_gpu:
      return static_cast<double>(w.training.global_batch) * static_cast<double>(w.model.seq_len) / p.iteration_seconds /
             static_cast<double>(w.total_ranks());
    case Metric::pipeline_phase_s:
      return p.iteration_seconds - p.exposed_data_seconds;
    case Metric::speedup:
      break;
  }
  throw std::logic_error("a speedup is not a workload metric");
}

// What the authors did where a paper says the configuration was chosen with a performance model: the
// configuration paratwin's analytical model ranks first among those of the workload's family (AxoNN's
// 4-D grid, Megatron's tensor x pipeline x data, TED) that fit in memory, varying what their models
// varied: the parallel axes (and PTD-P's micro-batch), not what the published run fixed.
workloads::Workload best_configuration(const workloads::Workload& w, const topology::Machine& machine) {
  sim::SearchOptions o;
  o.gpus = w.total_ranks();
  o.families = {w.model.moe.enabled()                                    ? sim::Family::ted
                : w.parallel.tensor.mode == workloads::TensorMode::axonn ? sim::Family::four_d
                                                                         : sim::Family::ptdp};
  // The axes only, as the authors' models chose them: recomputation, ZeRO stage, sequence parallelism and
  // the schedule stay the run's own (published), and only PTD-P's configurations carry a micro-batch.
  o.vary.micro_batch = o.families.front() == sim::Family::ptdp;
  o.vary.chunks = o.vary.sequence_parallel = o.vary.checkpointing = o.vary.zero = false;
  const auto found = sim::search(w, topology_for(machine, o.gpus, library_for(machine, "")), o);
  if (found.ranked.empty())
    throw std::runtime_error("no " + std::string(sim::to_string(o.families.front())) + " configuration of " +
                             std::to_string(o.gpus) + " GPUs fits in " + machine.name + "'s device memory");
  return found.ranked.front().workload;
}

// One model's prediction of a point: the value in the suite's metric, the seconds behind it, whether
// the configuration fits in device memory.
struct PointValue {
  double value = 0, iteration = 0;
  bool fits = true;
};

// A collective speedup: the point's library over the one it is compared with.
PointValue predict_collective(const ReferenceCollective& c, const topology::Machine& machine,
                              const std::string& model) {
  double mine = 0, theirs = 0;
  if (model == "analytical") {
    mine = collective_seconds(c, machine, c.library, model);
    theirs = collective_seconds(c, machine, c.versus, model);
  } else {  // one SimGrid engine per process: each library in its own child
    ChildPool pool(2);
    pool.start(0, [&] { return nlohmann::json(collective_seconds(c, machine, c.library, model)); });
    pool.start(1, [&] { return nlohmann::json(collective_seconds(c, machine, c.versus, model)); });
    for (int i = 0; i < 2; ++i) {
      const auto r = pool.wait(-1);
      if (!r || !r->ok) throw std::runtime_error(r ? r->error : "a simulation did not finish");
      (r->id == 0 ? mine : theirs) = r->value.get<double>();
    }
  }
  return {theirs / mine, mine, true};
}

// A workload's metric; SimGrid at the fidelity `paratwin simulate` would choose for its rank count.
PointValue predict_workload(Metric metric, const workloads::Workload& w, const topology::Machine& machine,
                            const std::string& model) {
  PointOptions options;
  options.model = model_named(model);
  const auto p = predict::predict(w, machine, options);
  return {metric_value(metric, p, w), p.iteration_seconds, p.fits};
}

// The analytical model's side of a simulated point; its failure is reported beside the simulation's.
nlohmann::json analytical_side(const std::function<PointValue(const std::string&)>& predict_with) {
  try {
    const auto p = predict_with("analytical");
    return {{"value", p.value}, {"iteration_s", p.iteration}, {"status", "ok"}, {"error", ""}};
  } catch (const std::exception& e) {
    return {{"value", nullptr}, {"iteration_s", nullptr}, {"status", "failed"}, {"error", e.what()}};
  }
}

// The workload JSON with the dotted `key` set to `value` (an integer where the value is whole).
nlohmann::json with_value(nlohmann::json doc, const std::string& key, double value) {
  nlohmann::json* node = &doc;
  size_t start = 0;
  for (size_t dot = key.find('.'); dot != std::string::npos; start = dot + 1, dot = key.find('.', start)) {
    const std::string part = key.substr(start, dot - start);
    if (!node->is_object() || !node->contains(part))
      throw InputError("", "sensitivity key " + key + ": the workload has no " + key.substr(0, dot));
    node = &(*node)[part];
  }
  if (!node->is_object()) throw InputError("", "sensitivity key " + key + " does not name an object's member");
  const std::string leaf = key.substr(start);
  if (value == std::floor(value) && std::abs(value) < 9e15)
    (*node)[leaf] = static_cast<int64_t>(value);
  else
    (*node)[leaf] = value;
  return doc;
}

// The workload as a point predicts it: the kernel efficiency a fit is trying for its stack, and the
// configuration the analytical model ranks first where the point asks for it.
workloads::Workload prepared(workloads::Workload w, const ReferencePoint& point, const topology::Machine& machine,
                             const ReferenceOptions& options) {
  if (const auto it = options.kernel_efficiency.find(w.framework.profile); it != options.kernel_efficiency.end())
    w.framework.set_kernel_efficiency(it->second);
  if (point.best_configuration) w = best_configuration(w, machine);
  return w;
}

// The point predicted with each value its source does not publish (ReferencePoint::sensitivity).
std::vector<double> sensitivity_values(const ReferenceSuite& suite, const ReferencePoint& point,
                                       const topology::Machine& machine, const std::string& model,
                                       const ReferenceOptions& options) {
  std::vector<double> values;
  if (point.sensitivity.empty()) return values;
  const auto doc =
      parse_json<workloads::WorkloadError>(read_text_file<workloads::WorkloadError>(point.workload), point.workload);
  // One SimGrid engine per process: each alternative in a child of its own.
  const auto in_child = [&](const std::string& what, const std::function<double()>& f) {
    ChildPool pool(1);
    pool.start(0, [&] { return nlohmann::json(f()); });
    const auto r = pool.wait(-1);
    if (!r || !r->ok)
      throw std::runtime_error(what + ": " + (r ? r->error : std::string("the prediction did not finish")));
    values.push_back(r->value.get<double>());
  };
  for (const auto& s : point.sensitivity)
    for (const auto& file : s.machines) {
      const auto other = topology::resolve_machine(file);
      const auto w = prepared(workloads::load_workload_file(point.workload), point, other, options);
      in_child("machine " + file, [&] { return predict_workload(suite.metric, w, other, model).value; });
    }
  for (const auto& s : point.sensitivity)
    for (const double v : s.values) {
      auto alt_doc = with_value(doc, s.key, v);
      // A configuration the search re-chooses need only be valid: the written data size keeps
      // the rank count, the micro-batch follows the batch.
      if (point.best_configuration && s.key == "training.global_batch") {
        const int64_t data = alt_doc["parallelism"]["data"].value("size", int64_t{1});
        const auto batch = static_cast<int64_t>(v);
        if (batch >= data && batch % data == 0) alt_doc["training"]["micro_batch"] = batch / data;
      }
      const auto alt =
          prepared(workloads::parse_workload(alt_doc, point.workload + " with " + s.key + " = " + formatted(v, "%.6g")),
                   point, machine, options);
      in_child(s.key + " = " + formatted(v, "%.6g"),
               [&] { return predict_workload(suite.metric, alt, machine, model).value; });
    }
  return values;
}

nlohmann::json predict_one(const ReferenceSuite& suite, const ReferencePoint& point, const std::string& model,
                           const ReferenceOptions& options) {
  nlohmann::json row = {{"model", model},      {"value", nullptr}, {"iteration_s", nullptr},
                        {"configuration", ""}, {"fits", true},     {"status", "ok"},
                        {"error", ""}};
  try {
    const std::string machine_ref = machine_reference(point.machine, options);
    const auto machine = topology::resolve_machine(machine_ref);
    workloads::Workload w;
    std::function<PointValue(const std::string&)> predict_with;
    if (point.collective) {
      const auto& c = *point.collective;
      row["configuration"] = c.kind + " " + c.library + " vs " + c.versus;
      predict_with = [&](const std::string& m) { return predict_collective(c, machine, m); };
    } else {
      w = prepared(workloads::load_workload_file(point.workload), point, machine, options);
      row["stack"] = w.framework.profile;
      row["configuration"] = workloads::configuration_label(w);
      predict_with = [&](const std::string& m) { return predict_workload(suite.metric, w, machine, m); };
    }
    if (model != "analytical") row["analytical"] = analytical_side(predict_with);
    // Before this process starts its own SimGrid engine, which a forked child must not inherit.
    std::vector<double> values;
    if (options.sensitivity) values = sensitivity_values(suite, point, machine, model, options);
    const auto p = predict_with(model);
    if (!values.empty()) {
      values.push_back(p.value);
      row["range"] = {*std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end())};
    }
    row["value"] = p.value;
    row["iteration_s"] = p.iteration;
    row["fits"] = p.fits;
  } catch (const std::exception& e) {
    row["status"] = "failed";
    row["error"] = e.what();
  }
  return row;
}

// The analytical model's prediction of a row's point: its own for an analytical row, the one made beside
// the simulation for a simulated row.
std::optional<double> analytical_value(const ValidationRow& r, const nlohmann::json& prediction) {
  if (r.model == "analytical") return r.predicted;
  const auto side = prediction.find("analytical");
  if (side == prediction.end() || !(*side)["value"].is_number()) return std::nullopt;
  return (*side)["value"].get<double>();
}

}  // namespace

std::vector<ReferenceTask> reference_tasks(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                           const std::string& model, int64_t simulate_up_to) {
  std::vector<ReferenceTask> tasks;
  for (size_t s = 0; s < suites.size(); ++s)
    for (size_t p = 0; p < suites[s].points.size(); ++p)
      tasks.push_back({s, p, model != "auto" ? model : gpus[s][p] <= simulate_up_to ? "simulate" : "analytical"});
  return tasks;
}

PointGpus point_gpus(const std::vector<ReferenceSuite>& suites) {
  PointGpus out;
  for (const auto& suite : suites) {
    auto& gpus = out.emplace_back();
    for (const auto& p : suite.points) {
      if (p.collective) {
        gpus.push_back(p.collective->gpus);
        continue;
      }
      try {
        gpus.push_back(workloads::load_workload_file(p.workload).total_ranks());
      } catch (const std::exception&) {
        gpus.push_back(0);
      }
    }
  }
  return out;
}

std::vector<ValidationRow> to_rows(const std::vector<ReferenceSuite>& suites, const PointGpus& gpus,
                                   const std::vector<ReferenceTask>& tasks,
                                   const std::vector<nlohmann::json>& predictions) {
  std::vector<ValidationRow> rows;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    const auto& p = predictions[i];
    ValidationRow r;
    r.suite = &suites[t.suite];
    r.point = &suites[t.suite].points[t.point];
    r.model = t.model;
    r.gpus = gpus[t.suite][t.point];
    r.configuration = p.value("configuration", "");
    r.stack = p.value("stack", "");
    r.fits = p.value("fits", true);
    if (p["status"] == "ok" && p["value"].is_number()) {
      r.predicted = p["value"].get<double>();
      r.iteration = p["iteration_s"].get<double>();
    } else {
      r.error = p.value("error", "failed");
    }
    r.analytical = analytical_value(r, p);
    if (p.contains("range") && p["range"].is_array())
      r.predicted_range = std::array<double, 2>{p["range"][0].get<double>(), p["range"][1].get<double>()};
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string machine_reference(const std::string& machine, const ReferenceOptions& options) {
  if (options.machines.empty() || machine.find('/') != std::string::npos) return machine;
  const auto file = std::filesystem::path(options.machines) / (machine + ".json");
  return std::filesystem::exists(file) ? file.string() : machine;
}

void check_machine_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError("--machines", "= " + dir + " is not a folder");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  if (ec) throw InputError("--machines", "= " + dir + " cannot be listed: " + ec.message());
  std::sort(files.begin(), files.end());
  // A file replaces the built-in machine its file name names: a copy whose "name" was left as another
  // machine's (or edited to one) would apply where nobody meant it, or nowhere.
  for (const auto& file : files) {
    const auto machine = topology::load_machine_file(file.string());
    if (machine.name != file.stem().string())
      throw InputError("--machines", file.string() + ": \"name\" = \"" + machine.name +
                                         "\" but the file replaces the machine its file name says (" +
                                         file.stem().string() + "): name the file " + machine.name +
                                         ".json, or the machine " + file.stem().string());
  }
}

std::vector<nlohmann::json> predict_points(const std::vector<ReferenceSuite>& suites,
                                           const std::vector<ReferenceTask>& tasks, const ReferenceOptions& options) {
  std::vector<nlohmann::json> out(tasks.size());
  ChildPool pool(options.jobs);
  size_t next = 0, done = 0;
  const auto finish = [&](const ChildResult& r) {
    const auto& t = tasks[r.id];
    const auto& point = suites[t.suite].points[t.point];
    if (r.ok) {
      out[r.id] = r.value;
    } else {
      out[r.id] = {{"model", t.model}, {"value", nullptr},   {"iteration_s", nullptr}, {"configuration", ""},
                   {"fits", true},     {"status", "failed"}, {"error", r.error}};
    }
    ++done;
    if (options.progress)
      std::fprintf(stderr, "  [%zu/%zu] %s: %s (%s)%s\n", done, tasks.size(), suites[t.suite].name.c_str(),
                   point.label.c_str(), t.model.c_str(), out[r.id]["status"] == "ok" ? "" : " failed");
  };
  while (done < tasks.size()) {
    while (next < tasks.size() && !pool.full()) {
      const size_t id = next++;
      pool.start(id, [&, id] {
        const auto& task = tasks[id];
        return predict_one(suites[task.suite], suites[task.suite].points[task.point], task.model, options);
      });
    }
    if (auto r = pool.wait(-1)) finish(*r);
  }
  return out;
}

}  // namespace paratwin::validation
