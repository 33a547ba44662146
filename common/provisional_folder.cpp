#include "common/provisional_folder.hpp"

#include <system_error>

#include "common/text_file.hpp"

namespace paratwin {

namespace fs = std::filesystem;

ProvisionalFolder::ProvisionalFolder(const std::string& path, const std::string& what) : path_(path) {
  std::error_code ec;
  // The outermost ancestor that does not exist yet: prepare_output_folder creates it and those below.
  for (fs::path p = fs::path(path).lexically_normal(); !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    created_ = p;
    if (p == p.parent_path() || p.filename() == "..") break;
  }
  prepare_output_folder(path, what);
}

ProvisionalFolder::~ProvisionalFolder() {
  if (created_.empty()) return;
  std::error_code ec;
  for (fs::path p = fs::path(path_).lexically_normal(); !p.empty(); p = p.parent_path()) {
    if (!fs::remove(p, ec) || ec) return;  // not empty, or gone: leave it and those above
    if (p == created_) return;
  }
}

}  // namespace paratwin
