#include "calibration/micro.hpp"

#include <mpi.h>

#include <algorithm>

#include "calibration/fit.hpp"

namespace paratwin::calibration {

namespace {

// One op started alone; its seconds on this rank.
double run_alone(exec::Backend& backend, const std::vector<workloads::Op>& ops, uint32_t i) {
  backend.start(ops[i], i);
  double took = 0;
  for (bool done = false; !done;)
    for (const auto& f : backend.wait()) {
      took = f.end - f.start;
      done = true;
    }
  return took;
}

// Every op alone, every rank at once, in rounds (one repeat of every op per round, so that a spell of
// contention from other tenants of the machine spoils one repeat of many ops rather than every repeat
// of a few); per repeat the slowest rank's time for compute, for a collective the fastest rank's (the
// others' include waiting for the last to arrive), then the median over the rounds.
std::vector<double> time_each_alone(exec::Backend& backend, const MicroPlan& plan, const MicroOptions& options) {
  const auto& ops = plan.program.roles[0].ops;
  const uint32_t flush = plan.flush, lead_in = plan.lead_in;
  std::vector<double> seconds(ops.size(), 0.0);
  std::vector<std::vector<double>> reps(flush);
  for (int r = 0; r < options.repeats + 1; ++r)
    for (uint32_t i = 0; i < flush; ++i) {
      const bool collective = workloads::is_collective(ops[i].kind);
      MPI_Barrier(MPI_COMM_WORLD);
      if (collective) {
        run_alone(backend, ops, flush);
        run_alone(backend, ops, lead_in);
      }
      double took = run_alone(backend, ops, i), combined = 0;
      MPI_Allreduce(&took, &combined, 1, MPI_DOUBLE, collective ? MPI_MIN : MPI_MAX, MPI_COMM_WORLD);
      if (r > 0) reps[i].push_back(combined);  // the first round warms buffers and caches
    }
  for (uint32_t i = 0; i < flush; ++i) seconds[i] = median(reps[i]);
  return seconds;
}

// A layer's GEMMs with op `with` in flight (none: -1). Returns the GEMMs' and the collective's seconds
// (slowest rank, median).
std::pair<double, double> overlapped(exec::Backend& backend, const MicroPlan& plan, const MicroOptions& options,
                                     int64_t with) {
  const auto& ops = plan.program.roles[0].ops;
  const uint32_t lead_in = plan.lead_in;
  std::vector<double> gemm_reps, collective_reps;
  for (int r = 0; r < options.repeats + 1; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (with >= 0) backend.start(ops[static_cast<size_t>(with)], static_cast<uint32_t>(with));
    double took[2] = {0, 0};  // the GEMMs' seconds, the collective's
    bool pending = with >= 0;
    const auto note = [&](const std::vector<exec::Finished>& finished) {
      for (const auto& f : finished) {
        if (f.op == lead_in) {
          took[0] += f.end - f.start;
        } else {
          took[1] = f.end - f.start;
          pending = false;
        }
      }
    };
    for (int g = 0; g < kLayerGemms; ++g) {
      backend.start(ops[lead_in], lead_in);
      note(backend.wait());
    }
    while (pending) note(backend.wait());
    double slowest[2] = {0, 0};
    MPI_Allreduce(took, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r == 0) continue;
    gemm_reps.push_back(slowest[0]);
    collective_reps.push_back(slowest[1]);
  }
  return std::pair{median(gemm_reps), median(collective_reps)};
}

// Point-to-point: ranks 2k and 2k+1 exchange a message of each size (MPI_Isend/MPI_Irecv on
// MPI_COMM_WORLD, the transport of the backend's pipeline messages), after the same cold start and
// lead-in GEMM as the collectives; the fastest rank, the median over the repeats.
std::vector<double> time_messages(exec::Backend& backend, int rank, const MicroPlan& plan,
                                  const MicroOptions& options) {
  const auto& ops = plan.program.roles[0].ops;
  const std::vector<double>& message_sizes = plan.message_sizes;  // the collectives' sizes
  std::vector<double> message_seconds;
  const int peer = rank ^ 1;
  std::vector<float> send(static_cast<size_t>(message_sizes.back() / 4), 1.0f), receive(send.size(), 0.0f);
  for (double bytes : message_sizes) {
    std::vector<double> reps;
    const int count = static_cast<int>(bytes / 4);
    for (int r = 0; r < options.repeats + 1; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      run_alone(backend, ops, plan.flush);
      run_alone(backend, ops, plan.lead_in);
      const double start = MPI_Wtime();
      MPI_Request requests[2];
      MPI_Irecv(receive.data(), count, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(send.data(), count, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, &requests[1]);
      MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      double took = MPI_Wtime() - start, fastest = 0;
      MPI_Allreduce(&took, &fastest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      if (r > 0) reps.push_back(fastest);
    }
    message_seconds.push_back(median(reps));
  }
  return message_seconds;
}

}  // namespace

// Every op timed on every rank at once (collective over MPI_COMM_WORLD; `backend` prepared for the plan).
MicroTimes measure_micro(exec::Backend& backend, int rank, int ranks, const MicroPlan& plan,
                         const MicroOptions& options) {
  MicroTimes times;
  times.seconds = time_each_alone(backend, plan, options);
  // The GEMMs alone and with each collective in flight, alternately; each rank's own GEMM time, the
  // slowest rank per repeat, the median.
  for (uint32_t i = plan.first_interference; i < plan.program.roles[0].ops.size(); ++i) {
    const double alone = overlapped(backend, plan, options, -1).first;
    const auto [shared, collective] = overlapped(backend, plan, options, i);
    times.interference.push_back({i, alone, shared, collective});
  }
  if (ranks >= 2 && ranks % 2 == 0) times.message_seconds = time_messages(backend, rank, plan, options);
  return times;
}

nlohmann::json run_micro(exec::Backend& backend, int rank, int ranks, const topology::Machine& machine,
                         const MicroOptions& options) {
  const auto plan = plan_micro(ranks, backend.name() == "cuda", options);
  backend.prepare(plan.program, rank);
  return fit_micro(plan, measure_micro(backend, rank, ranks, plan, options), machine, backend.name(), ranks);
}

}  // namespace paratwin::calibration
