#include <algorithm>
#include "topologies/lowering.hpp"

#include <limits>
#include <map>
#include <tuple>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <xbt/config.hpp>

#include "topologies/routes.hpp"

namespace luwu::topologies {

namespace sg4 = simgrid::s4u;
namespace sgr = simgrid::kernel::routing;
using LinkImpl = simgrid::kernel::resource::StandardLinkImpl;

void configure_engine_for_rdma(sg4::Engine& /*engine*/) {
  // Once per process (SimGrid has one engine per process, and refuses to change the model once a
  // platform exists, even to the same value, so a second lowering must not set it again).
  static bool configured = false;
  if (configured) return;
  configured = true;
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  // A window too large to bind.  Not 0: CM02 bounds a flow by min(its rate cap, TCP-gamma /
  // (2 x latency)) and a bound of 0 means none, which would also drop every rate cap.
  sg4::Engine::set_config("network/TCP-gamma:1e100");
  // Measured here: without these CM02 still scales bandwidth (a 1 MB flow on a 12.5 GB/s link
  // took 106 us instead of 80 us).  Link numbers are goodputs already (models/).
  // The latency factor is lower_to_simgrid's callback (route_latency_factor), which SimGrid
  // refuses beside the setting.
  sg4::Engine::set_config("network/bandwidth-factor:1.0");
}

double route_latency_s(const std::vector<sg4::Link*>& links) {
  double latency = 0;
  for (const auto* link : links) latency += link->get_latency();
  return latency;
}

namespace {
// What every route reports to SimGrid as its latency (GraphZone::get_local_route): the same for
// all, so that CM02's sharing, weighted by it, is per flow.
constexpr double kReportedRouteLatency_s = 1.0;

// SimGrid's latency factor for a flow: its route's real latency over the stand-in reported.
double route_latency_factor(double /*bytes*/, const sg4::Host* /*from*/, const sg4::Host* /*to*/,
                            const std::vector<sg4::Link*>& links, const std::unordered_set<sg4::NetZone*>& /*zones*/) {
  return route_latency_s(links) / kReportedRouteLatency_s;
}

unsigned current_route_variant = 0;  // the engine and its actors run in one thread (SimGrid's default)
}  // namespace

ScopedRouteVariant::ScopedRouteVariant(unsigned variant) : previous_(current_route_variant) {
  current_route_variant = variant;
}
ScopedRouteVariant::~ScopedRouteVariant() { current_route_variant = previous_; }
unsigned ScopedRouteVariant::current() { return current_route_variant; }

struct RouteCache {
  struct Cached {
    std::vector<LinkImpl*> links;
    double latency_s = 0;
  };
  Topology topo;
  RouteChoice choice = RouteChoice::Shortest;
  std::size_t ecmp_max_paths = 64;
  std::size_t flow_splitting = 1;
  std::vector<Vertex> vertex_of_netpoint;  // by NetPoint::id() within the zone
  std::vector<LinkImpl*> up, down;         // by link index
  std::unordered_map<std::uint64_t, Cached> cache;                  // variant 0
  std::map<std::tuple<Vertex, Vertex, unsigned>, Cached> variant_cache;  // variants > 0
  std::unordered_map<std::uint64_t, std::size_t> sub_flows_cache;

  // Whether a flow from `from` to `to` leaves the server (crosses a NIC).
  bool leaves_server(Vertex from, Vertex to) const {
    const auto visited = route_vertices(topo, from, shortest_route(topo, from, to));
    return std::any_of(visited.begin(), visited.end(), [&](Vertex v) {
      return topo[v].kind == VertexKind::Nic || topo[v].kind == VertexKind::SmartNic;
    });
  }

  std::size_t sub_flows(Vertex from, Vertex to) {
    if (choice == RouteChoice::Shortest || (choice == RouteChoice::EcmpHash && flow_splitting <= 1)) return 1;
    const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
    auto it = sub_flows_cache.find(key);
    if (it != sub_flows_cache.end()) return it->second;
    std::size_t n = 1;
    if (from != to && leaves_server(from, to)) {
      const std::size_t routes = ecmp_routes(topo, own_nic(from), own_nic(to), ecmp_max_paths).size();
      if (routes > 1) n = choice == RouteChoice::Spray ? routes : flow_splitting;
    }
    return sub_flows_cache.emplace(key, n).first->second;
  }

