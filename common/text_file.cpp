#include "common/text_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <streambuf>

#include "common/input_error.hpp"
#include "common/output_temporaries.hpp"
#include "common/run_files.hpp"

namespace paratwin {

namespace {

namespace fs = std::filesystem;

// Where an output goes, and for a regular file the temporary file written first.
struct Target {
  std::string given;  // as the user wrote it, for messages
  fs::path real;      // symbolic links followed: the file replaced
  bool special = false;
  int descriptor = -1;  // /dev/stdout and the like: this process's own open file, written where it stands
  fs::path temporary;
};

// The descriptor a path names in this process (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N),
// or -1. Opening such a path anew would start at offset 0 of whatever the shell redirected it to, over
// the report already printed; following its link would replace that file. Writing to the descriptor
// itself puts the output where the user's redirection said.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size() || path.size() > prefix.size() + 6) continue;
    const std::string digits = path.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") == std::string::npos) return std::stoi(digits);
  }
  return -1;
}

std::string label(const std::string& path, const std::string& what) {
  return what.empty() ? path : what + " " + path;
}

// Follows a chain of symbolic links, dangling or not, to the path that is to be written. The kernel
// follows links on open(), but a rename would replace the link itself.
fs::path follow_links(const fs::path& path, const std::string& shown) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) throw InputError(shown, "cannot be written: its symbolic link cannot be read (" + ec.message() + ")");
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  throw InputError(shown, "cannot be written: too many levels of symbolic links");
}

Target classify(const std::string& path, const std::string& what) {
  const std::string shown = label(path, what);
  if (path.empty()) throw InputError(what.empty() ? "output" : what, "the file name is empty");
  Target t{path, {}, false, -1, {}};
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (const int fd = own_descriptor(path); fd >= 0 && fs::exists(st)) {
    if ((::fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY) throw InputError(shown, "is open for reading only");
    t.special = true;
    t.descriptor = fd;
    t.real = path;
    return t;
  }
  if (fs::is_directory(st)) throw InputError(shown, "is a folder, not a file: give a file name");
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    // A terminal, pipe, /dev/null or FIFO: written through where it is, never replaced.
    if (::access(path.c_str(), W_OK) != 0)
      throw InputError(shown, std::string("cannot be written: ") + std::strerror(errno));
    t.special = true;
    t.real = path;
    return t;
  }
  t.real = follow_links(path, shown);
  if (fs::exists(st)) {
    // Root may write any file; a file with no write permission for anyone was made read-only on purpose.
    const fs::perms p = st.permissions();
    constexpr fs::perms writable = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
    if ((p & writable) == fs::perms::none || ::access(t.real.c_str(), W_OK) != 0)
      throw InputError(shown, "is read-only: make it writable or choose another file");
  }
  fs::path folder = t.real.parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec))
    throw InputError(shown, "cannot be written: the folder " + folder.string() + " does not exist");
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(
        shown, "cannot be written: the folder " + folder.string() + " is not writable (" + std::strerror(errno) + ")");
  t.temporary = t.real;
  t.temporary += ".tmp-" + std::to_string(::getpid());
  return t;
}

// Writes all of `text` to the open `fd`, closing it when `close` says; the error names the user's path.
void write_fd(int fd, const std::string& text, bool close, const std::string& shown) {
  if (const int error = write_whole(fd, text); error != 0) {
    if (close) ::close(fd);
    throw InputError(shown, std::string("write failed: ") + std::strerror(error));
  }
  if (close && ::close(fd) != 0) throw InputError(shown, std::string("write failed: ") + std::strerror(errno));
}

// Writes `text` to `path` (created or truncated when `create`).
void write_all(const fs::path& path, const std::string& text, bool create, const std::string& shown) {
  const int flags = O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0);
  const int fd = ::open(path.c_str(), flags, 0666);
  if (fd < 0) throw InputError(shown, std::string("cannot be written: ") + std::strerror(errno));
  write_fd(fd, text, true, shown);
}

void write_special(const Target& t, const std::string& text) {
  if (t.descriptor < 0) return write_all(t.real, text, false, t.given);
  std::fflush(nullptr);  // what was printed before comes first
  write_fd(t.descriptor, text, false, t.given);
}

void remove_temporaries(const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    std::error_code ignored;
    if (t.special) continue;
    fs::remove(t.temporary, ignored);
    untrack_temporary(t.temporary.string());
  }
}

