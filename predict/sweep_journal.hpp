#pragma once
// The journal of a sweep: one JSON line per finished point, {"key": ..., "rank": ..., "row": {...}}
// (rank: the MPI rank that computed it), written and
// fsync'd as each point finishes, so a crash loses no finished point and a rerun skips them.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace paratwin::predict {

class SweepJournal {
 public:
  // Opens `path` for appending, creating it, and locks it against a second sweep writing the same
  // folder. `restart` empties it first. Throws InputError when another sweep holds the lock,
  // std::runtime_error when the file cannot be opened, read or cut.
  SweepJournal(const std::string& path, bool restart);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  // Rows finished by earlier runs, by point key (later lines win).
  const std::map<std::string, nlohmann::json>& finished() const { return finished_; }
  // Lines that were not a journal entry (a write torn by a crash); they are dropped.
  int dropped_lines() const { return dropped_; }

  // Appends one line and returns once it is on disk.
  void record(const std::string& key, const nlohmann::json& row, int rank);

 private:
  std::string path_;
  int fd_ = -1;
  std::map<std::string, nlohmann::json> finished_;
  int dropped_ = 0;
};

}  // namespace paratwin::predict
