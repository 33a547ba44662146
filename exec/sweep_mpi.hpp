#pragma once
// MPI for `paratwin sweep` across machines: every rank evaluates a share of the points and sends each
// row to rank 0, which journals it and writes the outputs. MPI is initialised only when the process was
// launched by mpirun or srun (seen in the environment before MPI_Init), so a plain `paratwin sweep`, and
// every other subcommand, never touches MPI.
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

namespace paratwin::exec {

class SweepComm {
 public:
  SweepComm();
  ~SweepComm();  // MPI_Finalize
  SweepComm(const SweepComm&) = delete;
  SweepComm& operator=(const SweepComm&) = delete;

  bool distributed() const { return size_ > 1; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks of this job on this node (for the default number of local jobs).
  int local_size() const { return local_size_; }

  // Rank 0's `values` on every rank.
  std::vector<int64_t> broadcast(std::vector<int64_t> values) const;
  // A worker's finished row, to rank 0, sent in the background: a send that waited for a rank 0
  // stopped would stop the worker's liveness checks with it.
  void send_to_root(const std::string& text) const;
  // Moves the rows sent along; whether every one has been delivered.
  bool rows_sent() const;
  // Rank 0: a row another rank sent, if one has arrived.
  std::optional<std::string> poll_from_workers() const;
  // Ends every rank of the job (a failure that the other ranks cannot learn about otherwise).
  [[noreturn]] void abort(int code) const;

  // Liveness (a rank stopped or stuck would hold the others forever: MPI has no timeout of its own).
  // An empty message to rank 0 from a worker, or from rank 0 to every worker.
  void beat() const;
  // The ranks whose beats arrived since the last call (each at most once).
  std::vector<int> beats() const;
  // Rank 0 to every worker: every row is in, finish.
  void send_end() const;
  // A worker: whether rank 0 said so.
  bool ended() const;

 private:
  bool initialised_ = false;
  int rank_ = 0, size_ = 1, local_size_ = 1;
  struct Sending;  // a row and its MPI request
  mutable std::list<Sending> sending_;
};

}  // namespace paratwin::exec