int write_bytes(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Hands what the stream writes straight to the descriptor (the writer buffers), gzip-compressed when the
// output's name ends in .gz (Perfetto and chrome://tracing open such traces as they are), and remembers
// the first failure: the commit reports it, and nothing is written after it.
class DescriptorBuffer : public std::streambuf {
 public:
  int fd = -1;
  int error = 0;

  ~DescriptorBuffer() override {
    if (gzip_) deflateEnd(&z_);
  }
  // Level 1: a trace's repetitive JSON shrinks about tenfold at a small cost in time.
  void compress() {
    z_ = z_stream{};
    if (deflateInit2(&z_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) error = ENOMEM;
    gzip_ = error == 0;
  }
  // Ends the gzip stream (a no-op for plain output); before the descriptor is closed or copied.
  void finish() {
    if (!gzip_ || finished_) return;
    finished_ = true;
    deflate_some(nullptr, 0, Z_FINISH);
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (error != 0 || n <= 0) return n;
    if (gzip_)
      deflate_some(s, static_cast<size_t>(n), Z_NO_FLUSH);
    else
      error = write_bytes(fd, s, static_cast<size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }

 private:
  z_stream z_{};
  bool gzip_ = false, finished_ = false;
  // The compressed output's buffer lives here, not on the stack: a simulation's trace is written from
  // inside SimGrid actors, whose stacks are small (128 KiB, topology/platform.hpp).
  static constexpr size_t kOut = size_t{1} << 16;
  std::unique_ptr<char[]> out_;

  void deflate_some(const char* data, size_t size, int flush) {
    if (!out_) out_ = std::make_unique<char[]>(kOut);
    char* out = out_.get();
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = static_cast<uInt>(size);
    int status = Z_OK;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out);
      z_.avail_out = static_cast<uInt>(kOut);
      status = deflate(&z_, flush);
      if (status == Z_STREAM_ERROR) {
        error = EIO;
        return;
      }
      const size_t produced = kOut - z_.avail_out;
      if (produced > 0 && error == 0) error = write_bytes(fd, out, produced);
    } while (error == 0 && (z_.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END)));
  }
};

}  // namespace

int write_whole(int fd, const std::string& text) {
  return write_bytes(fd, text.data(), text.size());
}

struct StreamedOutput::State {
  Target target;
  DescriptorBuffer buffer;
  std::ostream out{&buffer};
  bool done = false;  // committed or discarded

  // Closes the temporary file and, unless committed, removes it.
  void discard() {
    if (done) return;
    done = true;
    if (buffer.fd >= 0) ::close(buffer.fd);
    buffer.fd = -1;
    std::error_code ignored;
    if (target.special) return;
    fs::remove(target.temporary, ignored);
    untrack_temporary(target.temporary.string());
  }
};

StreamedOutput::StreamedOutput(const std::string& path, const std::string& what) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.target = classify(path, what);
  if (s.target.special) {
    // Written through at the commit, so that a failed run writes nothing there: held until then in a
    // file nobody else can open.
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir && *dir ? dir : "/tmp") + "/paratwin-output-XXXXXX";
    s.buffer.fd = ::mkstemp(name.data());
    if (s.buffer.fd < 0)
      throw InputError(label(path, what), std::string("cannot be written: no temporary file: ") + std::strerror(errno));
    ::unlink(name.c_str());
  } else {
    s.target.temporary += ".stream";
    track_temporary(s.target.temporary.string());
    s.buffer.fd = ::open(s.target.temporary.c_str(), O_WRONLY | O_CLOEXEC | O_CREAT | O_TRUNC, 0666);
    if (s.buffer.fd < 0) {
      untrack_temporary(s.target.temporary.string());
      throw InputError(label(path, what), std::string("cannot be written: ") + std::strerror(errno));
    }
  }
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) s.buffer.compress();
}

StreamedOutput::~StreamedOutput() {
  state_->discard();
}

std::ostream& StreamedOutput::stream() {
  return state_->out;
}

const std::string& StreamedOutput::path() const {
  return state_->target.given;
}

void check_output_file(const std::string& path, const std::string& what) {
  classify(path, what);
}

