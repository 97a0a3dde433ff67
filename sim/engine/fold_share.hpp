#pragma once
// What a folded ring leaves out, put back: the load of the ranks not simulated on the links they
// share with others.  A folded data-parallel group simulates a few ranks standing for many; on a
// network where the whole group's ring flows meet on shared links (spines under ECMP or one path,
// oversubscribed leaves, rack trunks), the left-out flows slow every ring step, since a step ends
// for everyone when its slowest flow does.  Every represented ring flow is routed as the platform
// routes it (the same ECMP hash), all at once, and shares its links max-min per flow, as the
// engine does (topologies/lowering.hpp); the slowest flow of a ring is that ring's pace, its
// "fold share".  Static: it assumes every group's rings (all tensor slices and pipeline stages)
// load the links at once and nothing else crosses them.  Measured against every rank simulated it
// is close, not exact (docs/performance.md, Folding: within 0.4% in most cases, 1-4% off where
// ranks drift apart or pipeline transfers share the links), so such folds stay marked not exact.
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "sim/engine/traffic_meter.hpp"

namespace luwu::sim {

// Max-min fair rates (progressive filling, equal weights) of flows that all run at once, each on
// its route, a list of link indices into `capacity_Bps`.  A flow with an empty route gets +inf.
std::vector<double> max_min_rates(const std::vector<std::vector<std::size_t>>& routes,
                                  const std::vector<double>& capacity_Bps);

// For each ring of `rings` (hosts in ring order, each sending to the next, the last to the first),
// when every ring moves one step at once on the platform's routes: its slowest flow's rate, and
// that flow's route latency, which a ring step pays before its bytes move (of a ring's slowest
// flows, the longest).  A flow split into sub-flows (ECMP flow splitting) ends with its slowest
// one.  Rate +inf for a ring of fewer than two hosts.
struct FoldShare {
  double rate_Bps = 0;
  double latency_s = 0;
};
std::vector<FoldShare> slowest_flow_per_ring(const std::vector<std::vector<simgrid::s4u::Host*>>& rings,
                                             TrafficMeter& traffic);

// The represented data-parallel groups whose rings load the links together (each as its ranks'
// GPU hosts in rank order, with their servers), and their rings' shares, computed once for every
// folded group that reads them.
class FoldLoad {
 public:
  struct Group {
    std::vector<simgrid::s4u::Host*> hosts;
    std::vector<int> servers;
  };
  explicit FoldLoad(std::vector<Group> groups) : groups_(std::move(groups)) {}
  const std::vector<Group>& groups() const { return groups_; }
  // The shares of group `g`'s rings: its world ring (one), or its rings across servers, one per
  // index inside a server (the ring of every server's i-th rank, servers in the order their ranks
  // come), every group's rings of that kind loading the links at once.
  const std::vector<FoldShare>& shares(std::size_t g, bool cross, TrafficMeter& traffic);

 private:
  std::vector<Group> groups_;
  std::vector<std::vector<FoldShare>> world_, cross_;  // by group; empty until computed
};

}  // namespace luwu::sim
