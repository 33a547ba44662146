// Reading a sweep spec (results/sweep/README.md) strictly, with errors that name the file and JSON path.
#include "predict/sweep_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/path_name.hpp"
#include "topology/machine.hpp"

namespace paratwin::predict {

namespace {

constexpr const char* kFormatDoc = "results/sweep/README.md";
constexpr int64_t kMaxGpus = int64_t{1} << 22;  // the workload format's rank limit

std::string item(const std::string& key, size_t i) {
  return key + "[" + std::to_string(i) + "]";
}

// A non-empty list of distinct strings.
std::vector<std::string> distinct_strings(JsonReader& r, const std::string& key) {
  const auto list = r.string_list(key);
  if (list.empty()) r.fail(key, "is empty: list at least one");
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].empty()) r.fail(item(key, i), "is empty");
    for (size_t j = 0; j < i; ++j)
      if (list[j] == list[i]) r.fail(item(key, i), "= \"" + list[i] + "\" repeats " + item(key, j));
  }
  return list;
}

std::filesystem::path relative_to(const std::filesystem::path& folder, const std::string& path) {
  const std::filesystem::path p(path);
  return p.is_absolute() ? p : (folder / p).lexically_normal();
}

// A "configurations" entry. Its sections are checked here only at their top level (so that a misspelt
// section is an error of the spec); what is inside goes to the workload reader for each point, where it
// meets the model it must divide, and a rule it breaks fails that point.
ListedConfiguration read_listed(JsonReader r, const nlohmann::json& entry) {
  ListedConfiguration c;
  c.entry = entry;
  c.label = r.string("label", "");
  JsonReader p = r.object("parallelism");
  if (!r.has("parallelism")) r.fail("parallelism", "is required but missing");
  for (const char* section : {"tensor", "pipeline", "expert", "data"})
    if (p.has(section)) p.object(section);
  if (p.has("sequence_parallel")) p.boolean("sequence_parallel");
  if (p.has("data")) {
    JsonReader data = p.object("data");
    if (data.has("size"))
      data.fail("size", "is set by the sweep (GPUs / model-parallel size): leave it out of a configuration");
    data.integer("zero", 0, 0, 3);
    data.finish();
  }
  p.finish();
  c.parallelism = entry["parallelism"];
  if (r.has("optimizations")) {
    r.object("optimizations");
    c.optimizations = entry["optimizations"];
  }
  c.micro_batch = r.integer("micro_batch", 0, 1, int64_t{1} << 30);
  r.finish();
  return c;
}

}  // namespace

const char* to_string(Scaling s) {
  return s == Scaling::weak ? "weak" : "strong";
}

const char* to_string(ConfigurationMode c) {
  switch (c) {
    case ConfigurationMode::as_is:
      return "as-is";
    case ConfigurationMode::best:
      return "best";
    default:
      return "listed";
  }
}

SweepSpec load_sweep_spec(const std::string& path) {
  return parse_sweep_spec(read_text_file<InputError>(path), path);
}

