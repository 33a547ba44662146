#pragma once
// `paratwin search`'s progress on stderr while the analytical model ranks configurations: a search of
// thousands of GPUs estimates hundreds of thousands of variants (GPT-3 175B on 1,024 GPUs: about 90 s),
// silent before. A line every few seconds, and a closing one when there was any.
#include <chrono>
#include <cstdint>

#include "sim/search.hpp"

namespace paratwin::predict {

class RankingProgress {
 public:
  // Seconds between lines (the first after as long: a quick search prints nothing).
  static constexpr double kEverySeconds = 2;

  explicit RankingProgress(bool enabled);
  void update(const sim::SearchProgress& p);
  // "ranked N configurations (M variants estimated) in S s", when a line was printed.
  void finish(const sim::SearchResult& result);

 private:
  double elapsed() const;

  bool enabled_;
  double every_;
  std::chrono::steady_clock::time_point start_;
  double last_ = 0;
  bool printed_ = false;
};

}  // namespace paratwin::predict
