#include "sim/engine/hardware.hpp"

#include <stdexcept>

namespace luwu::sim {
namespace {

models::HostSpec host_of(const topologies::Topology& topo, const models::ProfileCatalog& catalog,
                         topologies::Vertex host) {
  auto host_profile = catalog.resolve(topo[host].profile);
  auto ssds = topo.ssds_of(host);
  if (ssds.empty()) return models::host_from_profiles(host_profile);
  auto ssd_profile = catalog.resolve(topo[ssds.front()].profile);
  return models::host_from_profiles(host_profile, &ssd_profile, static_cast<int>(ssds.size()));
}

models::NicSpec nic_of(const topologies::Topology& topo, const models::ProfileCatalog& catalog,
                       topologies::Vertex nic) {
  auto profile = catalog.resolve(topo[nic].profile);
  models::NicSpec spec =
      profile.kind == "smartnic" ? models::smartnic_from_profile(profile).nic : models::nic_from_profile(profile);
  // A builder's line-rate override ("network": "200Gb/s") applies to every NIC it built.
  if (topo.network_Bps > 0) spec.line_rate_Bps = topo.network_Bps;
  return spec;
}

}  // namespace

Hardware hardware_of(const topologies::Topology& topo) {
  auto gpus = topo.gpus();
  if (gpus.empty()) throw std::invalid_argument("the topology has no GPU");
  const models::ProfileCatalog& catalog = topo.profiles;
  Hardware hw;
  hw.gpu = models::gpu_from_profile(catalog.resolve(topo[gpus.front()].profile));
  hw.worker_host = host_of(topo, catalog, topo.cpu_of(gpus.front()));
  if (auto node = topo.optimizer_node()) hw.optimizer_node = host_of(topo, catalog, *node);
  auto nic = topo.nic_of(gpus.front());
  hw.worker_nic = nic_of(topo, catalog, nic);
  if (auto sw = topo.switch_of(nic)) {
    auto profile = catalog.resolve(topo[*sw].profile);
    if (profile.has("aggregation_slots")) hw.network_switch = models::switch_from_profile(profile);
  }
  return hw;
}

}  // namespace luwu::sim
