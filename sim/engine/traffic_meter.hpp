#pragma once
// Counts the bytes every simulated flow puts on every link of its route, so results can say where
// the traffic went (per-link bytes and utilization, per-spine bytes).  Cheap per flow: a route is
// looked up once per host pair and keeps pointers to its links' counters, so recording a flow adds
// its bytes through those pointers; disk traffic is counted per disk and direction.  Link and disk
// names are read only when results are written.
// With a timeline (attach_timeline), each flow's bytes also go to the span its actor is running,
// and each flow's interval is kept for the links' counter tracks (link_counters); without one,
// none of that runs.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "sim/engine/timeline.hpp"
#include "topologies/lowering.hpp"

namespace luwu::sim {

class TrafficMeter {
 public:
  // Call before the simulation starts; a disabled timeline (or none) records nothing more.
  void attach_timeline(Timeline* timeline) { timeline_ = timeline != nullptr && timeline->enabled() ? timeline : nullptr; }

  void record_flow(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, double bytes) {
    record_flow(src, dst, bytes, nullptr);
  }
  // `comm` is the flow's activity (started, or done): with a timeline its start and finish times
  // place the flow on the links' counter tracks.  Its bytes go to the span that the calling actor,
  // or the actor `on_behalf_of` (a helper actor working for it), is running.
  // `route_variant` > 0: a sub-flow of a split flow, on that route variant of the pair
  // (topologies::ScopedRouteVariant).
  void record_flow(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, double bytes,
                   const simgrid::s4u::CommPtr& comm, long on_behalf_of = -1, unsigned route_variant = 0) {
    ++flows_;
    Route& r = cached(src, dst, route_variant);
    // Counters are made on a route's first flow, so a link only looked at (a latency) is not listed.
    if (r.counters.size() != r.links.size())
      for (auto* link : r.links) r.counters.push_back(&link_bytes_[link]);
    for (double* counter : r.counters) *counter += bytes;
    if (timeline_ != nullptr) [[unlikely]] {
      timeline_->attribute_bytes(on_behalf_of >= 0 ? on_behalf_of : simgrid::s4u::this_actor::get_pid(), bytes);
      if (comm) log_interval(r, bytes, comm);
    }
  }
  // Whether flows' intervals are kept (a timeline is attached).  A flow recorded before its comm
  // exists (start_transfer counts it first, as it always has) gives its comm here.
  bool logs_flows() const { return timeline_ != nullptr; }
  void log_flow_interval(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, double bytes,
                         const simgrid::s4u::CommPtr& comm, unsigned route_variant = 0) {
    if (timeline_ != nullptr && comm) log_interval(cached(src, dst, route_variant), bytes, comm);
  }
  // Traffic that does not cross the simulated network, counted per resource: a disk's reads or
  // writes ("<disk>:read", "<disk>:write" in resource_bytes), or any other named resource.
  void record_disk(const simgrid::s4u::Disk* disk, bool read, double bytes) {
    disk_bytes_[{disk, read}] += bytes;
    if (timeline_ != nullptr) [[unlikely]]
      timeline_->attribute_bytes(simgrid::s4u::this_actor::get_pid(), bytes);
  }
  void record_resource(const std::string& resource, double bytes) {
    resource_bytes_[resource] += bytes;
    if (timeline_ != nullptr) [[unlikely]]
      timeline_->attribute_bytes(simgrid::s4u::this_actor::get_pid(), bytes);
  }

  // A disk read or write of `bytes` from start to finish (striped I/O, with a timeline only).
  void log_disk_interval(const simgrid::s4u::Disk* disk, bool read, double bytes, double start_s, double end_s) {
    if (timeline_ != nullptr) disk_log_.push_back({disk, read, bytes, start_s, end_s});
  }
  // The disks' counter tracks, in the process "disks": per disk and direction that moved bytes
  // ("<disk>:read", "<disk>:write", in name order), the flow-average rate of its reads (writes)
  // over its read (write) bandwidth, as link_counters does for links.
  std::vector<CounterTrack> disk_counters(std::size_t max_points) const {
    std::map<std::string, std::pair<double, std::vector<std::pair<double, double>>>> by_name;  // bandwidth, deltas
    for (const auto& io : disk_log_) {
      const double duration = io.end_s - io.start_s;
      if (!(duration > 0) || !(io.bytes > 0)) continue;
      auto& [bandwidth, deltas] = by_name[disk_direction_name(io.disk, io.read)];
      bandwidth = io.read ? io.disk->get_read_bandwidth() : io.disk->get_write_bandwidth();
      deltas.emplace_back(io.start_s, io.bytes / duration);
      deltas.emplace_back(io.end_s, -io.bytes / duration);
    }
    std::vector<CounterTrack> out;
    for (auto& [name, track] : by_name) {
      auto steps = step_function(std::move(track.second), max_points);
      for (auto& [t, value] : steps) value /= track.first;
      out.push_back({"disks", name, "utilization", std::move(steps)});
    }
    return out;
  }

