#include "predict/measured_run.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "common/report_text.hpp"

namespace paratwin::predict {

std::vector<double> pack(const RankMeasurement& m) {
  std::vector<double> out(m.iterations.begin(), m.iterations.end());
  out.insert(out.end(), {m.row.compute, m.row.exposed_comm, m.row.bubble, m.row.other_idle});
  out.push_back(static_cast<double>(m.events.size()));
  for (const auto& e : m.events) out.insert(out.end(), {static_cast<double>(e.op), e.start, e.end});
  out.push_back(static_cast<double>(m.collectives.size()));
  for (const auto& c : m.collectives)
    out.insert(out.end(), {static_cast<double>(static_cast<int>(c.kind)), static_cast<double>(c.group),
                           static_cast<double>(c.count), c.bytes, c.seconds, c.exposed});
  return out;
}

std::vector<RankMeasurement> unpack(const std::vector<double>& all, const std::vector<int>& offsets,
                                    size_t iterations) {
  std::vector<RankMeasurement> ranks;
  for (size_t r = 0; r + 1 < offsets.size(); ++r) {
    const double* p = all.data() + offsets[r];
    RankMeasurement m;
    m.iterations.assign(p, p + iterations);
    p += iterations;
    m.row = {p[0], p[1], p[2], p[3]};
    p += 4;
    const auto events = static_cast<size_t>(*p++);
    for (size_t k = 0; k < events; ++k, p += 3)
      m.events.push_back({static_cast<int64_t>(r), static_cast<uint32_t>(p[0]), p[1], p[2]});
    const auto kinds = static_cast<size_t>(*p++);
    for (size_t k = 0; k < kinds; ++k, p += 6)
      m.collectives.push_back({static_cast<workloads::OpKind>(p[0]), static_cast<workloads::AxisMask>(p[1]), "",
                               static_cast<int64_t>(p[2]), p[3], p[4], p[5]});
    ranks.push_back(std::move(m));
  }
  return ranks;
}

MeasuredRun merge_ranks(const workloads::Workload& w, const workloads::Program& program,
                        const topology::Machine& machine, const std::vector<RankMeasurement>& ranks) {
  MeasuredRun run;
  std::vector<reports::RankRow> rows;
  std::map<std::pair<int, workloads::AxisMask>, reports::CollectiveRow> collectives;
  for (const auto& m : ranks) {
    run.iterations.resize(std::max(run.iterations.size(), m.iterations.size()), 0);
    for (size_t k = 0; k < m.iterations.size(); ++k) run.iterations[k] = std::max(run.iterations[k], m.iterations[k]);
    rows.push_back(m.row);
    run.events.insert(run.events.end(), m.events.begin(), m.events.end());
    for (const auto& c : m.collectives) {
      auto& sum = collectives[{static_cast<int>(c.kind), c.group}];
      sum.kind = c.kind;
      sum.group = c.group;
      sum.count += c.count;
      sum.bytes += c.bytes;
      sum.seconds += c.seconds;
      sum.exposed += c.exposed;
    }
  }
  // Per rank, as the simulator reports them.
  const auto size = static_cast<int64_t>(ranks.size());
  std::vector<reports::CollectiveRow> per_rank;
  for (auto [key, c] : collectives) {
    c.count /= size;
    c.bytes /= static_cast<double>(size);
    c.seconds /= static_cast<double>(size);
    c.exposed /= static_cast<double>(size);
    per_rank.push_back(c);
  }
  std::vector<double> sorted = run.iterations;
  std::sort(sorted.begin(), sorted.end());
  run.median = sorted[sorted.size() / 2];
  run.summary = summarize(w, program, machine, run.median, rows, per_rank);
  return run;
}

nlohmann::json to_json(const MeasuredRun& run, const std::string& backend, int warmup) {
  auto j = to_json(run.summary);
  j["backend"] = backend;
  j["iterations_s"] = run.iterations;  // each timed iteration's seconds
  j["warmup_iterations"] = warmup;
  return j;
}

std::string measured_heading(const MeasuredRun& run, const std::string& workload, int ranks, const std::string& backend,
                             int warmup, const std::string& machine) {
  const std::string stack = run.summary.framework.empty() ? "" : ", framework " + run.summary.framework;
  std::string out =
      printed("%s on %d ranks, %s backend%s, %zu iterations measured after %d warm-up (on %s)\n", workload.c_str(),
              ranks, backend.c_str(), stack.c_str(), run.iterations.size(), warmup, machine.c_str());
  out += "  iterations            ";
  for (double t : run.iterations) out += printed("%.4g s  ", t);
  return out + printed("(median %.4g s)\n", run.median);
}

}  // namespace paratwin::predict
