#include "common/run_files.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "common/input_error.hpp"

namespace paratwin {

namespace {

namespace fs = std::filesystem;

// A regular file as the kernel knows it: device and inode. A file not there yet is the name it will
// have in its folder (the folder's device and inode), so that ./x.json and x.json, or a link to a file
// still to be written and that file, are one.
struct Identity {
  dev_t device = 0;
  ino_t inode = 0;
  std::string name;  // empty for a file that exists, else its path below the nearest folder that does
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> identity_of(const std::string& path) {
  if (path.empty()) return std::nullopt;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return std::nullopt;  // a device, FIFO or folder: nothing is replaced
    return Identity{st.st_dev, st.st_ino, ""};
  }
  // Not there, or a dangling link: the writer follows links to the file it creates (text_file.cpp).
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) return std::nullopt;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") return std::nullopt;
  // The nearest folder that exists, and the rest of the path below it: a folder still to be made (a
  // search's --emit) holds no input, but two outputs may meet in it.
  fs::path folder = p.parent_path(), rest = name;
  for (;;) {
    if (folder.empty()) folder = ".";
    if (::stat(folder.c_str(), &st) == 0) break;
    if (folder == "." || folder == folder.root_path()) return std::nullopt;
    rest = folder.filename() / rest;
    folder = folder.parent_path();
  }
  if (!S_ISDIR(st.st_mode)) return std::nullopt;
  return Identity{st.st_dev, st.st_ino, rest.lexically_normal().string()};
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  const auto ia = identity_of(a), ib = identity_of(b);
  return ia && ib && *ia == *ib;
}

RunFiles& RunFiles::input(const std::string& option, const std::string& path) {
  if (!path.empty()) inputs_.push_back({option, path});
  return *this;
}

RunFiles& RunFiles::output(const std::string& option, const std::string& path) {
  if (!path.empty()) outputs_.push_back({option, path});
  return *this;
}

void RunFiles::check() const {
  std::vector<std::optional<Identity>> in, out;
  for (const auto& i : inputs_) in.push_back(identity_of(i.path));
  for (const auto& o : outputs_) out.push_back(identity_of(o.path));
  for (size_t k = 0; k < outputs_.size(); ++k) {
    if (!out[k]) continue;
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (in[i] && in[i]->name.empty() && *in[i] == *out[k])
        throw InputError(outputs_[k].option + " " + outputs_[k].path,
                         "is the same file as " + inputs_[i].option + " " + inputs_[i].path +
                             ", an input of this run: the output would replace it; choose another output");
    for (size_t j = 0; j < k; ++j)
      if (out[j] && *out[j] == *out[k])
        throw InputError(outputs_[k].option + " " + outputs_[k].path,
                         "is the same file as " + outputs_[j].option + " " + outputs_[j].path +
                             ", another output of this run: one of them would be lost; give each its own file");
  }
}

}  // namespace paratwin
