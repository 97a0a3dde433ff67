#pragma once
// The timeline of one simulated iteration, written as Chrome trace-event JSON (opens in Perfetto
// or chrome://tracing): one process per component (gpu3, nic3, switch, optnode), one thread per
// stream or resource (compute, allgather, reduce-scatter, ...).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace luwu::sim {

struct TimelineSpan {
  std::string component;  // "gpu0"
  std::string track;      // "compute"
  std::string name;       // "forward L12"
  std::string category;   // "compute", "communication", "optimizer", "io"
  double start_s;
  double end_s;
};

class Timeline {
 public:
  explicit Timeline(bool enabled = false) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  void add(std::string component, std::string track, std::string name, std::string category, double start_s,
           double end_s) {
    if (!enabled_) return;
    spans_.push_back({std::move(component), std::move(track), std::move(name), std::move(category), start_s, end_s});
  }

  const std::vector<TimelineSpan>& spans() const { return spans_; }

  // Chrome trace-event format: complete events ("ph":"X") in microseconds, with metadata events
  // naming processes and threads.  Ids follow first appearance, so output is deterministic.
  nlohmann::json to_chrome_trace() const {
    std::map<std::string, int> pid_of;
    std::map<std::pair<int, std::string>, int> tid_of;
    nlohmann::json events = nlohmann::json::array();
    for (const auto& s : spans_) {
      auto [pit, new_pid] = pid_of.try_emplace(s.component, static_cast<int>(pid_of.size()) + 1);
      int pid = pit->second;
      if (new_pid)
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                          {"args", {{"name", s.component}}}});
      auto [tit, new_tid] = tid_of.try_emplace({pid, s.track}, static_cast<int>(tid_of.size()) + 1);
      int tid = tit->second;
      if (new_tid)
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid},
                          {"args", {{"name", s.track}}}});
      events.push_back({{"ph", "X"},
                        {"name", s.name},
                        {"cat", s.category},
                        {"pid", pid},
                        {"tid", tid},
                        {"ts", s.start_s * 1e6},
                        {"dur", (s.end_s - s.start_s) * 1e6}});
    }
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  }

 private:
  bool enabled_;
  std::vector<TimelineSpan> spans_;
};

}  // namespace luwu::sim
