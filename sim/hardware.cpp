#include "sim/hardware.hpp"

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
  if (topo.builder_args.is_object() && topo.builder_args.contains("network_Bps")) {
    double line = topo.builder_args.at("network_Bps").get<double>();
    if (line > 0) spec.line_rate_Bps = line;
  }
  return spec;
}

// The scenario's inline and overridden profiles, as the topology recorded them (sim/scenario.cpp).
models::ProfileCatalog catalog_of(const topologies::Topology& topo) {
  if (!topo.builder_args.is_object() || !topo.builder_args.contains(kProfileCatalogKey)) return {};
  const std::string file = topo.source_file.empty() ? "topology" : topo.source_file;
  return models::catalog_from_json(
      JsonNode(topo.builder_args.at(kProfileCatalogKey), file, std::string("$.builder_args.") + kProfileCatalogKey));
}

}  // namespace

Hardware hardware_of(const topologies::Topology& topo) {
  auto gpus = topo.gpus();
  if (gpus.empty()) throw std::invalid_argument("the topology has no GPU");
  const models::ProfileCatalog catalog = catalog_of(topo);
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
