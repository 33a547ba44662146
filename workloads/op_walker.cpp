#include "workloads/op_walker.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace paratwin::workloads {

namespace {

constexpr int kCompute = static_cast<int>(Stream::compute);

}  // namespace

void IdleLedger::charge(const Role& role, const IdleCharge& c) {
  if (c.seconds <= 0) return;
  switch (c.cause) {
    case IdleCause::collective: {
      exposed_comm += c.seconds;
      const Op& op = role.ops[static_cast<size_t>(c.blocker)];
      exposed[{static_cast<int>(op.kind), op.group}] += c.seconds;
      return;
    }
    case IdleCause::message:
      bubble += c.seconds;
      return;
    case IdleCause::other:
      other_idle += c.seconds;
      return;
  }
}

StreamIndex::StreamIndex(const Role& role) : position(role.ops.size()), slot(role.ops.size(), kNoSlot) {
  for (uint32_t i = 0; i < role.ops.size(); ++i) {
    auto& list = streams[static_cast<size_t>(role.ops[i].stream)];
    position[i] = static_cast<uint32_t>(list.size());
    list.push_back(i);
    if (role.ops[i].stream != Stream::compute) slot[i] = slots++;
  }
}

OpWalker::OpWalker(const Role& role, double origin, std::shared_ptr<const StreamIndex> index)
    : role_(role),
      index_(index ? std::move(index) : std::make_shared<const StreamIndex>(role)),
      start_(index_->slots, 0),
      end_(role.ops.size(), 0),
      compute_free_(origin) {
  running_.fill(-1);
}

int64_t OpWalker::ready(int s) const {
  const auto k = static_cast<size_t>(s);
  if (running_[k] >= 0 || head_[k] >= index_->streams[k].size()) return -1;
  const uint32_t i = index_->streams[k][head_[k]];
  const Op& op = role_.ops[i];
  const uint32_t* d = role_.deps_of(op);
  for (uint32_t j = 0; j < op.dep_count; ++j)
    if (!done(d[j])) return -1;
  return i;
}

int64_t OpWalker::latest_dependency(uint32_t i) const {
  const Op& op = role_.ops[i];
  int64_t last = -1;
  const uint32_t* d = role_.deps_of(op);
  for (uint32_t k = 0; k < op.dep_count; ++k)
    if (last < 0 || end_[d[k]] > end_[static_cast<size_t>(last)]) last = d[k];
  return last;
}

int64_t OpWalker::released_by(uint32_t i) const {
  const Op& op = role_.ops[i];
  int64_t last = latest_dependency(i);
  if (index_->position[i] > 0) {
    const uint32_t previous = index_->streams[static_cast<size_t>(op.stream)][index_->position[i] - 1];
    if (last < 0 || end_[previous] > end_[static_cast<size_t>(last)]) last = previous;
  }
  return last;
}

const std::vector<IdleCharge>& OpWalker::charge_wait(double from, double until, int64_t op) {
  charges_.clear();
  while (until > from) {
    IdleCharge c;
    if (op < 0 || end_[static_cast<size_t>(op)] < until) {
      // Nothing on the critical path ran: the op was released at end_[op] and started later.
      const double released = op < 0 ? from : std::max(from, end_[static_cast<size_t>(op)]);
      c.seconds = until - released;
      until = released;
    } else {
      const Op& blocker = role_.ops[static_cast<size_t>(op)];
      // A compute-stream op ended by `from`, so it is never the op running here.
      const uint32_t slot = index_->slot[static_cast<size_t>(op)];
      if (slot == StreamIndex::kNoSlot) throw std::logic_error("a compute-stream op on the compute stream's wait");
      const double began = std::max(from, start_[slot]);
      c.cause = is_collective(blocker.kind) ? IdleCause::collective
                : is_p2p(blocker.kind)      ? IdleCause::message
                                            : IdleCause::other;
      c.blocker = op;
      c.seconds = until - began;
      until = began;
      op = released_by(static_cast<uint32_t>(op));
    }
    if (c.seconds <= 0) continue;
    if (!charges_.empty() && charges_.back().cause == c.cause && charges_.back().blocker == c.blocker)
      charges_.back().seconds += c.seconds;
    else
      charges_.push_back(c);
    ledger_.charge(role_, c);
  }
  return charges_;
}