  // A GPU's traffic that leaves its server goes out and in through the GPU's own NIC (NCCL binds
  // each rank to its NIC; Topology::nic_of), even where another NIC on the same PCIe switch is as
  // few hops away; only between the NICs do switches choose among equal-cost routes.
  std::vector<Edge> graph_route(Vertex from, Vertex to, unsigned variant) {
    std::vector<Edge> direct = fabric_route(from, to, from, to, variant);
    const auto visited = route_vertices(topo, from, direct);
    const bool leaves_server = std::any_of(visited.begin(), visited.end(), [&](Vertex v) {
      return topo[v].kind == VertexKind::Nic || topo[v].kind == VertexKind::SmartNic;
    });
    if (!leaves_server) return in_server_route(from, to);
    const Vertex out = own_nic(from), in = own_nic(to);
    if (out == from && in == to) return direct;
    std::vector<Edge> route = shortest_route(topo, from, out);
    for (Edge e : fabric_route(out, in, from, to, variant)) route.push_back(e);
    for (Edge e : shortest_route(topo, in, to)) route.push_back(e);
    return route;
  }

  // Inside a server no switch hashes flows: the transport takes the fastest of the minimum-hop
  // routes (NCCL sends GPU to GPU over NVLink, never PCIe peer-to-peer where NVLink exists, though
  // both are two hops when the GPUs share a PCIe switch), the first in routes.hpp's order on ties.
  // An ECMP pick here had sent some NVLink ring steps over PCIe at a twelfth of the bandwidth.
  std::vector<Edge> in_server_route(Vertex from, Vertex to) const {
    auto routes = ecmp_routes(topo, from, to, ecmp_max_paths);
    auto bottleneck = [&](const std::vector<Edge>& r) {
      double bw = std::numeric_limits<double>::infinity();
      for (Edge e : r) bw = std::min(bw, topo[e].bandwidth_Bps);
      return bw;
    };
    std::size_t best = 0;
    for (std::size_t i = 1; i < routes.size(); ++i)
      if (bottleneck(routes[i]) > bottleneck(routes[best])) best = i;
    return routes.at(best);
  }

  // splitmix64 of the ordered pair, and of the sub-flow index when it is not 0.
  static std::uint64_t flow_hash(Vertex flow_from, Vertex flow_to, unsigned sub_flow) {
    std::uint64_t x = (static_cast<std::uint64_t>(flow_from) << 32) ^ static_cast<std::uint64_t>(flow_to);
    for (unsigned round = 0; round < (sub_flow == 0 ? 1u : 2u); ++round) {
      if (round == 1) x ^= static_cast<std::uint64_t>(sub_flow) * 0xd1b54a32d192ed03ULL;
      x += 0x9e3779b97f4a7c15ULL;
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
      x ^= x >> 31;
    }
    return x;
  }

  // Between a and b: the deterministic shortest route, or under ECMP one of the minimum-hop
  // routes picked by a fixed hash of the flow's endpoints (splitmix64 of the ordered pair), the
  // same in every run.  Variant i > 0 (a sub-flow): under ECMP the route hashed from the pair and
  // i (flow splitting), under spraying the i-th route after the pair's hashed one (so the
  // sub-flows 0..n-1 of a sprayed flow take every route once).
  std::vector<Edge> fabric_route(Vertex a, Vertex b, Vertex flow_from, Vertex flow_to, unsigned variant) const {
    if (choice == RouteChoice::Shortest) return shortest_route(topo, a, b);
    auto routes = ecmp_routes(topo, a, b, ecmp_max_paths);
    if (choice == RouteChoice::Spray)
      return routes.at((flow_hash(flow_from, flow_to, 0) % routes.size() + variant) % routes.size());
    return routes.at(flow_hash(flow_from, flow_to, variant) % routes.size());
  }

