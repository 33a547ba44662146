#include "exec/mpi_progress.hpp"

#include <chrono>
#include <stdexcept>

namespace paratwin::exec {

MpiProgress::MpiProgress(std::function<double()> clock) : clock_(std::move(clock)), thread_([this] { run(); }) {
}

MpiProgress::~MpiProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  thread_.join();
}

void MpiProgress::submit(MpiWork work) {
  ++in_flight_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_.push_back(std::move(work));
  }
  work_ready_.notify_one();
}

void MpiProgress::collect(std::vector<Finished>& out, bool block) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (block) done_ready_.wait(lock, [&] { return !done_.empty() || !error_.empty() || in_flight_.load() == 0; });
  if (!error_.empty()) throw std::runtime_error(error_);
  out.insert(out.end(), done_.begin(), done_.end());
  done_.clear();
}

void MpiProgress::run() {
  std::vector<MpiWork> active;
  std::vector<MPI_Request> requests;
  std::vector<int> indices;
  int idle_polls = 0;
  while (true) {
    std::deque<MpiWork> fresh;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (active.empty()) work_ready_.wait(lock, [&] { return stop_ || !queued_.empty(); });
      if (stop_ && queued_.empty() && active.empty()) return;
      fresh.swap(queued_);
    }
    for (auto& w : fresh) {
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = w.launch(&request);
      if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0;
        MPI_Error_string(rc, text, &length);
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = "starting " + w.what + ": " + std::string(text, static_cast<size_t>(length));
        done_ready_.notify_all();
        return;
      }
      active.push_back(std::move(w));
      requests.push_back(request);
    }
    if (active.empty()) continue;
    int count = 0;
    indices.resize(requests.size());
    const int rc =
        MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, indices.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = "MPI_Testsome failed while " + active.front().what + " was in flight";
      done_ready_.notify_all();
      return;
    }
    if (count > 0 && count != MPI_UNDEFINED) {
      const double now = clock_();
      std::vector<bool> finished(active.size(), false);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int i = 0; i < count; ++i) {
          const auto k = static_cast<size_t>(indices[static_cast<size_t>(i)]);
          finished[k] = true;
          done_.push_back({active[k].op, active[k].start, now});
        }
      }
      in_flight_ -= static_cast<size_t>(count);
      done_ready_.notify_all();
      size_t kept = 0;
      for (size_t k = 0; k < active.size(); ++k)
        if (!finished[k]) {
          active[kept] = std::move(active[k]);
          requests[kept] = requests[k];
          ++kept;
        }
      active.resize(kept);
      requests.resize(kept);
      idle_polls = 0;
    } else if (++idle_polls > 64) {
      // Nothing moved for a while: give the core to the compute threads (ranks share cores here).
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

}  // namespace paratwin::exec
