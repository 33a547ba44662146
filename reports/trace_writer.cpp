#include "reports/trace_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

namespace {

constexpr int kIdleThread = kStreams;            // the thread after the streams: the compute stream's waits
constexpr size_t kFlushBytes = size_t{1} << 20;  // the stream gets the text in pieces of about this size
constexpr int64_t kNodePidBase = 1000000000;     // node N's counters: process kNodePidBase + N (ranks stay below)

void append_int(std::string& s, int64_t v) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, v);
  s.append(digits, r.ptr);
}

// Microseconds of a time in ns (a multiple of kResolutionNs), without trailing zeros: 1234.5.
void append_us(std::string& s, int64_t ns) {
  if (ns < 0) {
    s += '-';
    ns = -ns;
  }
  append_int(s, ns / 1000);
  int64_t frac = ns % 1000;
  if (frac == 0) return;
  char d[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
               static_cast<char>('0' + frac % 10)};
  size_t n = 4;
  while (d[n - 1] == '0') --n;
  s.append(d, n);
}

void append_string(std::string& s, std::string_view text) {
  s += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      s += "\\u00";
      s += hex[(c >> 4) & 0xf];
      s += hex[c & 0xf];
    } else {
      s += c;
    }
  }
  s += '"';
}

bool is_memory_event(OpKind k) {
  return k == OpKind::alloc || k == OpKind::free;
}

// The pipeline channel of a message: forward and backward ones never match each other.
int channel_of(const Op& op) {
  return op.stream == Stream::send_bwd || op.stream == Stream::recv_bwd ? 1 : 0;
}

const char* idle_name(IdleCause c) {
  switch (c) {
    case IdleCause::collective:
      return "exposed comm";
    case IdleCause::message:
      return "bubble";
    case IdleCause::other:
      break;
  }
  return "other idle";
}

}  // namespace

int64_t trace_ns(double seconds) {
  return std::llround(seconds * 1e9 / kResolutionNs) * kResolutionNs;
}

std::string describe_ranks(const std::vector<int64_t>& ranks) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i + 1;
    const int64_t step = j < ranks.size() ? ranks[j] - ranks[i] : 0;
    while (j + 1 < ranks.size() && ranks[j + 1] - ranks[j] == step) ++j;
    if (step > 0 && j - i + 1 >= 3) {
      const std::string first = std::to_string(ranks[i]), last = std::to_string(ranks[j]);
      add(step == 1 ? first + "-" + last
                    : first + ", " + std::to_string(ranks[i] + step) + ", ..., " + last + " (every " +
                          std::to_string(step) + ")");
      i = j + 1;
    } else {
      add(std::to_string(ranks[i]));
      ++i;
    }
  }
  return out;
}

ChromeTraceWriter::ChromeTraceWriter(const Program& program, std::ostream& out, std::string about)
    : program_(program),
      out_(out),
      about_(std::move(about)),
      placement_(program.placement()),
      pipe_axis_(program.grid.axis_index("pipe")),
      consumer_(program.roles.size()) {
  buffer_.reserve(kFlushBytes + 4096);
  buffer_ = "{\"traceEvents\":[\n";
}

