#pragma once
// What the cluster a system runs on costs, from a price list (models/prices.hpp): its bill of
// materials is the topology's devices that the system uses, each priced by its profile.
//   - always: the worker servers (their host profile: chassis, CPUs, DRAM), GPUs, NICs and the
//     network switches;
//   - the worker servers' SSDs only for a system that keeps state on them (ZeRO-Infinity's NVMe);
//   - the optimizer node (its server, NICs and SSDs) only for a system that uses one (LuWu);
//   - dedicated parameter servers (their machines and NICs) only for a system that uses them;
//   - never priced apart: what is part of a server (DRAM, PCIe and NVLink switches), and the
//     parts a server's price includes (a DGX's GPUs, NICs, SSDs).
// A device whose profile has no price leaves the cost unknown; the result names it.
#include <map>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "models/prices.hpp"
#include "topologies/topology.hpp"

namespace luwu::sim {

struct ClusterParts {
  bool worker_ssds = false;
  bool optimizer_node = false;
  bool parameter_servers = false;  // dedicated CPU machines (ps<k>)
};

struct ClusterCost {
  std::string price_list;
  std::map<std::string, int> parts;  // priced profile -> count
  std::vector<std::string> unpriced;  // profiles counted without a price (the cost is then unknown)
  double usd = 0;

  bool known() const { return unpriced.empty(); }
};

ClusterCost cluster_cost(const topologies::Topology& topology, const models::PriceList& prices, ClusterParts used);

// {"price_list", "usd" (null when unknown), "tokens_per_s_per_1000_usd" (null when unknown or
// the system does not run), "parts", "unpriced"}.
luwu::Json cost_to_json(const ClusterCost& cost, double tokens_per_s);

}  // namespace luwu::sim
