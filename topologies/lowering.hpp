#pragma once
// Lowering a topology to a SimGrid platform, built programmatically.
//
// - Every vertex becomes a SimGrid host named <prefix><vertex name>, so actors can run on GPUs,
//   CPUs, NICs, switches (in-network aggregation and multicast run as actors on the switch host)
//   and the optimizer node.  Host speed: the vertex's speed_flops when set (GPUs: peak dense
//   16-bit tensor FLOP/s from the GPU profile), otherwise LoweringOptions::default_speed_flops
//   (1 FLOP/s: forwarding elements compute nothing; the simulator computes durations itself and
//   sleeps or executes accordingly).
// - Every link becomes a split-duplex link <prefix><link name> (SimGrid creates <name>_UP and
//   <name>_DOWN) with the link's per-direction bandwidth and latency.  _UP carries traffic from
//   the link's "from" vertex to its "to" vertex (boost::source -> boost::target), _DOWN the reverse.
// - Every SSD becomes a SimGrid disk <prefix><ssd name> (read/write bandwidth from its profile)
//   on the host of the CPU or optimizer node that owns it (Topology::ssds_of); an SSD with no
//   owner gets the disk on its own host.
// - Routes: all vertices live in one netzone of our own kind (GraphZone, a subclass of SimGrid's
//   kernel NetZoneImpl) whose get_local_route() returns exactly the graph's route
//   (shortest_route(), or an ECMP pick between the NICs; inside a server the widest of the
//   minimum-hop routes, NVLink before PCIe) for the pair asked, computed lazily on first use and
//   cached.  Nothing is precomputed, so a 4,096-GPU fat-tree costs only its hosts and links; a
//   route costs one breadth-first search the first time a pair communicates.
// - Sharing: flows on a link share it equally (max-min, per flow), as RDMA fabrics, PCIe and NVLink
//   arbitrate.  SimGrid's CM02 would weigh each flow's share by its route's latency (TCP's
//   round-trip unfairness: a flow across three switches got a tenth of a link against a one-hop
//   copy), so every route reports one stand-in latency to SimGrid and a latency factor restores
//   each flow's own; Host::route_to's latency is that stand-in: use route_latency_s(links).
//
// SimGrid's Engine is one per process.  Several topologies can be lowered into the same engine
// with different name prefixes (each gets its own GraphZone under the root zone; when the engine
// has no platform yet, an empty root zone "luwusim-root" is created).  Hosts of different
// lowerings cannot communicate with each other.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "topologies/topology.hpp"

namespace luwu::topologies {

// Configures the network model for RDMA fabrics; call before the platform is created (lowering
// does, unless told not to).  Why: SimGrid's default model (LV08) is calibrated for TCP (it scales
// bandwidth by about 0.97 and latency by about 13), crosstraffic models TCP acks flowing back, and
// a TCP window bounds each flow; RDMA fabrics (RoCE, InfiniBand, PCIe, NVLink) do none of that.
// With CM02, no crosstraffic, no window and unit factors, a single flow takes exactly latency +
// bytes / bottleneck bandwidth, the alpha-beta form the hardware models use.
void configure_engine_for_rdma(simgrid::s4u::Engine& engine);

enum class RouteChoice {
  Shortest,  // the deterministic shortest_route() for every pair
  EcmpHash,  // one of the minimum-hop routes, chosen by a fixed hash of (source, destination),
             // as a switch's ECMP hashing spreads flows; deterministic across runs
  Spray,     // per-packet spraying, in a flow-level model: a flow between NICs is split evenly
             // over all its minimum-hop routes, one sub-flow per route (sub_flow_count)
};

// Several routes per host pair.  SimGrid asks a zone for one route per (source, destination);
// a flow that is split into sub-flows (spraying, or ECMP with application-level flow splitting)
// starts sub-flow i > 0 while this selector says i (route variant i of the pair, see
// LoweringOptions), inside the engine's own context so that no other actor runs in between
// (sim/engine/transfers.cpp).  Variant 0 is the pair's ordinary route, the one every flow took
// before, so a run that splits nothing is unchanged.
class ScopedRouteVariant {
 public:
  explicit ScopedRouteVariant(unsigned variant);
  ~ScopedRouteVariant();
  ScopedRouteVariant(const ScopedRouteVariant&) = delete;
  ScopedRouteVariant& operator=(const ScopedRouteVariant&) = delete;
  static unsigned current();

 private:
  unsigned previous_;
};

// How many sub-flows a flow from one host to another is split into under its platform's routing:
// spraying, one per minimum-hop route between the two NICs (up to ecmp_max_paths); ECMP with
// flow_splitting k > 1, k when there is more than one route; otherwise, and for a route that stays
// inside a server or hosts of different lowerings, 1.
std::size_t sub_flow_count(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);

// A route's latency: the sum of its links' (what a flow on it pays before its bytes move).
double route_latency_s(const std::vector<simgrid::s4u::Link*>& links);

struct LoweringOptions {
  std::string name_prefix;           // prepended to every host, link and disk name
  double default_speed_flops = 1.0;  // host speed of vertices without speed_flops
  RouteChoice route_choice = RouteChoice::Shortest;
  std::size_t ecmp_max_paths = 64;   // routes considered by EcmpHash and Spray
  // Application-level flow splitting under EcmpHash: a flow between NICs is issued as this many
  // sub-flows, sub-flow i hashed from (source, destination, i) (i = 0 is the unsplit flow's hash).
  std::size_t flow_splitting = 1;
  bool configure_rdma = true;        // call configure_engine_for_rdma() first
};

struct RouteCache;  // the graph and the routes computed so far, shared with the GraphZone

struct LoweredPlatform {
  std::vector<simgrid::s4u::Host*> host_of_vertex;             // by vertex
  std::vector<simgrid::s4u::SplitDuplexLink*> link_of_edge;    // by link index
  std::map<std::string, simgrid::s4u::Disk*> disks;             // by SSD vertex name
  simgrid::s4u::NetZone* zone = nullptr;
  std::shared_ptr<RouteCache> routes;

  // Throws std::invalid_argument for an unknown vertex name.
  simgrid::s4u::Host* host(const std::string& vertex_name) const;
  // The directional SimGrid link a transfer over `edge` leaving `from` uses (_UP or _DOWN).
  simgrid::s4u::Link* directed_link(const Topology& topo, Edge edge, Vertex from) const;
  // Number of routes computed (and cached) so far.
  std::size_t cached_route_count() const;
};

LoweredPlatform lower_to_simgrid(const Topology& topo, simgrid::s4u::Engine& engine, const LoweringOptions& options = {});

}  // namespace luwu::topologies
