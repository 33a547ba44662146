#include "predict/sweep_run.hpp"

#include <chrono>
#include <thread>

#include "common/report_text.hpp"
#include "predict/child_pool.hpp"

namespace paratwin::predict {

SweepResume resume_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepJournal& journal,
                         bool retry_failed) {
  SweepResume out;
  out.rows.resize(points.size());
  for (const auto& p : points) {
    auto it = journal.finished().find(p.key);
    if (it != journal.finished().end()) {
      const std::string problem = row_problem(spec, p, it->second);
      if (!problem.empty()) {
        out.warnings.push_back("journal entry of point " + std::to_string(p.index + 1) + " (key " + p.key +
                               ") dropped: " + problem + "; computing it again");
        it = journal.finished().end();
      }
    }
    if (it != journal.finished().end() && !(retry_failed && it->second["status"] != "ok")) {
      out.rows[p.index] = it->second;
      ++out.skipped;
    } else {
      out.todo.push_back(static_cast<int64_t>(p.index));
    }
  }
  return out;
}

std::vector<size_t> share_of(const std::vector<int64_t>& todo, int rank, int ranks) {
  std::vector<size_t> mine;
  for (size_t j = static_cast<size_t>(rank); j < todo.size(); j += static_cast<size_t>(ranks))
    mine.push_back(static_cast<size_t>(todo[j]));
  return mine;
}

double default_point_timeout(const SweepSpec& spec, const SweepPoint& point) {
  if (point.model != "simulate") return kPointTimeoutFloor;
  const auto choice = point_fidelity(spec, point);
  const double per_rank = choice.fold                  ? kPointTimeoutPerRankFolded
                          : choice.fidelity == "exact" ? kPointTimeoutPerRankExact
                                                       : kPointTimeoutPerRankFast;
  return kPointTimeoutFloor + per_rank * static_cast<double>(point.gpus);
}

void run_sweep_points(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::vector<size_t>& mine,
                      const SweepRunOptions& options, const std::function<void(size_t, nlohmann::json, int)>& done,
                      const std::function<bool()>& poll, const std::function<bool()>& finished) {
  ChildPool pool(options.jobs);
  size_t next = 0;
  while (!finished()) {
    while (!pool.full() && next < mine.size()) {
      const size_t index = mine[next++];
      if (options.started) options.started(index);
      const double timeout =
          options.point_timeout < 0 ? default_point_timeout(spec, points[index]) : options.point_timeout;
      pool.start(
          index, [&spec, &points, index] { return evaluate_point(spec, points[index]); }, timeout);
    }
    // Waiting on children alone can block; with other ranks to hear from, look up every few ms.
    const bool others = static_cast<bool>(poll);
    if (auto r = pool.wait(others ? 20 : -1))
      done(r->id, r->ok ? r->value : failed_row(spec, points[r->id], r->error), 0);
    bool heard = false;
    while (others && poll()) heard = true;
    if (others && !heard && pool.idle()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string sweep_start_line(size_t number, size_t total, const SweepSpec& spec, const SweepPoint& point,
                             double timeout) {
  std::string what = spec.workloads[point.workload] + " on " + spec.machines[point.machine] + ", " +
                     std::to_string(point.gpus) + (point.gpus == 1 ? " GPU, " : " GPUs, ") + point.model;
  if (spec.configurations == ConfigurationMode::listed)
    what += ", configurations[" + std::to_string(point.configuration) + "]";
  if (point.model == "simulate") {
    const auto choice = point_fidelity(spec, point);
    // The spec's words, not simulate's options, when the spec chose.
    const std::string why =
        choice.automatic ? choice.why
                         : "the spec's \"fidelity\": \"" + spec.fidelity + "\"" + (spec.fold ? ", \"fold\": true" : "");
    what += ": " + choice.fidelity + " fidelity" + (choice.fold ? ", folded" : "") + " (" + why + ")";
  }
  return printed("starting point %zu of %zu: %s; %s", number, total, what.c_str(),
                 timeout > 0 ? printed("timeout %.0f s", timeout).c_str() : "no timeout");
}

std::string sweep_progress(size_t done, size_t total, const SweepPoint& point, const nlohmann::json& row,
                           double elapsed, double eta) {
  const std::string what = row["workload"].get<std::string>() + " on " + row["machine"].get<std::string>() + ", " +
                           std::to_string(point.gpus) + (point.gpus == 1 ? " GPU, " : " GPUs, ") + point.model;
  if (row["status"] == "ok")
    return printed("[%zu/%zu] %s: %.4g s/iteration; elapsed %.1f s, ETA %.1f s", done, total, what.c_str(),
                   row["iteration_s"].get<double>(), elapsed, eta);
  return printed("[%zu/%zu] %s: FAILED: %s; elapsed %.1f s, ETA %.1f s", done, total, what.c_str(),
                 row["error"].get<std::string>().c_str(), elapsed, eta);
}

}  // namespace paratwin::predict
