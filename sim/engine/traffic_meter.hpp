#pragma once
// Counts the bytes every simulated flow puts on every link of its route, and what each host sends
// and receives, so results can say where the traffic went (per-link bytes and utilization).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace luwu::sim {

class TrafficMeter {
 public:
  void record_flow(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, double bytes) {
    ++flows_;
    sent_[src->get_name()] += bytes;
    received_[dst->get_name()] += bytes;
    for (auto* link : route(src, dst)) link_bytes_[link->get_name()] += bytes;
  }
  // Traffic that does not cross the simulated network (e.g. a disk read), counted per resource.
  void record_resource(const std::string& resource, double bytes) { resource_bytes_[resource] += bytes; }

  std::uint64_t flows() const { return flows_; }
  double sent(const std::string& host) const { return lookup(sent_, host); }
  double received(const std::string& host) const { return lookup(received_, host); }
  const std::map<std::string, double>& link_bytes() const { return link_bytes_; }
  const std::map<std::string, double>& resource_bytes() const { return resource_bytes_; }

  // The route of a flow, and its latency (cached: routes do not change during a simulation).
  const std::vector<simgrid::s4u::Link*>& route(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst) {
    auto key = std::make_pair(src, dst);
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      Route r;
      src->route_to(dst, r.links, &r.latency_s);
      it = routes_.emplace(key, std::move(r)).first;
    }
    return it->second.links;
  }
  double route_latency_s(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst) {
    route(src, dst);
    return routes_.at({src, dst}).latency_s;
  }

 private:
  struct Route {
    std::vector<simgrid::s4u::Link*> links;
    double latency_s = 0;
  };
  static double lookup(const std::map<std::string, double>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  }
  std::uint64_t flows_ = 0;
  std::map<std::string, double> sent_, received_, link_bytes_, resource_bytes_;
  std::map<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>, Route> routes_;  // lookup only
};

}  // namespace luwu::sim
