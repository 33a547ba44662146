#include "common/text_file.hpp"

#include <filesystem>
#include <fstream>

#include "common/input_error.hpp"

namespace paratwin {

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  std::filesystem::path tmp = target;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "cannot be written (check the directory exists)");
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw InputError(path, "write failed");
    }
  }
  std::filesystem::rename(tmp, target);
}

}  // namespace paratwin
