#include "predict/child_pool.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace paratwin::predict {

namespace {

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The child's side: runs the work, writes '+' and the JSON result or '-' and the error, and leaves
// with _exit so that nothing of the parent (stdio buffers, MPI, destructors) runs twice.
[[noreturn]] void run_child(int fd, pid_t parent, const std::function<nlohmann::json()>& work) {
#ifdef __linux__
  // A sweep that dies (killed, or crashed) takes its children with it instead of leaving them running.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
#else
  (void)parent;
#endif
  std::string message;
  try {
    message = "+" + work().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    message = std::string("-") + e.what();
  } catch (...) {
    message = "-unknown error";
  }
  write_all(fd, message);
  ::close(fd);
  std::fflush(stderr);
  ::_exit(0);
}

}  // namespace

ChildPool::~ChildPool() {
  for (auto& [pid, child] : running_) {
    ::kill(pid, SIGKILL);
    ::close(child.fd);
    ::waitpid(pid, nullptr, 0);
  }
}

void ChildPool::start(size_t id, const std::function<nlohmann::json()>& work, double timeout_seconds) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (auto& [other, child] : running_) ::close(child.fd);
    run_child(fds[1], parent, work);
  }
  ::close(fds[1]);
  Child child{id, fds[0], {}, 0, {}};
  if (timeout_seconds > 0) {
    child.timeout = timeout_seconds;
    child.deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(std::min(timeout_seconds, 1e9)));
  }
  running_[pid] = std::move(child);
}

int ChildPool::until_deadline(int limit_ms) const {
  const auto now = std::chrono::steady_clock::now();
  int64_t wait = limit_ms < 0 ? -1 : limit_ms;
  for (const auto& [pid, child] : running_) {
    if (child.timeout <= 0) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(child.deadline - now).count() + 1;
    const int64_t ms = std::max<int64_t>(0, left);
    if (wait < 0 || ms < wait) wait = ms;
  }
  return static_cast<int>(std::min<int64_t>(wait, 1 << 30));
}

std::optional<ChildResult> ChildPool::kill_overdue() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [pid, child] : running_) {
    if (child.timeout <= 0 || now < child.deadline) continue;
    // Say whether it was stopped (SIGSTOP, a debugger) rather than slow: /proc/PID/stat's state field.
    bool stopped = false;
    if (FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r")) {
      char text[512] = {};
      const size_t n = std::fread(text, 1, sizeof text - 1, f);
      std::fclose(f);
      const char* paren = std::strrchr(text, ')');
      stopped = n > 0 && paren != nullptr && (paren[2] == 'T' || paren[2] == 't');
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", child.timeout);
    ::kill(pid, SIGKILL);
    const pid_t killed = pid;
    ChildResult r = reap(killed, child);  // erases `child`
    r.ok = false;
    r.value = nullptr;
    r.error = std::string("timed out: the point's process ran ") + seconds + " s (its timeout) without a result" +
              (stopped ? ", stopped (SIGSTOP or a debugger)," : "") + " and was killed";
    return r;
  }
  return std::nullopt;
}

ChildResult ChildPool::reap(pid_t pid, Child& child) {
  ::close(child.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildResult r;
  r.id = child.id;
  if (WIFSIGNALED(status)) {
    r.error = std::string("the point's process died of signal ") + std::to_string(WTERMSIG(status)) + " (" +
              strsignal(WTERMSIG(status)) + ")";
  } else if (child.text.empty()) {
    r.error = "the point's process exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
  } else if (child.text[0] == '-') {
    r.error = child.text.substr(1);
  } else {
    try {
      r.value = nlohmann::json::parse(child.text.substr(1));
      r.ok = true;
    } catch (const nlohmann::json::exception& e) {
      r.error = std::string("the point's process sent an unreadable result: ") + e.what();
    }
  }
  running_.erase(pid);
  return r;
}

std::optional<ChildResult> ChildPool::wait(int timeout_ms) {
  // Read every pipe as data comes (a full pipe would block its child); a closed pipe is a child done.
  while (!running_.empty()) {
    std::vector<pollfd> fds;
    std::vector<pid_t> pids;
    for (const auto& [pid, child] : running_) {
      fds.push_back({child.fd, POLLIN, 0});
      pids.push_back(pid);
    }
    if (auto overdue = kill_overdue()) return overdue;
    const int n = ::poll(fds.data(), fds.size(), until_deadline(timeout_ms));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    if (n == 0) {
      if (auto overdue = kill_overdue()) return overdue;
      if (timeout_ms >= 0) return std::nullopt;
      continue;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Child& child = running_.at(pids[i]);
      char buffer[1 << 16];
      const ssize_t got = ::read(child.fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        child.text.append(buffer, static_cast<size_t>(got));
        continue;
      }
      return reap(pids[i], child);  // end of file (or a read error): the child is done
    }
  }
  return std::nullopt;
}

}  // namespace paratwin::predict
