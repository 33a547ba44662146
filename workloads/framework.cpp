#include "workloads/framework.hpp"

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "workloads/error.hpp"

namespace paratwin::workloads {

namespace {

struct Builtin {
  const char* name;
  const char* text;
};

const Builtin kBuiltins[] = {
#include "builtin_frameworks.inc"
};

const char* const kFormatDoc = "workloads/README.md";

Framework parse_profile(const Builtin& b) {
  const std::string source = std::string("workloads/frameworks/") + b.name + ".json";
  const auto doc = parse_json<WorkloadError>(b.text, source);
  try {
    JsonReader r(doc, "", kFormatDoc);
    Framework f;
    f.profile = r.string("name");
    if (f.profile != b.name) r.fail("name", "must match the file name (" + std::string(b.name) + ")");
    f.description = r.string("description");
    r.string_list("sources");
    JsonReader k = r.object("kernel_efficiency");
    f.kernel_efficiency = k.number("value", std::nullopt, 1e-3, 1.0);
    f.source = k.string("source");
    k.finish();
    if (r.has("optimizer_bytes_per_param")) {
      JsonReader o = r.object("optimizer_bytes_per_param");
      f.optimizer_bytes_per_param = o.number("value", std::nullopt, 1, 1e4);
      o.string("source");
      o.finish();
    }
    r.finish();
    return f;
  } catch (const InputError& e) {
    throw WorkloadError(source + ": " + e.path(), e.message());
  }
}

}  // namespace

std::vector<std::string> builtin_framework_names() {
  std::vector<std::string> out;
  for (const auto& b : kBuiltins) out.emplace_back(b.name);
  return out;
}

Framework builtin_framework(const std::string& name) {
  for (const auto& b : kBuiltins)
    if (name == b.name) return parse_profile(b);
  std::string known;
  for (const auto& b : kBuiltins) known += (known.empty() ? "" : ", ") + std::string(b.name);
  throw WorkloadError("framework.profile", "\"" + name + "\" is not a shipped framework profile (" + known + ")");
}

Framework read_framework(JsonReader r) {
  std::string name = r.string("profile", "generic");
  Framework f;
  try {
    f = builtin_framework(name);
  } catch (const WorkloadError&) {
    std::string known;
    for (const auto& n : builtin_framework_names()) known += (known.empty() ? "" : ", ") + n;
    r.fail("profile", "\"" + name + "\" is not a shipped framework profile (" + known + ")");
  }
  if (r.has("kernel_efficiency")) {
    f.kernel_efficiency = r.number("kernel_efficiency", std::nullopt, 1e-3, 1.0);
    f.source = "set in the workload";
  }
  if (r.has("optimizer_bytes_per_param"))
    f.optimizer_bytes_per_param = r.number("optimizer_bytes_per_param", std::nullopt, 0, 1e4);
  r.finish();
  return f;
}

nlohmann::json to_json(const Framework& f) {
  return {{"profile", f.profile},
          {"kernel_efficiency", f.kernel_efficiency},
          {"optimizer_bytes_per_param", f.optimizer_bytes_per_param}};
}

}  // namespace paratwin::workloads
