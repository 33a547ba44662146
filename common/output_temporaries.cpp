#include "common/output_temporaries.hpp"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace paratwin {

namespace {

// Fixed storage, so that a signal handler reads it without allocating or locking. A run has a few
// streamed outputs at most; one past the slots is left to the next run's sweep.
struct Slot {
  std::atomic<bool> used{false};
  pid_t owner = 0;  // a forked child inherits the slots but must not remove its parent's files
  char path[PATH_MAX] = {};
};
constexpr size_t kSlots = 16;
Slot slots[kSlots];
std::mutex slots_mutex;  // between threads that track and untrack; the handler does not take it

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction before[NSIG];

void on_signal(int signal) {
  remove_output_temporaries();
  // What the signal did before: its handler, or the default (the process ends by the signal, and the
  // shell sees 128 + its number). Blocked while this handler runs, it is delivered when it returns.
  ::sigaction(signal, &before[signal], nullptr);
  ::raise(signal);
}

void install_handlers() {
  for (const int signal : kSignals) {
    struct sigaction old {};
    if (::sigaction(signal, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;  // nohup's choice stays
    before[signal] = old;
    struct sigaction mine {};
    mine.sa_handler = on_signal;
    sigfillset(&mine.sa_mask);
    ::sigaction(signal, &mine, nullptr);
  }
  std::atexit(remove_output_temporaries);
}

}  // namespace

void track_temporary(const std::string& path) {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
  if (path.size() >= PATH_MAX) return;
  const std::lock_guard<std::mutex> lock(slots_mutex);
  for (Slot& s : slots) {
    if (s.used.load()) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.owner = ::getpid();
    s.used.store(true);
    return;
  }
}

void untrack_temporary(const std::string& path) {
  const std::lock_guard<std::mutex> lock(slots_mutex);
  for (Slot& s : slots)
    if (s.used.load() && s.owner == ::getpid() && path == s.path) s.used.store(false);
}

void remove_output_temporaries() {
  const pid_t self = ::getpid();
  for (Slot& s : slots)
    if (s.used.load() && s.owner == self) {
      ::unlink(s.path);
      s.used.store(false);
    }
}

void remove_stale_temporaries(const std::string& target) {
  namespace fs = std::filesystem;
  const fs::path t(target);
  const fs::path folder = t.parent_path().empty() ? fs::path(".") : t.parent_path();
  const std::string prefix = t.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
    if (digits == 0 || digits > 9) continue;  // a PID has 1 to 7 digits (pid_max is at most 2^22)
    const std::string suffix = rest.substr(digits);
    const bool ours =
        suffix.empty() || suffix == ".stream" ||
        (suffix.size() > 1 && suffix[0] == '.' && suffix.find_first_not_of("0123456789", 1) == std::string::npos);
    if (!ours) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, digits)));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    if (fs::is_regular_file(fs::symlink_status(entry.path(), ignored))) fs::remove(entry.path(), ignored);
  }
}

}  // namespace paratwin