SweepSpec parse_sweep_spec(const std::string& text, const std::string& path) {
  const nlohmann::json doc = parse_json<InputError>(text, path);
  SweepSpec s;
  s.file = path;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  try {
    JsonReader r(doc, "", kFormatDoc);
    s.name = r.string("name");
    // It names the default output folder: keep it one plain path component.
    if (!is_path_name(s.name))
      r.fail("name", "= \"" + s.name + "\": " + kPathNameRule + " (it names the output folder)");
    s.description = r.string("description", "");

    s.workloads = distinct_strings(r, "workloads");
    for (size_t i = 0; i < s.workloads.size(); ++i) {
      const auto file = relative_to(folder, s.workloads[i]);
      std::error_code ec;
      if (std::filesystem::is_directory(file, ec))
        r.fail(item("workloads", i), "= \"" + s.workloads[i] + "\" is a folder (" + file.string() +
                                         "), not a workload file: list the files in it one by one");
      if (!std::filesystem::is_regular_file(file, ec))
        r.fail(item("workloads", i), "= \"" + s.workloads[i] + "\": no such file (" + file.string() +
                                         "; paths are relative to the spec's folder)");
      s.workload_files.push_back(file.string());
    }

    s.machines = distinct_strings(r, "machines");
    const auto builtins = topology::builtin_machine_names();
    for (size_t i = 0; i < s.machines.size(); ++i) {
      const std::string& m = s.machines[i];
      const bool builtin = std::find(builtins.begin(), builtins.end(), m) != builtins.end();
      const std::string ref = builtin ? m : relative_to(folder, m).string();
      std::error_code ec;  // a name the file system refuses (too long) is no file either
      if (!builtin && !std::filesystem::exists(ref, ec)) {
        std::string known;
        for (const auto& b : builtins) known += (known.empty() ? "" : ", ") + b;
        r.fail(item("machines", i), "= \"" + m + "\" is neither a built-in machine (" + known +
                                        ") nor a machine file (paths are relative to the spec's folder)");
      }
      try {
        topology::resolve_machine(ref);
      } catch (const InputError& e) {
        r.fail(item("machines", i), e.what());
      }
      s.machine_refs.push_back(ref);
      s.machine_texts.push_back(builtin ? "built-in " + m : read_text_file<InputError>(ref));
    }

    s.gpus = r.integer_list("gpus", 1, kMaxGpus);
    if (s.gpus.empty()) r.fail("gpus", "is empty: list at least one GPU count");
    for (size_t i = 1; i < s.gpus.size(); ++i)
      if (s.gpus[i] <= s.gpus[i - 1])
        r.fail(item("gpus", i), "= " + std::to_string(s.gpus[i]) + " is not larger than " + item("gpus", i - 1) +
                                    " = " + std::to_string(s.gpus[i - 1]) + ": list GPU counts in increasing order");

    s.scaling = r.choice("scaling", {"weak", "strong"}) == "weak" ? Scaling::weak : Scaling::strong;

    if (r.has("configurations") && doc["configurations"].is_array()) {
      s.configurations = ConfigurationMode::listed;
      const auto entries = r.objects("configurations");
      for (size_t i = 0; i < entries.size(); ++i) {
        s.listed.push_back(read_listed(entries[i], doc["configurations"][i]));
        // A repeat would be the same points under the same journal keys: a resumed sweep would show
        // one's rows for both.
        for (size_t j = 0; j < i; ++j)
          if (s.listed[j].entry == s.listed[i].entry)
            r.fail(item("configurations", i),
                   "repeats " + item("configurations", j) + ": list each configuration once");
      }
      if (s.listed.empty()) r.fail("configurations", "is empty: list at least one, or use \"as-is\" or \"best\"");
    } else {
      const auto mode = r.choice("configurations", {"as-is", "best"}, "as-is");
      s.configurations = mode == "best" ? ConfigurationMode::best : ConfigurationMode::as_is;
    }

    const auto model = r.choice("model", {"simulate", "analytical", "both"}, "simulate");
    if (model != "analytical") s.models.push_back("simulate");
    if (model != "simulate") s.models.push_back("analytical");
    // "auto" by default, as `paratwin simulate`: a spec of thousands of GPUs without "fold" ran minutes
    // per point, one actor per rank, where simulate folds above 512 ranks by itself.
    s.fidelity = r.choice("fidelity", {"auto", "fast", "exact"}, "auto");
    if (r.has("library")) s.library = r.choice("library", topology::communication_libraries());
    s.fold = r.boolean("fold", false);
    if (s.fold && s.fidelity == "exact")
      r.fail("fold", "folding is part of fast fidelity: set \"fidelity\": \"fast\" or \"auto\"");
    r.finish();
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.path(), e.message());
  }
  return s;
}

}  // namespace paratwin::predict
