#pragma once
// The timeline of one simulated iteration, written as Chrome trace-event JSON (opens in Perfetto
// or chrome://tracing): one process per component (gpu3, nic3, switch, optnode), one thread per
// stream or resource (compute, allgather, reduce-scatter, ...).
//
// Spans carry what they did where it is known, as the event's args (docs/timeline.md):
//   bytes             the bytes of the flows and disk reads/writes the span's actor started (a
//                     stream item: a transfer, its share of a collective, a striped SSD read)
//   flops             a GPU kernel's floating-point operations (the trace's count)
//   rate_Bps          bytes / the span's duration (the rate achieved, in bytes/s)
//   rate_flops_per_s  flops / the span's duration (FLOP/s)
// Counter tracks ("ph":"C", one per link that carried traffic, in the process "links") give a
// link's utilization over the iteration: the flow-average rate (each flow's bytes / its duration,
// summed over the flows on the link during their intervals) over the link's bandwidth; likewise
// each disk's reads and writes ("disks": "<disk>:read", "<disk>:write").
//
// With the timeline disabled nothing is recorded and nothing is built: callers test enabled()
// before making labels or amounts.
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace luwu::sim {

// The most points a link's counter track has by default (`run --timeline-counter-points`).
constexpr std::size_t kDefaultTimelineCounterPoints = 2000;

// What a span did, where known; a negative amount is not known and writes no arg.
struct SpanAmounts {
  double bytes = -1;
  double flops = -1;
};

struct TimelineSpan {
  std::string component;  // "gpu0"
  std::string track;      // "compute"
  std::string name;       // "forward L12"
  std::string category;   // "compute", "communication", "optimizer", "io"
  double start_s;
  double end_s;
  SpanAmounts amounts{};
};

// A counter track: (time s, value) points of a step function, in time order.
struct CounterTrack {
  std::string component;  // the process it is drawn in ("links")
  std::string name;       // the link's name
  std::string arg;        // the value's name, with its unit ("utilization")
  std::vector<std::pair<double, double>> points;
};

class Timeline {
 public:
  explicit Timeline(bool enabled = false) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  void add(std::string component, std::string track, std::string name, std::string category, double start_s,
           double end_s, SpanAmounts amounts = {}) {
    if (!enabled_) return;
    spans_.push_back(
        {std::move(component), std::move(track), std::move(name), std::move(category), start_s, end_s, amounts});
  }
  void add_counter(CounterTrack track) {
    if (!enabled_) return;
    counters_.push_back(std::move(track));
  }

  // Bytes attributed to the span an actor (by SimGrid actor id) is running now: a stream opens
  // its item's span before the work and closes it after; the traffic meter adds the bytes of the
  // flows and disk I/O the actor starts.  Only while enabled.
  void open_amounts(long actor) {
    if (enabled_) open_bytes_[actor] = 0;
  }
  // The bytes attributed since open_amounts (0 when none), and the span closed.
  double close_amounts(long actor) {
    auto it = open_bytes_.find(actor);
    if (it == open_bytes_.end()) return 0;
    const double bytes = it->second;
    open_bytes_.erase(it);
    return bytes;
  }
  void attribute_bytes(long actor, double bytes) {
    auto it = open_bytes_.find(actor);
    if (it != open_bytes_.end()) it->second += bytes;
  }

  const std::vector<TimelineSpan>& spans() const { return spans_; }
  const std::vector<CounterTrack>& counters() const { return counters_; }

  // Chrome trace-event format: complete events ("ph":"X") in microseconds, with metadata events
  // naming processes and threads, then the counter events ("ph":"C").  Ids follow first
  // appearance, so output is deterministic.
  nlohmann::json to_chrome_trace() const {
    std::map<std::string, int> pid_of;
    std::map<std::pair<int, std::string>, int> tid_of;
    nlohmann::json events = nlohmann::json::array();
    auto process = [&](const std::string& component) {
      auto [pit, new_pid] = pid_of.try_emplace(component, static_cast<int>(pid_of.size()) + 1);
      if (new_pid)
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pit->second}, {"tid", 0},
                          {"args", {{"name", component}}}});
      return pit->second;
    };
    for (const auto& s : spans_) {
      const int pid = process(s.component);
      auto [tit, new_tid] = tid_of.try_emplace({pid, s.track}, static_cast<int>(tid_of.size()) + 1);
      int tid = tit->second;
      if (new_tid)
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid},
                          {"args", {{"name", s.track}}}});
      nlohmann::json e = {{"ph", "X"},
                          {"name", s.name},
                          {"cat", s.category},
                          {"pid", pid},
                          {"tid", tid},
                          {"ts", s.start_s * 1e6},
                          {"dur", (s.end_s - s.start_s) * 1e6}};
      const double duration = s.end_s - s.start_s;
      if (s.amounts.bytes >= 0) {
        e["args"]["bytes"] = s.amounts.bytes;
        if (duration > 0) e["args"]["rate_Bps"] = s.amounts.bytes / duration;
      }
      if (s.amounts.flops >= 0) {
        e["args"]["flops"] = s.amounts.flops;
        if (duration > 0) e["args"]["rate_flops_per_s"] = s.amounts.flops / duration;
      }
      events.push_back(std::move(e));
    }
    for (const auto& c : counters_) {
      const int pid = process(c.component);
      for (const auto& [t, value] : c.points)
        events.push_back({{"ph", "C"}, {"name", c.name}, {"pid", pid}, {"ts", t * 1e6}, {"args", {{c.arg, value}}}});
    }
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  }

 private:
  bool enabled_;
  std::vector<TimelineSpan> spans_;
  std::vector<CounterTrack> counters_;
  std::unordered_map<long, double> open_bytes_;  // looked up only, never iterated
};

