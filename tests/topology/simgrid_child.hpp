#pragma once
// Runs a SimGrid simulation in a child process. SimGrid allows one Engine per process, and a
// GoogleTest binary run by hand runs all its tests in one process, so every simulation forks: the
// child creates the Engine, configures it as paratwin does, runs `body` (which builds a platform,
// creates actors and calls engine.run()) and writes the doubles `body` returns into a pipe; the
// parent reads them and reaps the child. A child that throws, crashes, fails a gtest assertion or
// runs past kSimulationTimeout fails the calling test with its exit status.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "topology/platform.hpp"

namespace paratwin::test {

// Seconds a child may run before SIGALRM ends it (a hung simulation fails its test, not ctest).
inline constexpr unsigned kSimulationTimeout = 120;

namespace detail {

inline bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The child's side: never returns into GoogleTest.
[[noreturn]] inline void run_child(int fd, const std::function<std::vector<double>()>& body) {
  alarm(kSimulationTimeout);
  int status = 0;
  try {
    // Only warnings and errors: "Configuration change" and similar INFO lines would flood the log.
    xbt_log_control_set("root.thresh:warning");
    int argc = 1;
    char name[] = "topology_tests";
    char* argv[] = {name, nullptr};
    // Never destroyed: the child leaves with _exit, and tearing down a 75,264-host platform costs time.
    auto* engine = new simgrid::s4u::Engine(&argc, argv);
    topology::configure_engine(*engine);
    const std::vector<double> out = body();
    if (::testing::Test::HasFailure()) {
      std::fprintf(stderr, "simulation child: an assertion failed inside the simulation body\n");
      status = 4;
    } else {
      const uint64_t count = out.size();
      if (!write_all(fd, &count, sizeof count) || !write_all(fd, out.data(), out.size() * sizeof(double))) status = 5;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simulation child: %s\n", e.what());
    status = 3;
  } catch (...) {
    std::fprintf(stderr, "simulation child: unknown exception\n");
    status = 3;
  }
  ::close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(status);
}

}  // namespace detail

// Returns what `body` returned in the child, or an empty vector after recording a test failure.
inline std::vector<double> run_simulation(const std::function<std::vector<double>()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return {};
  }
  std::fflush(stdout);  // or the child would print the parent's buffered output again
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return {};
  }
  if (pid == 0) {
    ::close(fds[0]);
    detail::run_child(fds[1], body);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    ADD_FAILURE() << "simulation child killed by signal " << WTERMSIG(status) << " (" << strsignal(WTERMSIG(status))
                  << (WTERMSIG(status) == SIGALRM ? ": ran past " + std::to_string(kSimulationTimeout) + " s" : "")
                  << ")";
    return {};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << "simulation child exited with status " << WEXITSTATUS(status)
                  << " (3: exception, 4: assertion in the body, 5: pipe write; see its stderr above)";
    return {};
  }
  uint64_t count = 0;
  if (bytes.size() < sizeof count) {
    ADD_FAILURE() << "simulation child wrote " << bytes.size() << " bytes, no result";
    return {};
  }
  std::memcpy(&count, bytes.data(), sizeof count);
  if (bytes.size() != sizeof count + count * sizeof(double)) {
    ADD_FAILURE() << "simulation child wrote " << bytes.size() << " bytes for " << count << " results";
    return {};
  }
  std::vector<double> out(count);
  std::memcpy(out.data(), bytes.data() + sizeof count, count * sizeof(double));
  return out;
}

}  // namespace paratwin::test
