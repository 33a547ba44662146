#include "exec/sweep_mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>

namespace paratwin::exec {

namespace {

constexpr int kRowTag = 7;
constexpr int kBeatTag = 8;
constexpr int kEndTag = 9;

// Set by Open MPI's mpirun, by PMI launchers (MPICH's Hydra, srun) and by PMIx.
bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

int env_int(const char* variable, int fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : fallback;
}

}  // namespace

SweepComm::SweepComm() {
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  initialised_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  local_size_ = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", env_int("MPI_LOCALNRANKS", env_int("SLURM_NTASKS_PER_NODE", 1)));
}

SweepComm::~SweepComm() {
  if (initialised_) MPI_Finalize();
}

std::vector<int64_t> SweepComm::broadcast(std::vector<int64_t> values) const {
  if (!distributed()) return values;
  int64_t count = static_cast<int64_t>(values.size());
  MPI_Bcast(&count, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  values.resize(static_cast<size_t>(count));
  MPI_Bcast(values.data(), static_cast<int>(count), MPI_INT64_T, 0, MPI_COMM_WORLD);
  return values;
}

struct SweepComm::Sending {
  std::string text;
  MPI_Request request = MPI_REQUEST_NULL;
};

void SweepComm::send_to_root(const std::string& text) const {
  auto& s = sending_.emplace_back();
  s.text = text;
  MPI_Isend(s.text.data(), static_cast<int>(s.text.size()), MPI_CHAR, 0, kRowTag, MPI_COMM_WORLD, &s.request);
}

bool SweepComm::rows_sent() const {
  for (auto it = sending_.begin(); it != sending_.end();) {
    int done = 0;
    MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done ? sending_.erase(it) : std::next(it);
  }
  return sending_.empty();
}

std::optional<std::string> SweepComm::poll_from_workers() const {
  if (!distributed()) return std::nullopt;
  int arrived = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, kRowTag, MPI_COMM_WORLD, &arrived, &status);
  if (!arrived) return std::nullopt;
  int size = 0;
  MPI_Get_count(&status, MPI_CHAR, &size);
  std::string text(static_cast<size_t>(size), '\0');
  MPI_Recv(text.data(), size, MPI_CHAR, status.MPI_SOURCE, kRowTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

void SweepComm::beat() const {
  if (!distributed()) return;
  // Buffered: a beat must not wait for a rank that is stopped.
  static char none = 0;
  const auto send = [](int to) {
    MPI_Request request;
    MPI_Isend(&none, 0, MPI_CHAR, to, kBeatTag, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
  };
  if (rank_ != 0) {
    send(0);
  } else {
    for (int r = 1; r < size_; ++r) send(r);
  }
}

std::vector<int> SweepComm::beats() const {
  std::vector<int> from;
  if (!distributed()) return from;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kBeatTag, MPI_COMM_WORLD, &arrived, &status);
    if (!arrived) return from;
    char none = 0;
    MPI_Recv(&none, 0, MPI_CHAR, status.MPI_SOURCE, kBeatTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (std::find(from.begin(), from.end(), status.MPI_SOURCE) == from.end()) from.push_back(status.MPI_SOURCE);
  }
}

void SweepComm::send_end() const {
  if (!distributed() || rank_ != 0) return;
  static char none = 0;
  for (int r = 1; r < size_; ++r) MPI_Send(&none, 0, MPI_CHAR, r, kEndTag, MPI_COMM_WORLD);
}

bool SweepComm::ended() const {
  if (!distributed()) return true;
  int arrived = 0;
  MPI_Status status;
  MPI_Iprobe(0, kEndTag, MPI_COMM_WORLD, &arrived, &status);
  if (!arrived) return false;
  char none = 0;
  MPI_Recv(&none, 0, MPI_CHAR, 0, kEndTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return true;
}

void SweepComm::abort(int code) const {
  if (initialised_) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace paratwin::exec