const std::vector<IdleCharge>& OpWalker::started(uint32_t i, double at) {
  const Op& op = role_.ops[i];
  const auto s = static_cast<size_t>(op.stream);
  if (running_[s] >= 0 || head_[s] >= index_->streams[s].size() || index_->streams[s][head_[s]] != i)
    throw std::logic_error("op " + std::to_string(i) + " \"" + op.name + "\" of " + role_.name +
                           " started out of its stream's order");
  running_[s] = i;
  if (index_->slot[i] != StreamIndex::kNoSlot) start_[index_->slot[i]] = at;
  if (op.stream == Stream::compute) compute_started_ = at;
  if (op.stream != Stream::compute || at <= compute_free_) {
    charges_.clear();
    return charges_;
  }
  // The compute stream's previous op ended at compute_free_, before the wait: only dependencies count.
  const double from = compute_free_;
  compute_free_ = at;
  return charge_wait(from, at, latest_dependency(i));
}

void OpWalker::finished(uint32_t i, double began, double end) {
  const auto s = static_cast<size_t>(role_.ops[i].stream);
  if (running_[s] != static_cast<int64_t>(i))
    throw std::logic_error("op " + std::to_string(i) + " of " + role_.name + " finished without having started");
  running_[s] = -1;
  ++head_[s];
  end_[i] = end;
  if (index_->slot[i] != StreamIndex::kNoSlot) start_[index_->slot[i]] = began;  // the device's start, as traced
  ++finished_;
  if (static_cast<int>(s) == kCompute) {
    // An asynchronous device may begin the op after it was started: that wait is other idle, as a
    // replay of the trace (which holds `began`) charges it.
    if (began > compute_started_) ledger_.other_idle += began - compute_started_;
    ledger_.compute += end - began;
    compute_free_ = end;
  }
}

const std::vector<IdleCharge>& OpWalker::close(double at) {
  charges_.clear();
  if (at <= compute_free_) return charges_;
  int64_t last = -1;
  for (uint32_t i = 0; i < end_.size(); ++i)
    if (done(i) && (last < 0 || end_[i] > end_[static_cast<size_t>(last)])) last = i;
  const double from = compute_free_;
  compute_free_ = at;
  return charge_wait(from, at, last);
}

IdleLedger replay_ledger(const Role& role, std::vector<OpEvent> events, double origin, double end) {
  if (events.size() != role.ops.size())
    throw std::invalid_argument(role.name + ": " + std::to_string(events.size()) + " events for " +
                                std::to_string(role.ops.size()) + " ops");
  std::sort(events.begin(), events.end(),
            [](const OpEvent& a, const OpEvent& b) { return a.start != b.start ? a.start < b.start : a.op < b.op; });
  OpWalker walker(role, origin);
  std::vector<const OpEvent*> running;  // started, not yet finished
  const auto finish_until = [&](double t) {
    std::sort(running.begin(), running.end(),
              [](const OpEvent* a, const OpEvent* b) { return a->end != b->end ? a->end < b->end : a->op < b->op; });
    size_t k = 0;
    for (; k < running.size() && running[k]->end <= t; ++k)
      walker.finished(running[k]->op, running[k]->start, running[k]->end);
    running.erase(running.begin(), running.begin() + static_cast<std::ptrdiff_t>(k));
    return k > 0;
  };
  // Ops that start at one instant start in the order the walker allows (an op may need one that
  // starts and ends at that instant, listed after it).
  for (size_t next = 0; next < events.size();) {
    const double t = events[next].start;
    std::vector<const OpEvent*> now;
    for (; next < events.size() && events[next].start == t; ++next) {
      const OpEvent& e = events[next];
      if (e.op >= role.ops.size() || e.end < e.start)
        throw std::invalid_argument(role.name + ": event of op " + std::to_string(e.op) +
                                    " out of range or ends before it starts");
      now.push_back(&e);
    }
    finish_until(t);
    while (!now.empty()) {
      bool progress = false;
      for (size_t k = 0; k < now.size();) {
        const OpEvent& e = *now[k];
        if (walker.ready(static_cast<int>(role.ops[e.op].stream)) != static_cast<int64_t>(e.op)) {
          ++k;
          continue;
        }
        walker.started(e.op, e.start);
        running.push_back(&e);
        now.erase(now.begin() + static_cast<std::ptrdiff_t>(k));
        progress = true;
      }
      if (!progress && !finish_until(t)) {
        const Op& op = role.ops[now.front()->op];
        throw std::invalid_argument(role.name + ": op " + std::to_string(now.front()->op) + " \"" + op.name +
                                    "\" starts at " + std::to_string(t) +
                                    " s, before its stream's earlier ops or its dependencies end (or it repeats)");
      }
    }
  }
  finish_until(end);
  if (!walker.finished()) throw std::invalid_argument(role.name + ": an op ends after the iteration's end");
  walker.close(end);
  return walker.ledger();
}

}  // namespace paratwin::workloads
