#pragma once
// A measured run (`paratwin exec`) put together on rank 0: each rank's measurements flattened into
// doubles (one MPI_Gatherv moves them all), read back, and merged into the run summary that the
// simulator's predictions give too.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/run_summary.hpp"
#include "reports/trace.hpp"
#include "topology/machine.hpp"
#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

// What one rank measured.
struct RankMeasurement {
  std::vector<double> iterations;  // seconds of each measured iteration
  // Of the last measured iteration:
  reports::RankRow row;
  std::vector<workloads::OpEvent> events;           // this rank's ops
  std::vector<reports::CollectiveRow> collectives;  // one per (kind, group), summed over its calls
};

// One rank's measurements as doubles, and every rank's back from the gathered doubles: rank r's from
// all[offsets[r]], each with `iterations` iterations. Events take the rank they came from.
std::vector<double> pack(const RankMeasurement& m);
std::vector<RankMeasurement> unpack(const std::vector<double>& all, const std::vector<int>& offsets, size_t iterations);

struct MeasuredRun {
  std::vector<double> iterations;  // per iteration, the slowest rank's seconds
  double median = 0;               // of those: the iteration time reported
  reports::RunSummary summary;     // collectives per rank, as the simulator reports them
  std::vector<workloads::OpEvent> events;
};

MeasuredRun merge_ranks(const workloads::Workload& w, const workloads::Program& program,
                        const topology::Machine& machine, const std::vector<RankMeasurement>& ranks);

// The summary's document (`paratwin exec --json`), with the backend, every iteration and the warm-up.
nlohmann::json to_json(const MeasuredRun& run, const std::string& backend, int warmup);

// The report's first lines: what ran where, and every iteration's time with their median.
std::string measured_heading(const MeasuredRun& run, const std::string& workload, int ranks, const std::string& backend,
                             int warmup, const std::string& machine);

}  // namespace paratwin::predict
