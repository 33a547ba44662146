#pragma once
// An output folder made before a run that may end with nothing to put in it (`search --emit` when no
// configuration ranks): checked and created up front, so that a bad path fails before minutes of work,
// and removed again, with the parents it had to create, unless the run keeps it.
#include <filesystem>
#include <string>

namespace paratwin {

class ProvisionalFolder {
 public:
  // prepare_output_folder(path, what): throws InputError naming `what` when it cannot be a folder.
  ProvisionalFolder(const std::string& path, const std::string& what);
  // Removes the folders this one created, each only while it is empty.
  ~ProvisionalFolder();
  ProvisionalFolder(const ProvisionalFolder&) = delete;
  ProvisionalFolder& operator=(const ProvisionalFolder&) = delete;

  void keep() { created_.clear(); }

 private:
  std::filesystem::path created_;  // the outermost folder created here; empty: none
  std::filesystem::path path_;
};

}  // namespace paratwin
