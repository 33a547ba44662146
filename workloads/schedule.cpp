#include "workloads/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

namespace paratwin::workloads {

namespace {

std::vector<Slot> gpipe(const ScheduleSpec& s) {
  std::vector<Slot> out;
  for (int32_t i = 0; i < s.micro_batches; ++i) out.push_back({true, i, 0});
  for (int32_t i = 0; i < s.micro_batches; ++i) out.push_back({false, i, 0});
  return out;
}

// PipeDream-Flush ([narayanan2021megatron] Fig. 4 top): p - stage - 1 warm-up forwards, then one forward and one
// backward alternately, then the remaining backwards.
std::vector<Slot> one_f_one_b(const ScheduleSpec& s, int64_t warmup) {
  const int64_t m = s.micro_batches;
  warmup = std::clamp<int64_t>(warmup, 0, m);
  std::vector<Slot> out;
  int32_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({true, f, 0});
  while (f < m) {
    out.push_back({true, f++, 0});
    out.push_back({false, b++, 0});
  }
  while (b < m) out.push_back({false, b++, 0});
  return out;
}

// Interleaved 1F1B ([narayanan2021megatron] §2.2.2, Fig. 4 bottom), in the order Megatron-LM's implementation
// runs it: virtual micro-batch k maps to chunk (k / p) mod v of micro-batch (k / pv)·p + k mod p.
std::vector<Slot> interleaved(const ScheduleSpec& s, int64_t stage) {
  const int64_t p = s.stages, v = s.chunks, m = s.micro_batches;
  const int64_t total = m * v;
  auto chunk_of = [&](int64_t k, bool forward) {
    const int64_t c = (k % (p * v)) / p;
    return static_cast<int32_t>(forward ? c : v - 1 - c);
  };
  auto mb_of = [&](int64_t k) { return static_cast<int32_t>((k / (p * v)) * p + k % p); };
  const int64_t warmup = std::min(total, (p - stage - 1) * 2 + (v - 1) * p);
  std::vector<Slot> out;
  int64_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({true, mb_of(f), chunk_of(f, true)});
  while (f < total) {
    out.push_back({true, mb_of(f), chunk_of(f, true)});
    ++f;
    out.push_back({false, mb_of(b), chunk_of(b, false)});
    ++b;
  }
  for (; b < total; ++b) out.push_back({false, mb_of(b), chunk_of(b, false)});
  return out;
}

// AxoNN's message-driven schedule ([singh2022axonn] Algorithm 2): stage 0 admits a new micro-batch while
// fewer than pipeline_limit are in flight; every stage runs whatever message has arrived, backward
// first. Its order depends on timing; this is the order it takes when every forward costs 1 and
// every backward 2 ([narayanan2021megatron]'s assumption), found by replaying the pipeline event by event.
std::vector<std::vector<Slot>> message_driven(const ScheduleSpec& s) {
  const int64_t p = s.stages, m = s.micro_batches;
  const int64_t limit = s.pipeline_limit > 0 ? s.pipeline_limit : p;
  std::vector<std::vector<Slot>> order(p);
  std::vector<std::deque<int32_t>> fwd_ready(p), bwd_ready(p);
  std::vector<double> busy_until(p, 0.0);
  std::vector<Slot> running(p);
  std::vector<bool> active(p, false);
  int32_t admitted = 0, in_flight = 0, done = 0;
  double now = 0;
  auto admit = [&] {
    while (admitted < m && in_flight < limit) {
      fwd_ready[0].push_back(admitted++);
      ++in_flight;
    }
  };
  admit();
  while (done < m) {
    for (int64_t st = 0; st < p; ++st) {
      if (active[st]) continue;
      Slot next;
      if (!bwd_ready[st].empty()) {
        next = {false, bwd_ready[st].front(), 0};
        bwd_ready[st].pop_front();
      } else if (!fwd_ready[st].empty()) {
        next = {true, fwd_ready[st].front(), 0};
        fwd_ready[st].pop_front();
      } else {
        continue;
      }
      active[st] = true;
      running[st] = next;
      busy_until[st] = now + (next.forward ? 1.0 : 2.0);
      order[st].push_back(next);
    }
    double t = std::numeric_limits<double>::infinity();
    for (int64_t st = 0; st < p; ++st)
      if (active[st]) t = std::min(t, busy_until[st]);
    if (!std::isfinite(t)) throw std::logic_error("message-driven schedule stalled");
    now = t;
    for (int64_t st = 0; st < p; ++st) {
      if (!active[st] || busy_until[st] > now) continue;
      active[st] = false;
      const Slot& r = running[st];
      if (r.forward) {
        if (st + 1 < p)
          fwd_ready[st + 1].push_back(r.micro_batch);
        else
          bwd_ready[st].push_back(r.micro_batch);
      } else if (st > 0) {
        bwd_ready[st - 1].push_back(r.micro_batch);
      } else {
        ++done;
        --in_flight;
        admit();
      }
    }
  }
  return order;
}

}  // namespace

std::vector<Slot> stage_schedule(const ScheduleSpec& spec, int64_t stage) {
  if (stage < 0 || stage >= spec.stages) throw std::out_of_range("pipeline stage out of range");
  switch (spec.kind) {
    case Schedule::gpipe:
      return gpipe(spec);
    case Schedule::one_f_one_b:
      return one_f_one_b(spec, spec.stages - stage - 1);
    case Schedule::interleaved:
      // One chunk per stage is no interleaving: Megatron-LM runs its plain 1F1B schedule unless virtual
      // stages are given (its interleaved warm-up, 2(p − stage − 1), would hold twice the micro-batches).
      return spec.chunks > 1 ? interleaved(spec, stage) : one_f_one_b(spec, spec.stages - stage - 1);
    case Schedule::axonn:
      return message_driven(spec)[stage];
  }
  return {};
}

std::vector<std::vector<Slot>> all_stage_schedules(const ScheduleSpec& spec) {
  if (spec.kind == Schedule::axonn) return message_driven(spec);
  std::vector<std::vector<Slot>> out;
  for (int64_t s = 0; s < spec.stages; ++s) out.push_back(stage_schedule(spec, s));
  return out;
}

std::string describe(const std::vector<Slot>& slots, int64_t chunks) {
  std::string s;
  for (const auto& slot : slots) {
    if (!s.empty()) s += ' ';
    s += slot.forward ? 'F' : 'B';
    s += std::to_string(slot.micro_batch + 1);
    if (chunks > 1) s += static_cast<char>('a' + slot.chunk);
  }
  return s;
}

}  // namespace paratwin::workloads