void ChromeTraceWriter::event_begin() {
  if (!first_event_) buffer_ += ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::event_begin(const char* ph, int64_t pid) {
  event_begin();
  buffer_ += "{\"ph\":\"";
  buffer_ += ph;
  buffer_ += "\",\"pid\":";
  append_int(buffer_, pid);
}

void ChromeTraceWriter::process_name(int64_t pid, const std::string& name) {
  event_begin("M", pid);
  buffer_ += ",\"name\":\"process_name\",\"args\":{\"name\":";
  append_string(buffer_, name);
  buffer_ += "}}";
}

void ChromeTraceWriter::flush_if_full() {
  if (buffer_.size() < kFlushBytes) return;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
}

void ChromeTraceWriter::traced(int64_t rank, const std::vector<int64_t>& stands_for) {
  traced_[rank] = stands_for;
  std::string name = "rank " + std::to_string(rank) + " (stage " + std::to_string(program_.role_of(rank));
  if (stands_for.size() > 1) name += "; stands for " + std::to_string(stands_for.size()) + " ranks";
  name += ")";
  process_name(rank, name);
  event_begin("M", rank);
  buffer_ += ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":";
  append_int(buffer_, rank);
  buffer_ += "}}";
}

void ChromeTraceWriter::thread_name(int64_t pid, int tid, const char* name) {
  if (!named_threads_.insert({pid, tid}).second) return;
  event_begin("M", pid);
  buffer_ += ",\"tid\":";
  append_int(buffer_, tid);
  buffer_ += ",\"name\":\"thread_name\",\"args\":{\"name\":";
  append_string(buffer_, name);
  buffer_ += "}}";
}

void ChromeTraceWriter::slice(int64_t pid, int tid, int64_t start_ns, int64_t end_ns, const char* name,
                              const std::string& args) {
  thread_name(pid, tid, tid == kIdleThread ? "idle" : to_string(static_cast<Stream>(tid)));
  event_begin("X", pid);
  buffer_ += ",\"tid\":";
  append_int(buffer_, tid);
  buffer_ += ",\"ts\":";
  append_us(buffer_, start_ns);
  buffer_ += ",\"dur\":";
  append_us(buffer_, std::max<int64_t>(0, end_ns - start_ns));
  buffer_ += ",\"name\":";
  append_string(buffer_, name);
  if (!args.empty()) {
    buffer_ += ",\"args\":{";
    buffer_ += args;
    buffer_ += '}';
  }
  buffer_ += '}';
  ++counts_.slices;
  flush_if_full();
}

void ChromeTraceWriter::flow(const std::vector<Anchor>& anchors, const char* name) {
  const int64_t id = next_flow_++;
  for (size_t i = 0; i < anchors.size(); ++i) {
    const Anchor& a = anchors[i];
    event_begin();
    buffer_ += i == 0 ? "{\"ph\":\"s\"" : i + 1 == anchors.size() ? "{\"ph\":\"f\",\"bp\":\"e\"" : "{\"ph\":\"t\"";
    buffer_ += ",\"id\":";
    append_int(buffer_, id);
    buffer_ += ",\"pid\":";
    append_int(buffer_, a.pid);
    buffer_ += ",\"tid\":";
    append_int(buffer_, a.tid);
    buffer_ += ",\"ts\":";
    append_us(buffer_, a.ts);
    buffer_ += ",\"name\":";
    append_string(buffer_, name);
    buffer_ += '}';
  }
  ++counts_.flows;
  flush_if_full();
}

void ChromeTraceWriter::write_counter(int64_t node, const Counter& c, int64_t ts) {
  if (std::llround(c.node) == c.written_node && std::llround(c.net) == c.written_net) return;
  event_begin("C", kNodePidBase + node);
  buffer_ += ",\"ts\":";
  append_us(buffer_, ts);
  buffer_ += ",\"name\":\"in flight\",\"args\":{\"intra-node\":";
  append_int(buffer_, std::max<int64_t>(0, std::llround(c.node)));
  buffer_ += ",\"network\":";
  append_int(buffer_, std::max<int64_t>(0, std::llround(c.net)));
  buffer_ += "}}";
  ++counts_.counters;
}

void ChromeTraceWriter::count(int64_t rank, int64_t ts, double node_delta, double net_delta) {
  const int64_t node = placement_.slot_of(rank).node;
  Counter& c = counters_[node];
  if (c.pending_ts < 0) {
    // The node's counters: a process of their own, after the ranks.
    process_name(kNodePidBase + node, "node " + std::to_string(node) + " (traced ranks' bytes in flight)");
  }
  if (c.pending_ts >= 0 && c.pending_ts != ts) {
    write_counter(node, c, c.pending_ts);
    c.written_node = std::llround(c.node);
    c.written_net = std::llround(c.net);
    flush_if_full();
  }
  c.node += node_delta;
  c.net += net_delta;
  c.pending_ts = ts;
}

bool ChromeTraceWriter::comm_on_node(int64_t rank, const Op& op) {
  const int64_t node = placement_.slot_of(rank).node;
  if (is_p2p(op.kind))
    return placement_.slot_of(program_.grid.with_coord(rank, pipe_axis_, op.peer_stage)).node == node;
  auto [it, fresh] = on_node_.emplace(std::make_pair(rank, op.group), true);
  if (fresh)
    for (const int64_t m : program_.grid.group(rank, op.group))
      if (placement_.slot_of(m).node != node) {
        it->second = false;
        break;
      }
  return it->second;
}

int64_t ChromeTraceWriter::traced_in_group(int64_t rank, uint32_t mask) {
  const int64_t first = program_.grid.group_member(rank, mask, 0);
  auto [it, fresh] = traced_members_.emplace(std::make_pair(first, mask), 0);
  if (fresh)
    for (const auto& [r, stands_for] : traced_)
      if (program_.grid.group_member(r, mask, 0) == first) ++it->second;
  return it->second;
}

int64_t ChromeTraceWriter::consumer_of(int64_t rank, uint32_t op) {
  const auto role_index = static_cast<size_t>(program_.role_of(rank));
  auto& consumers = consumer_[role_index];
  if (consumers.empty()) {
    // The first op (in list order) that depends on a received message: the work that waited for it.
    const Role& role = program_.roles[role_index];
    consumers.assign(role.ops.size(), -1);
    for (uint32_t j = 0; j < role.ops.size(); ++j) {
      if (is_memory_event(role.ops[j].kind)) continue;
      const uint32_t* d = role.deps_of(role.ops[j]);
      for (uint32_t k = 0; k < role.ops[j].dep_count; ++k)
        if (role.ops[d[k]].kind == OpKind::recv && consumers[d[k]] < 0) consumers[d[k]] = j;
    }
  }
  return consumers[op];
}

void ChromeTraceWriter::started(int64_t rank, uint32_t i, double at) {
  const Op& op = program_.roles[static_cast<size_t>(program_.role_of(rank))].ops[i];
  if (!is_p2p(op.kind) && !is_collective(op.kind)) return;
  const int64_t ts = trace_ns(at);
  if (op.kind == OpKind::send) {
    const int64_t peer = program_.grid.with_coord(rank, pipe_axis_, op.peer_stage);
    if (is_traced(peer)) {
      const int ch = channel_of(op);
      const int64_t ordinal = sends_started_[{rank, peer, ch}]++;
      const MessageKey key{rank, peer, ch, ordinal};
      const Anchor from{rank, static_cast<int>(op.stream), ts};
      if (auto early = early_recvs_.find(key); early != early_recvs_.end()) {
        flow({from, early->second}, "msg");
        early_recvs_.erase(early);
      } else {
        sends_[key] = from;
      }
    }
  }
  if (op.bytes > 0) {
    const bool node = comm_on_node(rank, op);
    count(rank, ts, node ? op.bytes : 0, node ? 0 : op.bytes);
  }
}

void ChromeTraceWriter::finished(const OpEvent& e) {
  const Op& op = program_.roles[static_cast<size_t>(program_.role_of(e.rank))].ops[e.op];
  if (is_memory_event(op.kind)) return;  // instants of the memory ledger, not work on a stream
  const int tid = static_cast<int>(op.stream);
  const int64_t start = trace_ns(e.start), end = trace_ns(e.end);

  // The kind in args, not in "cat": viewers join a flow's slices only when they share one category.
  std::string args = "\"k\":";
  append_string(args, to_string(op.kind));
  const auto arg = [&](const char* key, int64_t v) {
    if (!args.empty()) args += ',';
    args += '"';
    args += key;
    args += "\":";
    append_int(args, v);
  };
  if (op.layer >= 0) arg("l", op.layer);
  if (op.micro_batch >= 0) arg("mb", op.micro_batch);
  if (op.chunk > 0) arg("c", op.chunk);
  if (op.phase == Phase::recompute) args += std::string(args.empty() ? "" : ",") + "\"p\":\"recompute\"";
  if (is_p2p(op.kind) || is_collective(op.kind)) arg("B", std::llround(op.bytes));
  slice(e.rank, tid, start, end, op.name, args);

  if ((is_p2p(op.kind) || is_collective(op.kind)) && op.bytes > 0) {
    const bool node = comm_on_node(e.rank, op);
    count(e.rank, end, node ? -op.bytes : 0, node ? 0 : -op.bytes);
  }

  // This op consumed messages whose flows wait for it.
  if (auto it = awaiting_consumer_.find({e.rank, e.op}); it != awaiting_consumer_.end()) {
    for (const Anchor& from : it->second) flow({from, Anchor{e.rank, tid, start}}, "msg");
    awaiting_consumer_.erase(it);
  }
  if (op.kind == OpKind::recv) {
    const int64_t peer = program_.grid.with_coord(e.rank, pipe_axis_, op.peer_stage);
    if (!is_traced(peer)) return;
    const int ch = channel_of(op);
    const int64_t ordinal = recvs_done_[{e.rank, peer, ch}]++;
    const auto it = sends_.find({peer, e.rank, ch, ordinal});
    if (it == sends_.end()) {
      // Received before it was sent: clocks that disagree (a measured run); the arrow waits for the send.
      early_recvs_[{peer, e.rank, ch, ordinal}] = Anchor{e.rank, tid, start};
      return;
    }
    const Anchor from = it->second;
    sends_.erase(it);
    // An arrow ends at a slice that starts after the send did (viewers bind it to that slice's start).
    const int64_t consumer = consumer_of(e.rank, e.op);
    if (consumer >= 0)
      awaiting_consumer_[{e.rank, static_cast<uint32_t>(consumer)}].push_back(from);
    else if (start > from.ts)
      flow({from, Anchor{e.rank, tid, start}}, "msg");
    return;
  }
  if (is_collective(op.kind)) {
    const int64_t members = traced_in_group(e.rank, op.group);
    if (members < 2) return;
    const int64_t first = program_.grid.group_member(e.rank, op.group, 0);
    const int64_t ordinal = collectives_done_[{e.rank, op.group, tid}]++;
    const CollectiveKey key{op.group, first, tid, ordinal};
    auto& joined = collectives_[key];
    joined.push_back(Anchor{e.rank, tid, start});
    if (static_cast<int64_t>(joined.size()) < members) return;
    std::sort(joined.begin(), joined.end(),
              [](const Anchor& a, const Anchor& b) { return a.ts != b.ts ? a.ts < b.ts : a.pid < b.pid; });
    flow(joined, "coll");
    collectives_.erase(key);
  }
}

void ChromeTraceWriter::idle(int64_t rank, const std::vector<IdleCharge>& pieces, double until) {
  const Role& role = program_.roles[static_cast<size_t>(program_.role_of(rank))];
  double end = until;
  for (const IdleCharge& p : pieces) {
    const double start = end - p.seconds;
    std::string args;
    if (p.blocker >= 0) {
      const Op& on = role.ops[static_cast<size_t>(p.blocker)];
      args = "\"on\":";
      append_string(args, on.name);
      if (on.micro_batch >= 0) {
        args += ",\"mb\":";
        append_int(args, on.micro_batch);
      }
    }
    if (p.seconds > 0) slice(rank, kIdleThread, trace_ns(start), trace_ns(end), idle_name(p.cause), args);
    end = start;
  }
}

void ChromeTraceWriter::finish() {
  for (const auto& [node, c] : counters_)
    if (c.pending_ts >= 0) write_counter(node, c, c.pending_ts);
  buffer_ += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"about\":";
  append_string(buffer_, about_);
  buffer_ +=
      ",\"legend\":\"times in microseconds; args: k op kind, l layer, mb micro-batch, c model chunk, B bytes, on the "
      "op waited for; "
      "idle: the compute stream's waits as the breakdown charges them; node N: bytes of the traced ranks' running "
      "communication ops on that node, with peers inside the node or across the network; flows: msg from a "
      "send to the op that used the message, coll through a collective's traced members in the order they "
      "joined\"";
  bool folded = false;
  for (const auto& [rank, stands_for] : traced_) folded = folded || stands_for.size() > 1;
  if (folded) {
    buffer_ += ",\"stands_for\":{";
    bool first = true;
    for (const auto& [rank, stands_for] : traced_) {
      if (!first) buffer_ += ',';
      first = false;
      append_string(buffer_, "rank " + std::to_string(rank));
      buffer_ += ':';
      append_string(buffer_, describe_ranks(stands_for));
    }
    buffer_ += '}';
  }
  buffer_ += "}}\n";
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_.flush();
  buffer_.clear();
}

}  // namespace paratwin::reports
