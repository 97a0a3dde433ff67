#include "topologies/json_format.hpp"

#include <map>
#include <stdexcept>
#include <string>

#include "common/atomic_write.hpp"
#include "common/input_error.hpp"
#include "common/units.hpp"
#include "models/profile.hpp"
#include "topologies/validate.hpp"

namespace luwu::topologies {

namespace {

constexpr const char* kFormatName = "luwusim-topology";
constexpr int kFormatVersion = 1;
// Where files written before Topology::profiles kept the profiles: builder_args.profile_catalog.
constexpr const char* kOldProfilesKey = "profile_catalog";

// A number in base units, or a string with a unit of the expected dimension.
double quantity(const luwu::JsonNode& node, luwu::units::Dim dim) {
  if (node.is_string()) {
    try {
      return luwu::units::parse_quantity(node.as_string(), dim);
    } catch (const std::invalid_argument& e) {
      node.fail(e.what());
    }
  }
  return node.as_non_negative();
}

double optional_quantity(const luwu::JsonNode& obj, const std::string& key, luwu::units::Dim dim) {
  return obj.has(key) ? quantity(obj.at(key), dim) : 0.0;
}

}  // namespace

luwu::Json topology_to_json(const Topology& topo) {
  luwu::Json out = luwu::Json::object();
  out["format"] = kFormatName;
  out["version"] = kFormatVersion;
  out["builder"] = topo.builder;
  out["builder_args"] = topo.builder_args;
  // Written only when set, so that a topology of shipped profiles at their own line rates reads
  // as it always did.
  if (topo.network_Bps > 0) out["network_Bps"] = topo.network_Bps;
  if (!topo.profiles.empty()) out["profiles"] = models::catalog_to_json(topo.profiles);
  luwu::Json vertices = luwu::Json::array();
  for (Vertex v = 0; v < topo.vertex_count(); ++v) {
    const VertexProps& p = topo[v];
    luwu::Json j = {{"name", p.name}, {"kind", to_string(p.kind)}, {"profile", p.profile}, {"server", p.server}};
    if (p.ports != 0) j["ports"] = p.ports;
    if (p.port_Bps != 0) j["port_Bps"] = p.port_Bps;
    if (p.speed_flops != 0) j["speed_flops"] = p.speed_flops;
    if (p.read_Bps != 0) j["read_Bps"] = p.read_Bps;
    if (p.write_Bps != 0) j["write_Bps"] = p.write_Bps;
    if (p.read_write_Bps != 0) j["read_write_Bps"] = p.read_write_Bps;
    if (p.capacity_bytes != 0) j["capacity_bytes"] = p.capacity_bytes;
    vertices.push_back(std::move(j));
  }
  out["vertices"] = std::move(vertices);
  luwu::Json links = luwu::Json::array();
  for (Edge e : topo.edges()) {
    const EdgeProps& p = topo[e];
    links.push_back({{"name", p.name},
                     {"kind", to_string(p.kind)},
                     {"profile", p.profile},
                     {"from", topo[topo.link_from(e)].name},
                     {"to", topo[topo.link_to(e)].name},
                     {"bandwidth_Bps", p.bandwidth_Bps},
                     {"latency_s", p.latency_s}});
  }
  out["links"] = std::move(links);
  return out;
}

Topology topology_from_json(const luwu::JsonNode& root) {
  using luwu::units::Dim;
  root.only_keys({"format", "version", "builder", "builder_args", "network_Bps", "profiles", "vertices", "links"});
  if (root.has("format")) root.at("format").as_choice_index({kFormatName}, "format");
  if (root.has("version") && root.at("version").as_int(0, 1 << 30) != kFormatVersion)
    root.at("version").fail("unsupported version (this luwusim reads version " + std::to_string(kFormatVersion) + ")");

  Topology topo;
  topo.source_file = root.file();
  topo.builder = root.get_string("builder", "");
  if (root.has("builder_args")) {
    root.at("builder_args").expect_object();
    topo.builder_args = root.at("builder_args").raw();
  }
  // Files written before the line rate and the profiles had keys of their own kept them in
  // builder_args ("network_Bps", "profile_catalog"): read them there too.
  if (root.has("network_Bps"))
    topo.network_Bps = quantity(root.at("network_Bps"), Dim::BytesPerSecond);
  else if (root.has("builder_args") && root.at("builder_args").has("network_Bps"))
    topo.network_Bps = quantity(root.at("builder_args").at("network_Bps"), Dim::BytesPerSecond);
  if (root.has("profiles")) {
    root.at("profiles").expect_object();
    topo.profiles = models::catalog_from_json(root.at("profiles"));
  }
  if (root.has("builder_args") && root.at("builder_args").has(kOldProfilesKey)) {
    const luwu::JsonNode old = root.at("builder_args").at(kOldProfilesKey);
    if (root.has("profiles")) old.fail("the profiles are given twice: keep only the top-level \"profiles\"");
    old.expect_object();
    topo.profiles = models::catalog_from_json(old);
    topo.builder_args.erase(kOldProfilesKey);
  }

  // A profile named by a vertex or link must exist (in the file's catalog or shipped), and a GPU's
  // must be a GPU's: refused here, at the field, not later where the simulator looks it up.
  // Each name is resolved once (a cluster names a few profiles many times).
  std::map<std::string, std::string> profile_kinds;
  auto check_profile = [&](const luwu::JsonNode& node, const std::string& name, const char* needed_kind) {
    if (name.empty()) return;
    auto it = profile_kinds.find(name);
    if (it == profile_kinds.end()) {
      try {
        it = profile_kinds.emplace(name, topo.profiles.resolve(name).kind).first;
      } catch (const std::exception& e) {
        node.fail(e.what());
      }
    }
    if (needed_kind != nullptr && it->second != needed_kind)
      node.fail("profile \"" + name + "\" is a " + it->second + " profile, not a " + needed_kind + " one");
  };

  luwu::JsonNode vertices = root.at("vertices");
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    luwu::JsonNode v = vertices.at(i);
    v.only_keys({"name", "kind", "profile", "server", "ports", "port_Bps", "speed_flops", "read_Bps", "write_Bps",
                 "read_write_Bps", "capacity_bytes"});
    VertexProps p;
    p.name = v.at("name").as_string();
    if (p.name.empty()) v.at("name").fail("a vertex name must not be empty");
    if (topo.find_vertex(p.name)) v.at("name").fail("duplicate vertex name \"" + p.name + "\"");
    p.kind = static_cast<VertexKind>(v.at("kind").as_choice_index(vertex_kind_names(), "vertex kind"));
    p.profile = v.get_string("profile", "");
    if (v.has("profile")) check_profile(v.at("profile"), p.profile, p.kind == VertexKind::Gpu ? "gpu" : nullptr);
    p.server = static_cast<int>(v.get_int("server", -1, -1, 1 << 30));
    p.ports = static_cast<int>(v.get_int("ports", 0, 0, 1 << 20));
    p.port_Bps = optional_quantity(v, "port_Bps", Dim::BytesPerSecond);
    p.speed_flops = optional_quantity(v, "speed_flops", Dim::FlopsPerSecond);
    p.read_Bps = optional_quantity(v, "read_Bps", Dim::BytesPerSecond);
    p.write_Bps = optional_quantity(v, "write_Bps", Dim::BytesPerSecond);
    p.read_write_Bps = optional_quantity(v, "read_write_Bps", Dim::BytesPerSecond);
    p.capacity_bytes = optional_quantity(v, "capacity_bytes", Dim::Bytes);
    topo.add_vertex(std::move(p));
  }

