#include "exec/mpi_progress.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace paratwin::exec {

namespace {

constexpr int kMinSleepUs = 50, kCollectiveSleepUs = 1000, kMessageSleepUs = 2000;

std::string mpi_error(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

}  // namespace

MpiProgress::MpiProgress(std::function<double()> clock) : clock_(std::move(clock)), thread_([this] { helper(); }) {
}

MpiProgress::~MpiProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void MpiProgress::submit(MpiWork work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    MPI_Request request = MPI_REQUEST_NULL;
    const bool work_collective = work.collective;
    const int rc = work.launch(&request);
    if (rc != MPI_SUCCESS) throw std::runtime_error("starting " + work.what + ": " + mpi_error(rc));
    active_.push_back(std::move(work));
    requests_.push_back(request);
    ++in_flight_;
    if (!work_collective) return;  // a message waits for the next op boundary or the helper's slow poll
    ++collectives_;
    fresh_ = true;
  }
  wake_.notify_one();
}

bool MpiProgress::poll_locked() {
  if (!error_.empty()) return false;
  if (active_.empty()) return true;
  int count = 0;
  indices_.resize(requests_.size());
  const int rc =
      MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, indices_.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    error_ = "MPI_Testsome failed while " + active_.front().what + " was in flight: " + mpi_error(rc);
    return false;
  }
  if (count <= 0 || count == MPI_UNDEFINED) return true;
  const double now = clock_();
  std::vector<bool> finished(active_.size(), false);
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<size_t>(indices_[static_cast<size_t>(i)]);
    finished[k] = true;
    done_.push_back({active_[k].op, active_[k].start, now});
    if (active_[k].collective) --collectives_;
  }
  in_flight_ -= static_cast<size_t>(count);
  size_t kept = 0;
  for (size_t k = 0; k < active_.size(); ++k)
    if (!finished[k]) {
      active_[kept] = std::move(active_[k]);
      requests_[kept] = requests_[k];
      ++kept;
    }
  active_.resize(kept);
  requests_.resize(kept);
  return true;
}

void MpiProgress::poll() {
  std::lock_guard<std::mutex> lock(mutex_);
  poll_locked();
}

void MpiProgress::collect(std::vector<Finished>& out, bool block) {
  struct Spinning {  // the helper keeps out of the way while this thread polls
    std::atomic<bool>& flag;
    explicit Spinning(std::atomic<bool>& f, bool on) : flag(f) { flag = on; }
    ~Spinning() { flag = false; }
  } spinning(spinning_, block);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!poll_locked()) throw std::runtime_error(error_);
      if (!block || !done_.empty() || in_flight_.load() == 0) {
        out.insert(out.end(), done_.begin(), done_.end());
        done_.clear();
        return;
      }
    }
    // Ranks may share a core (more ranks than cores): let another one run between polls.
    std::this_thread::yield();
  }
}

void MpiProgress::helper() {
  int sleep_us = kMinSleepUs;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (active_.empty())
      wake_.wait(lock, [&] { return stop_ || fresh_; });
    else
      wake_.wait_for(lock, std::chrono::microseconds(sleep_us), [&] { return stop_ || fresh_; });
    if (stop_) return;
    if (spinning_) {  // poll again soon after it stops waiting
      sleep_us = kMinSleepUs;
      fresh_ = false;
      continue;
    }
    const size_t before = in_flight_.load();
    if (!poll_locked()) return;  // collect() reports the error
    // A collective started or completed since the last poll: its rounds are moving, look again soon.
    if (collectives_.load() == 0)
      sleep_us = kMessageSleepUs;
    else if (fresh_ || in_flight_.load() < before)
      sleep_us = kMinSleepUs;
    else
      sleep_us = std::min(kCollectiveSleepUs, 2 * sleep_us);
    fresh_ = false;
  }
}

}  // namespace paratwin::exec
