#pragma once
// Writing outputs where the user points them, never half written: a regular file is replaced whole (a
// temporary file renamed over it); a symbolic link is followed and its target replaced; a device, FIFO
// or socket (/dev/stdout, a pipe) is written through. Whatever cannot be written is refused with an
// InputError naming the path and why (the CLI's exit status 2), before any work when it can be.
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace paratwin {

// Throws InputError when `path` cannot receive an output file: it names a folder, its folder does not
// exist or cannot be written, or it is a read-only file. Called before minutes of work, so that a typo
// in an output path costs nothing. `what` names the option ("--json").
void check_output_file(const std::string& path, const std::string& what = "");

// Throws InputError when `path` cannot be (or become) a folder of outputs: it is a file, or it cannot
// be created. Creates it (and its parents) when it does not exist.
void prepare_output_folder(const std::string& path, const std::string& what = "");

// Writes `text` to `path` as the header says. Throws InputError naming `path` when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// An output too large to hold in memory (a trace), written piece by piece while the work runs: into a
// temporary file beside its target (a special target such as /dev/stdout: an unnamed temporary file,
// written through only at the end), which write_files_atomically commits with the outputs of the same
// run, or removes when it or the run fails. A failed write is remembered (the stream stops there) and
// reported by the commit, naming the path. Not committed (an exception, an early return), the
// temporary file goes with the object. A path ending in .gz is gzip-compressed as it is written.
class StreamedOutput {
 public:
  // Throws InputError, like check_output_file, when `path` cannot receive the output.
  StreamedOutput(const std::string& path, const std::string& what = "");
  ~StreamedOutput();
  StreamedOutput(const StreamedOutput&) = delete;
  StreamedOutput& operator=(const StreamedOutput&) = delete;

  std::ostream& stream();
  const std::string& path() const;

  struct State;  // the target and the open temporary (text_file.cpp)

 private:
  std::unique_ptr<State> state_;
  friend void write_files_atomically(const std::vector<std::pair<std::string, std::string>>&,
                                     const std::vector<StreamedOutput*>&);
};

// Writes several outputs all or nothing: every regular file is first written beside its target (the
// streamed ones already are), then the special files are written through, then the regular ones renamed
// into place. A failure before the renames removes every temporary file, so no output of the set is
// written (a special file already written through cannot be taken back).
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files,
                            const std::vector<StreamedOutput*>& streamed = {});

// Writes all of `text` to the open descriptor `fd`, through short writes and signals. Returns 0, or the
// errno of the write that failed (EIO when one wrote nothing).
int write_whole(int fd, const std::string& text);

}  // namespace paratwin
