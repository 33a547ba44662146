#include "exec/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "exec/op_text.hpp"

namespace paratwin::exec {

double default_timeout(double predicted_iteration_seconds) {
  if (!(predicted_iteration_seconds > 0) || !std::isfinite(predicted_iteration_seconds)) return kUnpredictedTimeout;
  return std::max(kMinTimeout, kTimeoutMargin * predicted_iteration_seconds);
}

Watchdog::Watchdog(const workloads::Program& program, int64_t rank, double timeout, Expired expired)
    : program_(program), rank_(rank), timeout_(timeout), expired_(std::move(expired)) {
  if (timeout_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::step(std::string what) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = std::move(what);
  ops_.clear();
  ++progress_;
}

void Watchdog::waiting(const std::vector<uint32_t>& ops) {
  std::lock_guard<std::mutex> lock(mutex_);
  ops_.assign(ops.begin(), ops.end());
  ++progress_;
}

std::string Watchdog::message(double waited) const {
  const auto seconds = [](const char* format, double value) {
    char text[32];
    std::snprintf(text, sizeof text, format, value);
    return std::string(text);
  };
  std::string s = "rank " + std::to_string(rank_) + " made no progress for " + seconds("%.3g", waited) +
                  " s (--timeout " + seconds("%g", timeout_) + ") in " + step_;
  if (ops_.empty()) return s;
  const auto& role = program_.roles[static_cast<size_t>(program_.role_of(rank_))];
  s += ", waiting on";
  for (size_t i = 0; i < ops_.size(); ++i) {
    const uint32_t index = ops_[i];
    if (index >= role.ops.size()) continue;
    const auto& op = role.ops[index];
    const std::string who = op_counterparts(program_, rank_, op);
    s += (i == 0 ? " " : "; ") + describe_op(program_, op, index) + (who.empty() ? "" : " with " + who);
  }
  return s;
}

void Watchdog::watch() {
  using Clock = std::chrono::steady_clock;
  // Checks often enough to end the job within a tenth of the timeout after it passes.
  const auto nap = std::chrono::duration<double>(std::clamp(timeout_ / 10, 0.01, 1.0));
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t seen = progress_;
  auto since = Clock::now();
  while (!wake_.wait_for(lock, nap, [this] { return stop_; })) {
    const auto now = Clock::now();
    if (progress_ != seen) {
      seen = progress_;
      since = now;
      continue;
    }
    const double waited = std::chrono::duration<double>(now - since).count();
    if (waited < timeout_) continue;
    const std::string text = message(waited);
    lock.unlock();
    expired_(text);
    return;
  }
}

}  // namespace paratwin::exec