void prepare_output_folder(const std::string& path, const std::string& what) {
  const std::string shown = label(path, what);
  if (path.empty()) throw InputError(what.empty() ? "output folder" : what, "the folder name is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw InputError(shown, "is a file, not a folder");
  if (!fs::exists(st)) {
    fs::create_directories(path, ec);
    if (ec) throw InputError(shown, "the folder cannot be created: " + ec.message());
  }
  if (::access(path.c_str(), W_OK) != 0)
    throw InputError(shown, std::string("the folder is not writable: ") + std::strerror(errno));
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_files_atomically({{path, text}});
}

// Copies a streamed output's unnamed temporary file through to its special target.
static void copy_through(StreamedOutput::State& s, const std::string& shown) {
  const int from = s.buffer.fd;
  if (::lseek(from, 0, SEEK_SET) < 0) throw InputError(shown, std::string("write failed: ") + std::strerror(errno));
  int to = s.target.descriptor;
  if (to < 0) {
    to = ::open(s.target.real.c_str(), O_WRONLY | O_CLOEXEC);
    if (to < 0) throw InputError(shown, std::string("cannot be written: ") + std::strerror(errno));
  } else {
    std::fflush(nullptr);  // what was printed before comes first
  }
  std::string chunk(1 << 20, '\0');
  int error = 0;
  for (;;) {
    const ssize_t n = ::read(from, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0 || (error = write_bytes(to, chunk.data(), static_cast<size_t>(n))) != 0) break;
  }
  if (s.target.descriptor < 0 && ::close(to) != 0 && error == 0) error = errno;
  if (error != 0) throw InputError(shown, std::string("write failed: ") + std::strerror(error));
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files,
                            const std::vector<StreamedOutput*>& streamed) {
  std::vector<Target> targets;
  for (const auto& [path, text] : files) {
    targets.push_back(classify(path, ""));
    targets.back().temporary += "." + std::to_string(targets.size());  // two outputs, one folder, one run
  }
  // Renamed one after the other over one file, all but the last would be lost without a word. The
  // commands name the options at fault before their work (RunFiles); this holds for every caller.
  std::vector<std::string> given;
  for (const auto& [path, text] : files) given.push_back(path);
  for (const StreamedOutput* out : streamed) given.push_back(out->state_->target.given);
  for (size_t i = 0; i < given.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (same_file(given[i], given[j])) {
        for (StreamedOutput* out : streamed) out->state_->discard();
        throw InputError(given[i],
                         "is written twice by this run (also as " + given[j] + "): give each output its own file");
      }
  try {
    for (size_t i = 0; i < files.size(); ++i) {
      const Target& t = targets[i];
      if (t.special) continue;
      track_temporary(t.temporary.string());
      write_all(t.temporary, files[i].second, true, t.given);
      // The replacement keeps the permissions the user gave the file it replaces.
      std::error_code ec;
      const auto old = fs::status(t.real, ec);
      if (fs::exists(old)) fs::permissions(t.temporary, old.permissions(), ec);
    }
    for (StreamedOutput* out : streamed) {
      StreamedOutput::State& s = *out->state_;
      const std::string& shown = s.target.given;
      s.out.flush();
      s.buffer.finish();
      if (s.buffer.error != 0) throw InputError(shown, std::string("write failed: ") + std::strerror(s.buffer.error));
      if (s.target.special) continue;
      const int fd = s.buffer.fd;
      s.buffer.fd = -1;
      if (::close(fd) != 0) throw InputError(shown, std::string("write failed: ") + std::strerror(errno));
      std::error_code ec;
      const auto old = fs::status(s.target.real, ec);
      if (fs::exists(old)) fs::permissions(s.target.temporary, old.permissions(), ec);
    }
    for (size_t i = 0; i < files.size(); ++i)
      if (targets[i].special) write_special(targets[i], files[i].second);
    for (StreamedOutput* out : streamed)
      if (out->state_->target.special) copy_through(*out->state_, out->state_->target.given);
    for (size_t i = 0; i < files.size(); ++i) {
      const Target& t = targets[i];
      if (t.special) continue;
      std::error_code ec;
      fs::rename(t.temporary, t.real, ec);
      if (ec) throw InputError(t.given, "cannot be replaced: " + ec.message());
      untrack_temporary(t.temporary.string());
    }
    for (StreamedOutput* out : streamed) {
      StreamedOutput::State& s = *out->state_;
      if (!s.target.special) {
        std::error_code ec;
        fs::rename(s.target.temporary, s.target.real, ec);
        if (ec) throw InputError(s.target.given, "cannot be replaced: " + ec.message());
        untrack_temporary(s.target.temporary.string());
      }
      s.done = true;
      if (s.buffer.fd >= 0) ::close(s.buffer.fd);
      s.buffer.fd = -1;
    }
  } catch (...) {
    remove_temporaries(targets);
    for (StreamedOutput* out : streamed) out->state_->discard();
    throw;
  }
  // What runs killed outright (SIGKILL, a crash) left beside these targets; interrupted runs remove
  // their own (output_temporaries.hpp).
  for (const Target& t : targets)
    if (!t.special) remove_stale_temporaries(t.real.string());
  for (StreamedOutput* out : streamed)
    if (!out->state_->target.special) remove_stale_temporaries(out->state_->target.real.string());
}

}  // namespace paratwin
