#include "predict/search_progress.hpp"

#include <cstdio>
#include <cstdlib>

namespace paratwin::predict {

namespace {

// PARATWIN_PROGRESS_SECONDS overrides the interval (tests show progress of a search that takes under a
// second with 0).
double interval() {
  const char* value = std::getenv("PARATWIN_PROGRESS_SECONDS");
  if (value == nullptr) return RankingProgress::kEverySeconds;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  return end != value && seconds >= 0 ? seconds : RankingProgress::kEverySeconds;
}

}  // namespace

RankingProgress::RankingProgress(bool enabled)
    : enabled_(enabled), every_(interval()), start_(std::chrono::steady_clock::now()) {
}

double RankingProgress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void RankingProgress::update(const sim::SearchProgress& p) {
  if (!enabled_) return;
  const double now = elapsed();
  if (now - last_ < every_) return;
  last_ = now;
  printed_ = true;
  std::fprintf(stderr,
               "paratwin search: ranking: %zu of %zu configurations, %lld variants estimated, %lld fit so far "
               "(%.0f s)\n",
               p.configurations, p.total, static_cast<long long>(p.estimated), static_cast<long long>(p.ranked), now);
}

void RankingProgress::finish(const sim::SearchResult& result) {
  if (!enabled_ || !printed_) return;
  std::fprintf(stderr, "paratwin search: ranked %lld configurations (%lld variants estimated) in %.1f s\n",
               static_cast<long long>(result.configurations), static_cast<long long>(result.estimated), elapsed());
}

}  // namespace paratwin::predict
