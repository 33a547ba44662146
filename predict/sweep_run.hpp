#pragma once
// Running a sweep's points: which are left to compute after the journal of an earlier run, each MPI
// rank's share of them, the points evaluated in child processes several at once, and the line that
// reports each finished point.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/sweep_journal.hpp"
#include "predict/sweep_point.hpp"
#include "predict/sweep_spec.hpp"

namespace paratwin::predict {

struct SweepResume {
  std::vector<nlohmann::json> rows;  // by point index: the journal's rows, null for the points to compute
  std::vector<int64_t> todo;         // the points to compute, by index, in spec order
  size_t skipped = 0;                // finished earlier
  // Rows of the journal that failed row_problem(): each point is computed again, and the warning says why.
  std::vector<std::string> warnings;
};

// The points the journal finished keep their rows; the failed ones are computed again when
// `retry_failed`, and so is every point whose journal row is not a well-formed row of that point.
SweepResume resume_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepJournal& journal,
                         bool retry_failed);

// Rank `rank`'s share of `todo` among `ranks`: every ranks-th point, starting at its own rank.
std::vector<size_t> share_of(const std::vector<int64_t>& todo, int rank, int ranks);

// How long a point may run before it is killed and reported failed (a child stopped or stuck would
// otherwise hold the sweep forever): `paratwin sweep --point-timeout`, and the default, by the point: a
// floor for a search ("best"), start-up and the analytical model, and for a simulated point a generous
// multiple of SimGrid's cost per rank at the point's fidelity. Measured on a 2-core machine: 8,192 ranks
// folded in 3-5 s, exact at 8,192 ranks an ETA of 3.4 h (1.5 s per rank), one actor per rank (fast)
// between the two; the allowances are about 3x those.
constexpr double kPointTimeoutFloor = 600;
constexpr double kPointTimeoutPerRankExact = 5;
constexpr double kPointTimeoutPerRankFast = 2;
constexpr double kPointTimeoutPerRankFolded = 0.2;
double default_point_timeout(const SweepSpec& spec, const SweepPoint& point);

struct SweepRunOptions {
  int jobs = 1;               // points at once
  double point_timeout = -1;  // seconds; negative: default_point_timeout; 0: none
  // Called as each point's child starts, when set.
  std::function<void(size_t)> started;
};

// Evaluates the points `mine` (indices into `points`) in child processes, options.jobs at once, handing
// each row to `done(index, row, 0)` (a child that dies or runs past its timeout gives a failed row).
// Between children, `poll` runs when given (rank 0 hears the other ranks' rows there), until `finished`
// says all is in.
void run_sweep_points(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::vector<size_t>& mine,
                      const SweepRunOptions& options, const std::function<void(size_t, nlohmann::json, int)>& done,
                      const std::function<bool()>& poll, const std::function<bool()>& finished);

// "starting point 3 of 8: GPT-20B on frontier, 1024 GPUs, simulate: fast fidelity, folded (auto: above 512
// ranks); timeout 1624 s": said as a point starts, since one point of thousands of GPUs takes minutes.
std::string sweep_start_line(size_t number, size_t total, const SweepSpec& spec, const SweepPoint& point,
                             double timeout);

// "[3/8] GPT-20B on frontier, 64 GPUs, simulate: 1.23 s/iteration; elapsed 4.0 s, ETA 6.7 s", or the
// point's error where it failed: `done` of `total` points, the seconds since this run started and the
// time left at that pace.
std::string sweep_progress(size_t done, size_t total, const SweepPoint& point, const nlohmann::json& row,
                           double elapsed, double eta);

}  // namespace paratwin::predict