  // The links' counter tracks, after the simulation: per link that carried a logged flow (in
  // name order), its utilization as a step function of time, the flow-average rate over the
  // link's bandwidth.  Each flow adds bytes / (finish - start) over [start, finish): the rate it
  // achieved on average, not the max-min share it had at each instant (which the engine does not
  // expose), so the sum may exceed 1 where a flow that ran alone at first later shared the link.
  // At most `max_points` points per link (step_function bins beyond that, keeping the bytes).
  std::vector<CounterTrack> link_counters(std::size_t max_points) {
    drain_finished(true);
    std::unordered_map<const simgrid::s4u::Link*, std::vector<std::pair<double, double>>> deltas;
    for (const auto& f : flow_log_) {
      const double duration = f.end_s - f.start_s;
      if (!(duration > 0) || !(f.bytes > 0)) continue;  // nothing a rate can be drawn for
      const double rate = f.bytes / duration;
      for (auto* link : f.route->links) {
        auto& d = deltas[link];
        d.emplace_back(f.start_s, rate);
        d.emplace_back(f.end_s, -rate);
      }
    }
    std::map<std::string, const simgrid::s4u::Link*> by_name;
    for (const auto& [link, d] : deltas) by_name.emplace(link->get_name(), link);
    std::vector<CounterTrack> out;
    for (const auto& [name, link] : by_name) {
      auto steps = step_function(std::move(deltas[link]), max_points);
      const double bandwidth = link->get_bandwidth();
      for (auto& [t, value] : steps) value /= bandwidth;
      out.push_back({"links", name, "utilization", std::move(steps)});
    }
    return out;
  }

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
  // Bytes per resource, by name (disks as "<disk>:read" / "<disk>:write").
  std::map<std::string, double> resource_bytes() const {
    std::map<std::string, double> out = resource_bytes_;
    for (const auto& [disk, bytes] : disk_bytes_) out[disk_direction_name(disk.first, disk.second)] += bytes;
    return out;
  }
  static std::string disk_direction_name(const simgrid::s4u::Disk* disk, bool read) {
    return disk->get_name() + (read ? ":read" : ":write");
  }

  // The route of a flow, and its latency (cached: routes do not change during a simulation).
  const std::vector<simgrid::s4u::Link*>& route(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                                                unsigned variant = 0) {
    return cached(src, dst, variant).links;
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
  struct LoggedFlow {
    const Route* route;  // into routes_, whose nodes never move
    double bytes, start_s, end_s;
  };
  struct DiskIo {
    const simgrid::s4u::Disk* disk;
    bool read;
    double bytes, start_s, end_s;
  };
  struct PendingFlow {
    const Route* route;
    double bytes;
    simgrid::s4u::CommPtr comm;
  };
  void log_interval(const Route& r, double bytes, const simgrid::s4u::CommPtr& comm) {
    if (comm->get_state() == simgrid::s4u::Activity::State::FINISHED) {
      flow_log_.push_back({&r, bytes, comm->get_start_time(), comm->get_finish_time()});
      return;
    }
    // Flows recorded as they start are kept until they finish; finished ones are moved to the
    // log now and then, so memory follows the flows in flight, not every flow of the run.
    pending_.push_back({&r, bytes, comm});
    if (pending_.size() >= drain_at_) drain_finished(false);
  }
  void drain_finished(bool all) {
    std::vector<PendingFlow> still;
    for (auto& p : pending_) {
      if (p.comm->get_state() == simgrid::s4u::Activity::State::FINISHED)
        flow_log_.push_back({p.route, p.bytes, p.comm->get_start_time(), p.comm->get_finish_time()});
      else if (!all)
        still.push_back(std::move(p));
    }
    pending_ = std::move(still);
    drain_at_ = std::max<std::size_t>(1024, 2 * pending_.size());
  }
  Route& cached(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, unsigned variant = 0) {
    if (variant != 0) {
      const auto key = std::make_tuple(src, dst, variant);
      auto it = variant_routes_.find(key);
      if (it == variant_routes_.end()) {
        Route r;
        topologies::ScopedRouteVariant on(variant);
        src->route_to(dst, r.links, nullptr);
        r.latency_s = topologies::route_latency_s(r.links);
        it = variant_routes_.emplace(key, std::move(r)).first;
      }
      return it->second;
    }
    const HostPair key{src, dst};
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      Route r;
      src->route_to(dst, r.links, nullptr);
      r.latency_s = topologies::route_latency_s(r.links);
      it = routes_.emplace(key, std::move(r)).first;
    }
    return it->second;
  }
  std::uint64_t flows_ = 0;
  // Keyed by the link, iterated only through link_bytes_by_name(), so its order never shows.
  std::unordered_map<const simgrid::s4u::Link*, double> link_bytes_;
  std::map<std::string, double> resource_bytes_;
  // Keyed by the disk and the direction (true: read); named only by resource_bytes().
  std::map<std::pair<const simgrid::s4u::Disk*, bool>, double> disk_bytes_;
  using HostPair = std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>;
  struct HostPairHash {
    std::size_t operator()(const HostPair& p) const {
      return std::hash<const void*>{}(p.first) * 31 + std::hash<const void*>{}(p.second);
    }
  };
  std::unordered_map<HostPair, Route, HostPairHash> routes_;  // looked up only, never iterated; nodes never move
  // Sub-flows' routes (variant > 0), looked up only; map nodes never move.
  std::map<std::tuple<const simgrid::s4u::Host*, const simgrid::s4u::Host*, unsigned>, Route> variant_routes_;
  Timeline* timeline_ = nullptr;
  std::vector<LoggedFlow> flow_log_;  // in the order flows were recorded (or drained): deterministic
  std::vector<PendingFlow> pending_;
  std::vector<DiskIo> disk_log_;
  std::size_t drain_at_ = 1024;
};

}  // namespace luwu::sim
