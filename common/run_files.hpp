#pragma once
// The files one run reads and writes, checked together before the work: an output that is one of the
// run's inputs would replace it (a sweep's --out folder holding its spec, `lower -w w.json --json
// w.json`), and two outputs on one file would lose one of them (`--json x.json --trace ./x.json`).
// Paths are compared as files, not as text: device and inode of what exists (symbolic links
// followed), the folder's device and inode and the name for what does not exist yet.
#include <string>
#include <vector>

namespace paratwin {

class RunFiles {
 public:
  // A file the run reads, named by the option that gave it ("--workload", "A", "workloads[0] of --spec
  // s.json"). An empty path, a path naming no file (a built-in machine) and special files are left out.
  RunFiles& input(const std::string& option, const std::string& path);
  // A file the run writes; special files (/dev/stdout, a FIFO) are left out: written through, they
  // replace nothing.
  RunFiles& output(const std::string& option, const std::string& path);
  // Throws InputError naming both options when an output is an input of the run or another output.
  void check() const;

 private:
  struct Named {
    std::string option, path;
  };
  std::vector<Named> inputs_, outputs_;
};

// Whether two paths name the same regular file, or would once written (see above).
bool same_file(const std::string& a, const std::string& b);

}  // namespace paratwin
