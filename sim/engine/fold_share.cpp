#include "sim/engine/fold_share.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "sim/engine/transfers.hpp"

namespace luwu::sim {

std::vector<double> max_min_rates(const std::vector<std::vector<std::size_t>>& routes,
                                  const std::vector<double>& capacity_Bps) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> rate(routes.size(), 0.0);
  std::vector<bool> frozen(routes.size(), false);
  std::vector<double> left = capacity_Bps;
  std::vector<std::vector<std::size_t>> flows_on(capacity_Bps.size());
  std::vector<std::size_t> active(capacity_Bps.size(), 0);  // unfrozen flows on each link
  for (std::size_t f = 0; f < routes.size(); ++f) {
    if (routes[f].empty()) {
      rate[f] = kInf;
      frozen[f] = true;
    }
    for (std::size_t l : routes[f]) {
      flows_on.at(l).push_back(f);
      ++active[l];
    }
  }
  // Progressive filling: raise every unfrozen flow together until a link fills; freeze its flows.
  for (;;) {
    double step = kInf;
    for (std::size_t l = 0; l < left.size(); ++l)
      if (active[l] > 0) step = std::min(step, left[l] / static_cast<double>(active[l]));
    if (step == kInf) break;
    for (std::size_t f = 0; f < routes.size(); ++f)
      if (!frozen[f]) rate[f] += step;
    std::vector<std::size_t> full;
    for (std::size_t l = 0; l < left.size(); ++l) {
      if (active[l] == 0) continue;
      left[l] -= step * static_cast<double>(active[l]);
      if (left[l] <= 1e-12 * capacity_Bps[l]) full.push_back(l);
    }
    for (std::size_t l : full)
      for (std::size_t f : flows_on[l]) {
        if (frozen[f]) continue;
        frozen[f] = true;
        for (std::size_t k : routes[f]) --active[k];
      }
  }
  return rate;
}

std::vector<FoldShare> slowest_flow_per_ring(const std::vector<std::vector<simgrid::s4u::Host*>>& rings,
                                             TrafficMeter& traffic) {
  std::vector<std::vector<std::size_t>> routes;
  std::unordered_map<const simgrid::s4u::Link*, std::size_t> link_index;  // in first-seen order
  std::vector<double> capacity_Bps;
  std::vector<std::size_t> flow_of_route;  // which ring flow each (sub-)route belongs to
  std::vector<std::size_t> parts;          // sub-flows per ring flow
  std::vector<std::size_t> ring_of_flow;
  std::vector<double> latency;             // per ring flow, its route's
  for (std::size_t k = 0; k < rings.size(); ++k) {
    const auto& ring = rings[k];
    if (ring.size() < 2) continue;
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const auto* from = ring[i];
      const auto* to = ring[(i + 1) % ring.size()];
      const std::size_t n = sub_flows_between(from, to);
      for (std::size_t v = 0; v < n; ++v) {
        std::vector<std::size_t> route;
        for (const auto* link : traffic.route(from, to, static_cast<unsigned>(v))) {
          auto [it, added] = link_index.emplace(link, capacity_Bps.size());
          if (added) capacity_Bps.push_back(link->get_bandwidth());
          route.push_back(it->second);
        }
        routes.push_back(std::move(route));
        flow_of_route.push_back(parts.size());
      }
      parts.push_back(n);
      ring_of_flow.push_back(k);
      latency.push_back(traffic.route_latency_s(from, to));
    }
  }
  const std::vector<double> rates = max_min_rates(routes, capacity_Bps);
  // A split flow's parts each carry 1/n of its bytes and it ends with the slowest: n x that rate.
  std::vector<double> flow_rate(parts.size(), std::numeric_limits<double>::infinity());
  for (std::size_t r = 0; r < routes.size(); ++r)
    flow_rate[flow_of_route[r]] = std::min(flow_rate[flow_of_route[r]], rates[r]);
  std::vector<FoldShare> slowest(rings.size(), FoldShare{std::numeric_limits<double>::infinity(), 0});
  for (std::size_t f = 0; f < parts.size(); ++f) {
    FoldShare& ring = slowest[ring_of_flow[f]];
    const double rate = flow_rate[f] * static_cast<double>(parts[f]);
    if (rate < ring.rate_Bps * (1 - 1e-9))
      ring = {rate, latency[f]};
    else if (rate <= ring.rate_Bps * (1 + 1e-9))
      ring.latency_s = std::max(ring.latency_s, latency[f]);
  }
  return slowest;
}

const std::vector<FoldShare>& FoldLoad::shares(std::size_t g, bool cross, TrafficMeter& traffic) {
  auto& by_group = cross ? cross_ : world_;
  if (by_group.empty()) {
    std::vector<std::vector<simgrid::s4u::Host*>> rings;
    std::vector<std::size_t> first, count;  // each group's rings in `rings`
    for (const auto& group : groups_) {
      first.push_back(rings.size());
      if (!cross) {
        rings.push_back(group.hosts);
      } else {
        std::map<int, std::size_t> seen;  // server -> its ranks so far
        std::vector<std::vector<simgrid::s4u::Host*>> by_index;
        for (std::size_t r = 0; r < group.hosts.size(); ++r) {
          const std::size_t i = seen[group.servers.at(r)]++;
          if (by_index.size() <= i) by_index.resize(i + 1);
          by_index[i].push_back(group.hosts[r]);
        }
        rings.insert(rings.end(), by_index.begin(), by_index.end());
      }
      count.push_back(rings.size() - first.back());
    }
    const std::vector<FoldShare> all = slowest_flow_per_ring(rings, traffic);
    for (std::size_t k = 0; k < groups_.size(); ++k)
      by_group.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(first[k]),
                            all.begin() + static_cast<std::ptrdiff_t>(first[k] + count[k]));
  }
  return by_group.at(g);
}

}  // namespace luwu::sim
