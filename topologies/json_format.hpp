#pragma once
// The JSON topology format (save and load round-trip exactly):
//
// {
//   "format": "luwusim-topology", "version": 1,
//   "builder": "luwu-star", "builder_args": {...},          // optional: how it was generated
//   "network_Bps": 6.25e9,                                  // optional: Topology::network_Bps
//   "profiles": {"<name>": {<profile>}, ...},               // optional: Topology::profiles
//   "vertices": [ {"name": "gpu0", "kind": "gpu", "profile": "a100-40gb-sxm", "server": 0,
//                  "speed_flops": 3.12e14}, ... ],
//   "links": [ {"name": "gpu0--pcie0-0", "kind": "pcie", "profile": "pcie-gen4-x16",
//               "from": "gpu0", "to": "pcie0-0", "bandwidth_Bps": 2.6e10, "latency_s": 1e-6}, ... ]
// }
//
// Vertex fields: name, kind (gpu, cpu, pcie-switch, nic, smartnic, nvswitch, switch,
// programmable-switch, optimizer-node, ssd, memory), profile, server (-1: none), ports,
// port_Bps, speed_flops, read_Bps, write_Bps, read_write_Bps, capacity_bytes (absent = 0).
// Link fields: name (default "<from>--<to>"), kind (pcie, nvlink, nvswitch, ethernet, nvme,
// memory), profile, from, to, bandwidth_Bps (per direction), latency_s.
// Files written by hand may give quantities as strings with units ("100Gb/s", "1.5us", "3.84TB");
// files written by luwusim always hold numbers in SI base units.
// "profiles" holds the topology's own profiles (a scenario's inline and overridden ones) in the
// form of models::catalog_to_json, each validated as a profile file is (errors at
// $.profiles.<name>...); vertex and link "profile" names resolve there before the shipped
// profiles.  "network_Bps" is the NICs' line rate when a builder overrode it (absent or 0: each NIC
// profile's own); it and "profiles" are written only when set.  Files from before these keys existed kept them as
// builder_args.network_Bps and builder_args.profile_catalog: those are read too.
#include <string>

#include "common/json_input.hpp"
#include "topologies/topology.hpp"

namespace luwu::topologies {

luwu::Json topology_to_json(const Topology& topo);
// Structural errors (unknown fields, unknown kinds, links to missing vertices, duplicate names)
// throw luwu::InputError naming the file and JSON path.  Does not run validate_topology().
Topology topology_from_json(const luwu::JsonNode& root);

// Reads, parses and validates (validate_topology) a topology file.
Topology load_topology(const std::string& file);
// Writes atomically.
void save_topology(const Topology& topo, const std::string& file);

// JSON paths of vertices and links, as used in error messages.
inline std::string vertex_json_path(Vertex v) { return "$.vertices[" + std::to_string(v) + "]"; }
inline std::string link_json_path(std::size_t link_index) { return "$.links[" + std::to_string(link_index) + "]"; }

}  // namespace luwu::topologies
