#include "predict/sweep_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/input_error.hpp"
#include "common/text_file.hpp"

namespace paratwin::predict {

namespace {

std::runtime_error failure(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

// A new file's directory entry is durable only once the directory itself is synced.
void sync_directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

SweepJournal::SweepJournal(const std::string& path, bool restart) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw failure(path, "cannot open the journal");
  // A POSIX record lock belongs to this process only: the children a sweep forks do not hold it, so
  // the lock is gone the moment this process dies, however it dies.
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &lock) != 0) {
    ::close(fd_);
    throw InputError(path,
                     "another paratwin sweep is writing this folder (its journal is locked): wait for it, or "
                     "give another --out");
  }
  sync_directory_of(path);
  if (restart && ::ftruncate(fd_, 0) != 0) throw failure(path, "cannot empty the journal");

  std::string text;
  char buffer[1 << 16];
  ::lseek(fd_, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd_, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw failure(path, "cannot read the journal");
    text.append(buffer, static_cast<size_t>(n));
  }
  size_t begin = 0;
  for (size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    try {
      // Only the entry's frame is checked here; what a row must hold is the sweep's to judge.
      // A NUL would end the parser's text early: a line padded with zeros by a crash is torn, not whole.
      if (text.find('\0', begin) < end) throw std::invalid_argument("a NUL byte");
      const auto entry = nlohmann::json::parse(text.substr(begin, end - begin));
      if (!entry.is_object() || !entry.contains("row")) throw std::invalid_argument("not an entry");
      finished_[entry.at("key").get<std::string>()] = entry.at("row");
    } catch (const std::exception&) {
      ++dropped_;
    }
  }
  // A crash in the middle of a write leaves a line without its newline: cut it, or the next entry
  // would be glued to it.
  if (begin < text.size()) {
    ++dropped_;
    if (::ftruncate(fd_, static_cast<off_t>(begin)) != 0) throw failure(path, "cannot cut a torn line");
  }
}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void SweepJournal::record(const std::string& key, const nlohmann::json& row, int rank) {
  const nlohmann::json entry = {{"key", key}, {"rank", rank}, {"row", row}};
  if (const int error = write_whole(fd_, entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
    errno = error;
    throw failure(path_, "cannot append");
  }
  if (::fsync(fd_) != 0) throw failure(path_, "cannot sync the journal");
  finished_[key] = row;
}

}  // namespace paratwin::predict