  std::vector<std::string> vertex_names;
  for (Vertex v = 0; v < topo.vertex_count(); ++v) vertex_names.push_back(topo[v].name);
  auto endpoint = [&](const luwu::JsonNode& node) {
    std::string name = node.as_string();
    if (auto v = topo.find_vertex(name)) return *v;
    node.fail("no vertex named \"" + name + "\"" + luwu::did_you_mean(name, vertex_names));
  };

  luwu::JsonNode links = root.at("links");
  std::map<std::string, std::size_t> link_names;
  for (std::size_t i = 0; i < links.size(); ++i) {
    luwu::JsonNode l = links.at(i);
    l.only_keys({"name", "kind", "profile", "from", "to", "bandwidth_Bps", "latency_s"});
    Vertex a = endpoint(l.at("from"));
    Vertex b = endpoint(l.at("to"));
    if (a == b) l.at("to").fail("a link must connect two different vertices");
    EdgeProps p;
    p.name = l.get_string("name", topo[a].name + "--" + topo[b].name);
    if (link_names.count(p.name))
      (l.has("name") ? l.at("name") : l).fail("duplicate link name \"" + p.name + "\" (also links[" +
                                               std::to_string(link_names[p.name]) + "])");
    link_names.emplace(p.name, i);
    p.kind = static_cast<LinkKind>(l.at("kind").as_choice_index(link_kind_names(), "link kind"));
    p.profile = l.get_string("profile", "");
    if (l.has("profile")) check_profile(l.at("profile"), p.profile, nullptr);
    p.bandwidth_Bps = quantity(l.at("bandwidth_Bps"), Dim::BytesPerSecond);
    p.latency_s = quantity(l.at("latency_s"), Dim::Seconds);
    topo.add_link(a, b, std::move(p));
  }
  return topo;
}

Topology load_topology(const std::string& file) {
  luwu::Json json = luwu::load_json_file(file);
  Topology topo = topology_from_json(luwu::JsonNode(json, file));
  validate_topology(topo, file);
  return topo;
}

void save_topology(const Topology& topo, const std::string& file) {
  luwu::write_file_atomically(file, topology_to_json(topo).dump(2) + "\n");
}

}  // namespace luwu::topologies
