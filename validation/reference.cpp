#include "validation/reference.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/path_name.hpp"
#include "topology/machine.hpp"

namespace paratwin::validation {

namespace {

const char* kFormatDoc = "results/reference/README.md";

constexpr std::array<Metric, 9> kMetrics = {
    Metric::percent_of_peak,      Metric::iteration_s,      Metric::tflops_per_gpu,
    Metric::model_tflops_per_gpu, Metric::pflops,           Metric::sequences_per_s,
    Metric::tokens_per_s_per_gpu, Metric::pipeline_phase_s, Metric::speedup};

bool is_machine_file(const std::string& ref) {
  return ref.find('/') != std::string::npos || (ref.size() > 5 && ref.substr(ref.size() - 5) == ".json");
}

ReferenceCollective read_collective(JsonReader c) {
  ReferenceCollective out;
  out.kind = c.choice("kind", {"all_gather", "reduce_scatter", "all_reduce"});
  out.bytes = c.number("bytes", std::nullopt, 1, 1e15);
  out.gpus = c.integer("gpus", std::nullopt, 2, int64_t{1} << 22);
  out.library = c.choice("library", topology::communication_libraries());
  out.versus = c.choice("versus", topology::communication_libraries());
  if (out.versus == out.library) c.fail("versus", "= \"" + out.versus + "\" is the library itself");
  c.finish();
  return out;
}

}  // namespace

const char* to_string(Metric m) {
  switch (m) {
    case Metric::percent_of_peak:
      return "percent_of_peak";
    case Metric::iteration_s:
      return "iteration_s";
    case Metric::tflops_per_gpu:
      return "tflops_per_gpu";
    case Metric::model_tflops_per_gpu:
      return "model_tflops_per_gpu";
    case Metric::pflops:
      return "pflops";
    case Metric::sequences_per_s:
      return "sequences_per_s";
    case Metric::tokens_per_s_per_gpu:
      return "tokens_per_s_per_gpu";
    case Metric::pipeline_phase_s:
      return "pipeline_phase_s";
    case Metric::speedup:
      return "speedup";
  }
  return "?";
}

namespace {

// One alternative of a point's sensitivity: edited machine files, or a workload key's values.
Sensitivity read_sensitivity(JsonReader& s, const std::filesystem::path& folder) {
  Sensitivity alt;
  if (s.has("machines")) {
    for (const auto& file : s.string_list("machines")) {
      const std::string resolved = (folder / file).lexically_normal().string();
      if (!is_machine_file(file) || !std::filesystem::exists(resolved))
        s.fail("machines", "\"" + file + "\": no such machine file (" + resolved + ")");
      alt.machines.push_back(resolved);
    }
    if (alt.machines.empty()) s.fail("machines", "must list at least one machine file");
    s.finish();
    return alt;
  }
  alt.key = s.string("key");
  if (alt.key.find('.') == std::string::npos)
    s.fail("key", "= \"" + alt.key + "\": give a dotted path into the workload, e.g. training.global_batch");
  alt.values = s.number_list("values", -1e15, 1e15);
  if (alt.values.empty()) s.fail("values", "must list at least one alternative value");
  s.finish();
  return alt;
}

// One published point; `labels` holds the suite's labels so far. Paths are resolved against `folder`,
// the suite's.
ReferencePoint read_point(JsonReader& p, Metric metric, const std::filesystem::path& folder,
                          std::set<std::string>& labels) {
  ReferencePoint point;
  point.label = p.string("label");
  if (point.label.empty() || !labels.insert(point.label).second)
    p.fail("label", "= \"" + point.label + "\": labels must be non-empty and unique within the suite");
  point.published = p.number("published", std::nullopt, 1e-12, 1e15);
  if (p.has("range")) {
    const auto r = p.number_list("range", 1e-12, 1e15);
    if (r.size() != 2 || r[0] > r[1]) p.fail("range", "must be [low, high] with low <= high");
    point.range = std::array<double, 2>{r[0], r[1]};
    if (point.published < r[0] || point.published > r[1])
      p.fail("published", "must lie inside range (its midpoint, by convention)");
  }
  if (p.boolean("lower_bound", false)) {
    if (point.range) p.fail("lower_bound", "a point has a range or a lower bound, not both");
    point.range = std::array<double, 2>{point.published, std::numeric_limits<double>::infinity()};
  }
  point.where = p.string("where");
  point.note = p.string("note", "");
  point.calibration = p.boolean("calibration", false);
  if (metric == Metric::speedup) {
    point.collective = read_collective(p.object("collective"));
    if (p.has("workload")) p.fail("workload", "a speedup point times one collective: give no workload");
    point.machine = p.string("machine");
  } else {
    if (p.has("collective")) p.fail("collective", "only metric \"speedup\" points time one collective");
    const std::string file = p.string("workload");
    point.workload = (folder / file).lexically_normal().string();
    if (!std::filesystem::exists(point.workload))
      p.fail("workload", "= \"" + file + "\": no such file (" + point.workload + ")");
    point.machine = p.string("machine");
    point.best_configuration = p.choice("configuration", {"as_written", "best"}, "as_written") == "best";
    for (JsonReader s : p.objects("sensitivity")) point.sensitivity.push_back(read_sensitivity(s, folder));
  }
  if (is_machine_file(point.machine)) {
    const std::string file = point.machine;
    point.machine = (folder / file).lexically_normal().string();
    if (!std::filesystem::exists(point.machine))
      p.fail("machine", "= \"" + file + "\": no such file (" + point.machine + ")");
  }
  p.finish();
  return point;
}

}  // namespace

ReferenceSuite load_reference_suite(const std::string& path) {
  const auto doc = parse_json<InputError>(read_text_file<InputError>(path), path);
  ReferenceSuite s;
  s.file = path;
  try {
    if (!doc.is_object())
      throw InputError("", std::string("must be a JSON object (the format is in ") + kFormatDoc + ")");
    JsonReader top(doc, "", kFormatDoc);
    s.name = top.string("suite");
    if (!is_path_name(s.name)) top.fail("suite", "= \"" + s.name + "\": " + kPathNameRule + " (it names output files)");
    if (std::filesystem::path(path).stem().string() != s.name)
      top.fail("suite", "= \"" + s.name + "\" must match the file name (" +
                            std::filesystem::path(path).filename().string() + ")");
    s.title = top.string("title");
    {
      JsonReader src = top.object("source");
      s.cite = src.string("cite", "");
      s.publication = src.string("publication", "");
      if (s.cite.empty() == s.publication.empty())
        src.fail("cite",
                 "give either the source's bibliography key or the publication's title (one of cite, publication)");
      s.where = src.string("where");
      src.finish();
    }
    std::vector<std::string> names;
    for (const Metric m : kMetrics) names.emplace_back(to_string(m));
    const std::string metric = top.choice("metric", names);
    for (const Metric m : kMetrics)
      if (metric == to_string(m)) s.metric = m;
    s.units = top.string("units");
    s.held_fixed = top.string("held_fixed");
    s.assumptions = top.string("assumptions");
    s.end_to_end = top.boolean("end_to_end");
    const auto folder = std::filesystem::path(path).parent_path();
    std::set<std::string> labels;
    for (auto& p : top.objects("points")) s.points.push_back(read_point(p, s.metric, folder, labels));
    if (s.points.empty()) top.fail("points", "must list at least one point");
    top.finish();
  } catch (const InputError& e) {
    throw InputError(path, e.what());
  }
  return s;
}

std::vector<ReferenceSuite> load_reference_dir(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw InputError(dir, "is not a folder of reference suites (run from the repository root, or give --reference)");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(dir, "holds no reference suite (*.json)");
  std::vector<ReferenceSuite> suites;
  for (const auto& f : files) suites.push_back(load_reference_suite(f));
  return suites;
}

std::vector<ReferenceSuite> select_reference_suites(std::vector<ReferenceSuite> all,
                                                    const std::vector<std::string>& names, const std::string& dir) {
  if (names.empty()) return all;
  std::vector<ReferenceSuite> out;
  for (const auto& name : names) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == name; });
    if (it == all.end()) {
      std::string known;
      for (const auto& s : all) known += (known.empty() ? "" : ", ") + s.name;
      throw InputError("--suite", "= " + name + ": no such suite in " + dir + " (" + known + ")");
    }
    out.push_back(*it);
  }
  return out;
}

double relative_error(const ReferencePoint& point, double predicted) {
  if (point.range) {
    const auto [lo, hi] = *point.range;
    if (predicted < lo) return (predicted - lo) / lo;
    if (predicted > hi) return (predicted - hi) / hi;
    return 0;
  }
  return (predicted - point.published) / point.published;
}

}  // namespace paratwin::validation