  // The NIC a GPU's traffic uses; any other vertex is its own way out.
  Vertex own_nic(Vertex v) {
    if (topo[v].kind != VertexKind::Gpu) return v;
    auto it = nic_of_gpu.find(v);
    if (it != nic_of_gpu.end()) return it->second;
    Vertex nic = v;
    try {
      nic = topo.nic_of(v);
    } catch (const std::exception&) {  // a GPU without a NIC: its shortest route is all there is
    }
    return nic_of_gpu.emplace(v, nic).first->second;
  }
  std::unordered_map<Vertex, Vertex> nic_of_gpu;

  const Cached& route(Vertex from, Vertex to, unsigned variant) {
    if (variant != 0) {
      auto it = variant_cache.find({from, to, variant});
      if (it != variant_cache.end()) return it->second;
      return variant_cache.emplace(std::make_tuple(from, to, variant), compute(from, to, variant)).first->second;
    }
    std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    return cache.emplace(key, compute(from, to, 0)).first->second;
  }
  Cached compute(Vertex from, Vertex to, unsigned variant) {
    Cached c;
    Vertex at = from;
    for (Edge e : graph_route(from, to, variant)) {
      const EdgeProps& p = topo[e];
      bool forward = topo.link_from(e) == at;
      c.links.push_back(forward ? up[p.index] : down[p.index]);
      c.latency_s += p.latency_s;
      at = forward ? topo.link_to(e) : topo.link_from(e);
    }
    return c;
  }
};

namespace {

// A netzone whose routes are the cluster graph's routes, computed on demand.
class GraphZone : public sgr::NetZoneImpl {
 public:
  GraphZone(const std::string& name, std::shared_ptr<RouteCache> routes) : NetZoneImpl(name), routes_(std::move(routes)) {}

  void get_local_route(const sgr::NetPoint* src, const sgr::NetPoint* dst, sgr::Route* into, double* latency) override {
    const auto& ids = routes_->vertex_of_netpoint;
    if (src->id() >= ids.size() || dst->id() >= ids.size())
      throw std::logic_error("GraphZone: no vertex for netpoint " + src->get_name() + " or " + dst->get_name());
    const RouteCache::Cached& r = routes_->route(ids[src->id()], ids[dst->id()], current_route_variant);
    into->link_list_.insert(into->link_list_.end(), r.links.begin(), r.links.end());
    // Not the route's latency: SimGrid's CM02 shares a link between flows in inverse proportion to
    // the latency their zone reports (TCP's round-trip unfairness), and RDMA fabrics, PCIe and
    // NVLink arbitrate per flow.  Every route reports the same stand-in, and the latency factor
    // (route_latency_factor) turns it back into the sum of the route's link latencies.
    if (latency) *latency += kReportedRouteLatency_s;
  }

