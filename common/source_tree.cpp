#include "common/source_tree.hpp"

#include <filesystem>
#include <vector>

#include "common/child_process.hpp"

namespace paratwin {

namespace fs = std::filesystem;

std::string source_path(const std::string& relative) {
  std::vector<fs::path> candidates;
#ifdef PARATWIN_SOURCE_DIR
  candidates.push_back(fs::path(PARATWIN_SOURCE_DIR) / relative);
#endif
  const fs::path self = fs::path(self_executable()).parent_path();
  if (!self.empty()) {
    candidates.push_back(self / ".." / ".." / relative);
    candidates.push_back(self / ".." / relative);
    candidates.push_back(self / ".." / "share" / "paratwin" / relative);
  }
  candidates.push_back(fs::path(relative));
  std::error_code ec;
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) return c.lexically_normal().string();
  return relative;
}

}  // namespace paratwin