// A step function from intervals: each (start, end, rate) adds `rate` over [start, end).  Returns
// the points (t, value) where the sum changes, in time order, the last one 0; a sum that returns
// to no interval at all is exactly 0 (no rounding crumbs).  With more than `max_points` points
// (max_points >= 2), the function is averaged over max_points equal bins of [first, last] instead,
// so the counter's area (the bytes) is kept; consecutive equal values are merged.
inline std::vector<std::pair<double, double>> step_function(std::vector<std::pair<double, double>> deltas_at,
                                                            std::size_t max_points) {
  // deltas_at: (time, +rate at a start or -rate at an end); an end at the same time as a start
  // is applied with it, as one point.
  std::stable_sort(deltas_at.begin(), deltas_at.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<double, double>> steps;
  double sum = 0;
  long active = 0;
  for (std::size_t i = 0; i < deltas_at.size();) {
    const double t = deltas_at[i].first;
    for (; i < deltas_at.size() && deltas_at[i].first == t; ++i) {
      sum += deltas_at[i].second;
      active += deltas_at[i].second > 0 ? 1 : -1;
    }
    if (active <= 0) sum = 0;
    if (!steps.empty() && steps.back().second == sum) continue;
    steps.emplace_back(t, sum);
  }
  max_points = std::max<std::size_t>(max_points, 2);
  if (steps.size() <= max_points) return steps;
  const double t0 = steps.front().first, t1 = steps.back().first;
  const double width = (t1 - t0) / static_cast<double>(max_points - 1);
  std::vector<std::pair<double, double>> binned;
  std::size_t k = 0;  // the step in force at the bin's start
  for (std::size_t b = 0; b + 1 < max_points; ++b) {
    const double lo = t0 + width * static_cast<double>(b);
    const double hi = b + 2 == max_points ? t1 : lo + width;
    double area = 0, t = lo;
    while (k + 1 < steps.size() && steps[k + 1].first <= lo) ++k;
    for (std::size_t j = k; j < steps.size() && steps[j].first < hi; ++j) {
      const double until = j + 1 < steps.size() ? std::min(hi, steps[j + 1].first) : hi;
      if (until > t) area += steps[j].second * (until - t);
      t = std::max(t, until);
    }
    const double mean = hi > lo ? area / (hi - lo) : 0;
    if (binned.empty() || binned.back().second != mean) binned.emplace_back(lo, mean);
  }
  if (binned.back().second != 0) binned.emplace_back(t1, 0.0);
  return binned;
}

}  // namespace luwu::sim