 private:
  friend std::size_t luwu::topologies::sub_flow_count(const sg4::Host*, const sg4::Host*);
  std::shared_ptr<RouteCache> routes_;
};

// The disk owner of every SSD: the first CPU or optimizer node (by vertex order) that owns it.
std::vector<Vertex> ssd_owners(const Topology& topo) {
  std::vector<Vertex> owner(topo.vertex_count(), kUnreachable);
  for (Vertex h = 0; h < topo.vertex_count(); ++h) {
    VertexKind k = topo[h].kind;
    if (k != VertexKind::Cpu && k != VertexKind::OptimizerNode) continue;
    for (Vertex s : topo.ssds_of(h))
      if (owner[s] == kUnreachable) owner[s] = h;
  }
  return owner;
}

}  // namespace

LoweredPlatform lower_to_simgrid(const Topology& topo, sg4::Engine& engine, const LoweringOptions& options) {
  if (options.configure_rdma) configure_engine_for_rdma(engine);
  const std::string& prefix = options.name_prefix;

  auto cache = std::make_shared<RouteCache>();
  cache->topo = topo;
  cache->choice = options.route_choice;
  cache->ecmp_max_paths = options.ecmp_max_paths;
  cache->flow_splitting = options.flow_splitting;

  // The graph zone is a child of the root zone (an empty one is created when there is no
  // platform yet), so that further lowerings can add their own sibling zones.
  sg4::NetZone* root = engine.get_netzone_root();
  if (root == nullptr) root = sg4::create_empty_zone("luwusim-root");
  auto* impl = new GraphZone(prefix + "cluster", cache);  // owned by the engine's zone tree
  sg4::NetZone* zone = impl->get_iface();
  zone->set_parent(root);
  auto* network = zone->get_network_model();
  if (network == nullptr) throw std::logic_error("lowering: SimGrid gave the cluster zone no network model");
  network->set_lat_factor_cb(route_latency_factor);

  LoweredPlatform out;
  out.zone = zone;
  out.routes = cache;
  out.host_of_vertex.resize(topo.vertex_count());
  for (Vertex v = 0; v < topo.vertex_count(); ++v) {
    const VertexProps& p = topo[v];
    double speed = p.speed_flops > 0 ? p.speed_flops : options.default_speed_flops;
    sg4::Host* host = zone->create_host(prefix + p.name, speed);
    host->seal();
    out.host_of_vertex[v] = host;
    auto id = host->get_netpoint()->id();
    if (cache->vertex_of_netpoint.size() <= id) cache->vertex_of_netpoint.resize(id + 1, kUnreachable);
    cache->vertex_of_netpoint[id] = v;
  }
  out.link_of_edge.resize(topo.link_count());
  cache->up.resize(topo.link_count());
  cache->down.resize(topo.link_count());
  for (Edge e : topo.edges()) {
    const EdgeProps& p = topo[e];
    sg4::SplitDuplexLink* link = zone->create_split_duplex_link(prefix + p.name, p.bandwidth_Bps);
    link->set_latency(p.latency_s);
    link->seal();
    out.link_of_edge[p.index] = link;
    cache->up[p.index] = link->get_link_up()->get_impl();
    cache->down[p.index] = link->get_link_down()->get_impl();
  }
  auto owner = ssd_owners(topo);
  for (Vertex s : topo.of_kind(VertexKind::Ssd)) {
    const VertexProps& p = topo[s];
    sg4::Host* host = out.host_of_vertex[owner[s] == kUnreachable ? s : owner[s]];
    sg4::Disk* disk = host->create_disk(prefix + p.name, p.read_Bps, p.write_Bps);
    if (p.read_write_Bps > 0) disk->set_readwrite_bandwidth(p.read_write_Bps);
    disk->seal();
    out.disks.emplace(p.name, disk);
  }
  zone->seal();
  return out;
}

sg4::Host* LoweredPlatform::host(const std::string& vertex_name) const {
  if (routes) {
    if (auto v = routes->topo.find_vertex(vertex_name)) return host_of_vertex.at(*v);
  }
  throw std::invalid_argument("no vertex named \"" + vertex_name + "\" in the lowered platform");
}

sg4::Link* LoweredPlatform::directed_link(const Topology& topo, Edge edge, Vertex from) const {
  sg4::SplitDuplexLink* link = link_of_edge.at(topo[edge].index);
  return topo.link_from(edge) == from ? link->get_link_up() : link->get_link_down();
}

std::size_t sub_flow_count(const sg4::Host* from, const sg4::Host* to) {
  auto* zone = dynamic_cast<GraphZone*>(from->get_englobing_zone()->get_impl());
  if (zone == nullptr || to->get_englobing_zone() != from->get_englobing_zone()) return 1;
  const auto& ids = zone->routes_->vertex_of_netpoint;
  const auto a = from->get_netpoint()->id(), b = to->get_netpoint()->id();
  if (a >= ids.size() || b >= ids.size()) return 1;
  return zone->routes_->sub_flows(ids[a], ids[b]);
}

std::size_t LoweredPlatform::cached_route_count() const { return routes ? routes->cache.size() : 0; }

}  // namespace luwu::topologies
