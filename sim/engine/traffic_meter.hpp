#pragma once
// Counts the bytes every simulated flow puts on every link of its route, so results can say where
// the traffic went (per-link bytes and utilization, per-spine bytes).  Cheap per flow: a route is
// looked up once per host pair and keeps pointers to its links' counters, so recording a flow adds
// its bytes through those pointers; link names are read only when results are written.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace luwu::sim {

class TrafficMeter {
 public:
  void record_flow(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, double bytes) {
    ++flows_;
    Route& r = cached(src, dst);
    // Counters are made on a route's first flow, so a link only looked at (a latency) is not listed.
    if (r.counters.size() != r.links.size())
      for (auto* link : r.links) r.counters.push_back(&link_bytes_[link]);
    for (double* counter : r.counters) *counter += bytes;
  }
  // Traffic that does not cross the simulated network (e.g. a disk read), counted per resource.
  void record_resource(const std::string& resource, double bytes) { resource_bytes_[resource] += bytes; }

  std::uint64_t flows() const { return flows_; }
  // Bytes a directed link carried (0 for one no flow used).
  double bytes_on(const simgrid::s4u::Link* link) const {
    auto it = link_bytes_.find(link);
    return it == link_bytes_.end() ? 0.0 : it->second;
  }
  // Every link some flow used, by name (results list links in name order, whatever the run's).
  std::map<std::string, double> link_bytes_by_name() const {
    std::map<std::string, double> out;
    for (const auto& [link, bytes] : link_bytes_) out.emplace(link->get_name(), bytes);
    return out;
  }
  const std::map<std::string, double>& resource_bytes() const { return resource_bytes_; }

  // The route of a flow, and its latency (cached: routes do not change during a simulation).
  const std::vector<simgrid::s4u::Link*>& route(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst) {
    return cached(src, dst).links;
  }
  double route_latency_s(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst) {
    return cached(src, dst).latency_s;
  }

 private:
  struct Route {
    std::vector<simgrid::s4u::Link*> links;
    std::vector<double*> counters;  // into link_bytes_, whose nodes never move
    double latency_s = 0;
  };
  Route& cached(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst) {
    auto key = std::make_pair(src, dst);
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      Route r;
      src->route_to(dst, r.links, &r.latency_s);
      it = routes_.emplace(key, std::move(r)).first;
    }
    return it->second;
  }
  std::uint64_t flows_ = 0;
  // Keyed by the link, iterated only through link_bytes_by_name(), so its order never shows.
  std::unordered_map<const simgrid::s4u::Link*, double> link_bytes_;
  std::map<std::string, double> resource_bytes_;
  std::map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, Route> routes_;  // lookup only
};

}  // namespace luwu::sim
