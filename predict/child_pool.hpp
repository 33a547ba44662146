#pragma once
// Runs work in child processes, several at once (a sweep's points, search's simulations): SimGrid allows one engine per
// process, and a point that crashes must not take the sweep down. Each child sends its row back through a pipe.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace paratwin::predict {

struct ChildResult {
  size_t id = 0;
  bool ok = false;
  nlohmann::json value;  // when ok
  std::string error;     // otherwise: how the child died
};

class ChildPool {
 public:
  explicit ChildPool(int jobs) : jobs_(jobs < 1 ? 1 : jobs) {}
  ~ChildPool();  // kills the children still running
  ChildPool(const ChildPool&) = delete;
  ChildPool& operator=(const ChildPool&) = delete;

  bool full() const { return static_cast<int>(running_.size()) >= jobs_; }
  bool idle() const { return running_.empty(); }

  // Forks a child that runs `work` and exits; `id` names its result. Throws std::runtime_error when
  // no process can be created. A child still running `timeout_seconds` after its start (> 0; stopped,
  // swapped out or stuck alike) is killed and gives a failed result that says so.
  void start(size_t id, const std::function<nlohmann::json()>& work, double timeout_seconds = 0);

  // The next child to finish (or to be killed past its timeout), waiting at most `timeout_ms` (negative:
  // until one does); nothing when none finished in time or none is running.
  std::optional<ChildResult> wait(int timeout_ms);

 private:
  struct Child {
    size_t id;
    int fd;  // read end of its pipe
    std::string text;
    double timeout = 0;                              // seconds; 0: none
    std::chrono::steady_clock::time_point deadline;  // when timeout > 0
  };
  ChildResult reap(pid_t pid, Child& child);
  // The child past its deadline, killed: its failed result. Nothing when none is past.
  std::optional<ChildResult> kill_overdue();
  // Milliseconds until the nearest deadline, at most `limit_ms` (negative: no limit).
  int until_deadline(int limit_ms) const;

  int jobs_;
  std::map<pid_t, Child> running_;
};

}  // namespace paratwin::predict
