// The machines shipped in topology/machines/, compiled into the binary so that a name works from any
// directory; a path to a file works wherever a name does.
#include <filesystem>

#include "topology/communication_libraries.hpp"
#include "topology/machine.hpp"

namespace paratwin::topology {

namespace {

struct Builtin {
  const char* name;
  const char* text;
};

const Builtin kBuiltins[] = {
#include "builtin_machines.inc"
};

}  // namespace

const std::vector<std::string>& communication_libraries() {
#define PARATWIN_LIBRARY_NAME(identifier, name) name,
  static const std::vector<std::string> libraries = {PARATWIN_COMMUNICATION_LIBRARIES(PARATWIN_LIBRARY_NAME)};
#undef PARATWIN_LIBRARY_NAME
  return libraries;
}

std::vector<std::string> builtin_machine_names() {
  std::vector<std::string> out;
  for (const auto& b : kBuiltins) out.emplace_back(b.name);
  return out;
}

Machine resolve_machine(const std::string& name_or_path) {
  for (const auto& b : kBuiltins)
    if (name_or_path == b.name) {
      Machine m = parse_machine_text(b.text, std::string("topology/machines/") + b.name + ".json");
      return m;
    }
  // Without an error code, a name the file system refuses (a component over 255 bytes) would throw a
  // filesystem_error instead of this reader's error.
  std::error_code ec;
  if (std::filesystem::exists(name_or_path, ec)) return load_machine_file(name_or_path);
  std::string known;
  for (const auto& b : kBuiltins) known += (known.empty() ? "" : ", ") + std::string(b.name);
  throw MachineError(name_or_path, "is neither a built-in machine (" + known + ") nor a machine file");
}

std::string machine_file(const std::string& name_or_path) {
  for (const auto& b : kBuiltins)
    if (name_or_path == b.name) return "";
  return name_or_path;
}

}  // namespace paratwin::topology
