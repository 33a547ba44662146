#include "common/path_name.hpp"

namespace paratwin {

const char* const kPathNameRule = "use letters, digits, '-', '_' and '.' only, and not \".\" or \"..\"";

bool is_path_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace paratwin
