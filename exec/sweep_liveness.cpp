#include "exec/sweep_liveness.hpp"

#include <algorithm>
#include <cstdio>

namespace paratwin::exec {

namespace {

constexpr double kBeatSeconds = 1;
constexpr double kDefaultSilence = 60;
constexpr double kLeastSilence = 3;  // a few beats

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

double RankLiveness::silence_limit(double point_timeout) {
  if (point_timeout <= 0) return kDefaultSilence;
  return std::clamp(point_timeout, kLeastSilence, kDefaultSilence);
}

RankLiveness::RankLiveness(const SweepComm& comm, double silence_seconds, int exit_status)
    : comm_(comm),
      silence_(silence_seconds),
      exit_status_(exit_status),
      last_beat_(Clock::now() - std::chrono::hours(1)),
      last_tick_(Clock::now()) {
  const auto now = Clock::now();
  if (comm.rank() != 0) {
    heard_[0] = now;
  } else {
    for (int r = 1; r < comm.size(); ++r) heard_[r] = now;
  }
}

void RankLiveness::tick() {
  if (!comm_.distributed()) return;
  const auto now = Clock::now();
  // This rank was the one paused (stopped and continued, e.g. by mpirun ending the job it stalled):
  // the others' silence meanwhile is its own, not theirs.
  if (seconds(now - last_tick_) > silence_ / 2)
    for (auto& [r, when] : heard_) when = now;
  last_tick_ = now;
  if (seconds(now - last_beat_) >= kBeatSeconds) {
    comm_.beat();
    last_beat_ = now;
  }
  for (const int r : comm_.beats()) heard_[r] = now;
  for (const auto& [r, when] : heard_) {
    const double silent = seconds(now - when);
    if (silent <= silence_) continue;
    std::fprintf(stderr,
                 "paratwin sweep: error (MPI rank %d): rank %d made no progress for %.1f s (stopped or stuck; the "
                 "limit is %g s, from --point-timeout): ending the job; the journal keeps the points that "
                 "finished, and a rerun resumes\n",
                 comm_.rank(), r, silent, silence_);
    std::fflush(stderr);
    comm_.abort(exit_status_);
  }
}

}  // namespace paratwin::exec
