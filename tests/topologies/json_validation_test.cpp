#include <doctest/doctest.h>

#include <cstdio>

#include "common/input_error.hpp"
#include "models/profile.hpp"
#include "tests/topologies/topology_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/json_format.hpp"
#include "topologies/validate.hpp"

using namespace topo_test;
using namespace luwu::topologies;

namespace {

// A small hand-written topology: two GPUs with NICs on one switch of 2 ports at 100 Gb/s.
luwu::Json hand_written() {
  return luwu::Json::parse(R"({
    "vertices": [
      {"name": "gpu0", "kind": "gpu", "server": 0},
      {"name": "nic0", "kind": "nic", "server": 0},
      {"name": "gpu1", "kind": "gpu", "server": 1},
      {"name": "nic1", "kind": "nic", "server": 1},
      {"name": "switch", "kind": "switch", "ports": 2, "port_Bps": "100Gb/s"}
    ],
    "links": [
      {"kind": "pcie", "from": "gpu0", "to": "nic0", "bandwidth_Bps": "25GB/s", "latency_s": "1us"},
      {"kind": "pcie", "from": "gpu1", "to": "nic1", "bandwidth_Bps": 25e9, "latency_s": 1e-6},
      {"kind": "ethernet", "from": "nic0", "to": "switch", "bandwidth_Bps": "100Gb/s", "latency_s": "1us"},
      {"kind": "ethernet", "from": "nic1", "to": "switch", "bandwidth_Bps": "100Gb/s", "latency_s": "1us"}
    ]})");
}

// Loads `j` from a file and returns the InputError it raises.
luwu::InputError load_error(const luwu::Json& j) {
  std::string path = temp_path("bad.json");
  write_text(path, j.dump(2));
  try {
    load_topology(path);
  } catch (const luwu::InputError& e) {
    std::remove(path.c_str());
    return e;
  }
  std::remove(path.c_str());
  FAIL("expected an InputError");
  return luwu::InputError("", "", "");
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("JSON: a hand-written topology loads with units converted to SI") {
  std::string path = temp_path("good.json");
  write_text(path, hand_written().dump());
  Topology t = load_topology(path);
  std::remove(path.c_str());
  CHECK(t.vertex_count() == 5);
  CHECK(t.link_count() == 4);
  CHECK(t[t.edge(0)].bandwidth_Bps == 25e9);
  CHECK(t[t.edge(0)].latency_s == doctest::Approx(1e-6).scale(0));
  CHECK(t[t.edge(0)].name == "gpu0--nic0");  // default name
  CHECK(t[t.edge(2)].bandwidth_Bps == 100e9 / 8);
  CHECK(t[t.vertex("switch")].port_Bps == 100e9 / 8);
  CHECK(t[t.nic_of(t.vertex("gpu1"))].name == "nic1");
}

TEST_CASE("JSON: save then load round-trips exactly") {
  for (const Topology& original :
       {build_luwu_star(LuwuStarParams{}), build_dgx(DgxParams{}), build_fat_tree(FatTreeParams{})}) {
    std::string path = temp_path("roundtrip.json");
    save_topology(original, path);
    Topology back = load_topology(path);
    std::remove(path.c_str());
    REQUIRE(back.vertex_count() == original.vertex_count());
    REQUIRE(back.link_count() == original.link_count());
    for (Vertex v = 0; v < original.vertex_count(); ++v) CHECK(back[v] == original[v]);
    for (std::size_t i = 0; i < original.link_count(); ++i) {
      Edge a = original.edge(i), b = back.edge(i);
      CHECK(back[b] == original[a]);
      CHECK(boost::source(b, back.graph) == boost::source(a, original.graph));
      CHECK(boost::target(b, back.graph) == boost::target(a, original.graph));
    }
    CHECK(back.builder == original.builder);
    CHECK(back.builder_args == original.builder_args);
    CHECK(topology_to_json(back) == topology_to_json(original));
  }
}

namespace {
// luwu-star with the SSD's read bandwidth overridden in its catalog and a 50 Gb/s line rate.
Topology star_with_own_profiles() {
  auto ssd = luwu::models::find_profile("samsung-pm1733");
  luwu::models::apply_override(ssd, "read_bandwidth", 9e9);
  luwu::models::ProfileCatalog catalog;
  catalog.add(ssd);
  LuwuStarParams p;
  p.workers = 2;
  p.network_Bps = 50e9 / 8;
  return build_luwu_star(p, catalog);
}

// The topology read back from `j` written to a file.
Topology load_json(const luwu::Json& j) {
  std::string path = temp_path("load.json");
  write_text(path, j.dump(2));
  TempFile remove{path};
  return load_topology(path);
}
}  // namespace

TEST_CASE("JSON: a topology's own profiles and line rate are saved under their own keys and read back") {
  const Topology original = star_with_own_profiles();
  const luwu::Json j = topology_to_json(original);
  REQUIRE(j.contains("profiles"));
  CHECK(j["profiles"]["samsung-pm1733"]["fields"]["read_bandwidth"]["value"] == 9e9);
  CHECK(j["network_Bps"] == 50e9 / 8);
  CHECK_FALSE(j["builder_args"].contains("profile_catalog"));
  const Topology back = load_json(j);
  REQUIRE(back.profiles.find("samsung-pm1733") != nullptr);
  CHECK(back.profiles.find("samsung-pm1733")->get("read_bandwidth") == 9e9);
  CHECK(back.profiles.find("samsung-pm1733")->get("write_bandwidth") ==
        luwu::models::find_profile("samsung-pm1733").get("write_bandwidth"));
  CHECK(back.network_Bps == 50e9 / 8);
  CHECK(topology_to_json(back) == j);
  // Shipped profiles at their own line rate: neither key is written.
  const luwu::Json plain = topology_to_json(build_luwu_star(LuwuStarParams{}));
  CHECK_FALSE(plain.contains("profiles"));
  CHECK_FALSE(plain.contains("network_Bps"));
}

TEST_CASE("JSON: older files' builder_args.profile_catalog and builder_args.network_Bps are read") {
  const Topology original = star_with_own_profiles();
  luwu::Json old = topology_to_json(original);
  old["builder_args"]["profile_catalog"] = old["profiles"];
  old.erase("profiles");
  old.erase("network_Bps");
  REQUIRE(old["builder_args"]["network_Bps"] == 50e9 / 8);  // the builder's argument, as recorded
  const Topology back = load_json(old);
  REQUIRE(back.profiles.find("samsung-pm1733") != nullptr);
  CHECK(back.profiles.find("samsung-pm1733")->get("read_bandwidth") == 9e9);
  CHECK(back.network_Bps == 50e9 / 8);
  CHECK_FALSE(back.builder_args.contains("profile_catalog"));
  CHECK(topology_to_json(back) == topology_to_json(original));

  luwu::Json both = topology_to_json(original);
  both["builder_args"]["profile_catalog"] = both["profiles"];
  CHECK(load_error(both).json_path() == "$.builder_args.profile_catalog");
}

TEST_CASE("JSON: a bad profile or line rate in a topology file names its JSON path") {
  const luwu::Json good = topology_to_json(star_with_own_profiles());
  luwu::Json j = good;
  j["profiles"]["samsung-pm1733"]["fields"]["read_bandwidth"]["unit"] = "TFLOP/s";
  CHECK(load_error(j).json_path() == "$.profiles.samsung-pm1733.fields.read_bandwidth.unit");
  j = good;
  j["profiles"]["samsung-pm1733"]["name"] = "pm1733";
  CHECK(load_error(j).json_path() == "$.profiles.samsung-pm1733.name");
  j = good;
  j["profiles"] = luwu::Json::array();
  CHECK(load_error(j).json_path() == "$.profiles");
  j = good;
  j["network_Bps"] = -1;
  CHECK(load_error(j).json_path() == "$.network_Bps");
  j = good;
  j.erase("network_Bps");
  j["builder_args"]["network_Bps"] = "fast";
  CHECK(load_error(j).json_path() == "$.builder_args.network_Bps");
  j = good;
  j["builder_args"]["profile_catalog"] = j["profiles"];
  j.erase("profiles");
  j["builder_args"]["profile_catalog"]["samsung-pm1733"]["fields"]["read_bandwidth"]["value"] = 0;
  CHECK(load_error(j).json_path() == "$.builder_args.profile_catalog.samsung-pm1733.fields.read_bandwidth.value");
}

TEST_CASE("JSON: a copied topology keeps working edge descriptors, its profiles and line rate") {
  Topology a = star_with_own_profiles();
  const luwu::Json built = topology_to_json(a);
  Topology b = a;
  Topology c = std::move(a);
  CHECK(b[b.edge(3)].index == 3);
  CHECK(c[c.edge(3)].name == b[b.edge(3)].name);
  CHECK(topology_to_json(b) == built);
  CHECK(topology_to_json(c) == built);
  Topology d;
  d = b;
  CHECK(topology_to_json(d) == built);
  REQUIRE(d.profiles.find("samsung-pm1733") != nullptr);
  CHECK(d.network_Bps == 50e9 / 8);
}

TEST_CASE("validation: a typo in a field name suggests the right one") {
  luwu::Json j = hand_written();
  j["links"][2].erase("bandwidth_Bps");
  j["links"][2]["bandwith_Bps"] = 1e9;
  auto e = load_error(j);
  CHECK(e.json_path() == "$.links[2].bandwith_Bps");
  CHECK(contains(e.what(), "unknown field"));
  CHECK(contains(e.what(), "did you mean \"bandwidth_Bps\""));
  CHECK(contains(e.file(), "bad.json"));
}

TEST_CASE("validation: a misspelt kind suggests the right one") {
  luwu::Json j = hand_written();
  j["vertices"][4]["kind"] = "swich";
  auto e = load_error(j);
  CHECK(e.json_path() == "$.vertices[4].kind");
  CHECK(contains(e.what(), "did you mean \"switch\""));
}

TEST_CASE("validation: a link to a vertex that does not exist") {
  luwu::Json j = hand_written();
  j["links"][1]["to"] = "nic7";
  auto e = load_error(j);
  CHECK(e.json_path() == "$.links[1].to");
  CHECK(contains(e.what(), "no vertex named \"nic7\""));
}

TEST_CASE("validation: a vertex's or link's profile must exist, a GPU's must be a GPU's") {
  luwu::Json j = hand_written();
  j["vertices"][1]["profile"] = "rdma-nic-200gx";
  auto e = load_error(j);
  CHECK(e.json_path() == "$.vertices[1].profile");
  CHECK(contains(e.file(), "bad.json"));
  CHECK(contains(e.what(), "rdma-nic-200gx"));

  j = hand_written();
  j["links"][2]["profile"] = "no-such-nic";
  e = load_error(j);
  CHECK(e.json_path() == "$.links[2].profile");
  CHECK(contains(e.what(), "no-such-nic"));

  j = hand_written();
  j["vertices"][0]["profile"] = "rdma-nic-200g";  // a shipped profile, of a NIC
  e = load_error(j);
  CHECK(e.json_path() == "$.vertices[0].profile");
  CHECK(contains(e.what(), "is a nic profile, not a gpu one"));

  j = hand_written();  // shipped profiles of the right kinds load
  j["vertices"][0]["profile"] = "a100-40gb-sxm";
  j["vertices"][1]["profile"] = "rdma-nic-200g";
  std::string path = temp_path("good-profiles.json");
  write_text(path, j.dump());
  CHECK_NOTHROW(load_topology(path));
  std::remove(path.c_str());
}

TEST_CASE("validation: a missing link leaves a GPU unable to reach a switch") {
  luwu::Json j = hand_written();
  j["links"].erase(3);  // nic1 -- switch
  auto e = load_error(j);
  CHECK(e.json_path() == "$.vertices[2]");
  CHECK(contains(e.what(), "\"gpu1\" cannot reach any network switch"));
}

TEST_CASE("validation: a vertex cut off from the rest") {
  luwu::Json j = hand_written();
  j["vertices"].push_back({{"name", "lonely-ssd"}, {"kind", "ssd"}});
  auto e = load_error(j);
  CHECK(e.json_path() == "$.vertices[5]");
  CHECK(contains(e.what(), "lonely-ssd"));
}

TEST_CASE("validation: more links on a switch than it has ports") {
  luwu::Json j = hand_written();
  j["vertices"].push_back({{"name", "nic2"}, {"kind", "nic"}});
  j["links"].push_back({{"kind", "ethernet"}, {"from", "nic2"}, {"to", "switch"}, {"bandwidth_Bps", 1e9}, {"latency_s", 0}});
  auto e = load_error(j);
  CHECK(e.json_path() == "$.vertices[4]");
  CHECK(contains(e.what(), "\"switch\" has 3 links but only 2 ports"));
}

TEST_CASE("validation: a link faster than the switch ports") {
  luwu::Json j = hand_written();
  j["links"][3]["bandwidth_Bps"] = "200Gb/s";
  auto e = load_error(j);
  CHECK(e.json_path() == "$.links[3].bandwidth_Bps");
  CHECK(contains(e.what(), "nic1--switch"));
}

TEST_CASE("validation: a zero bandwidth, a negative latency, a bad unit, a duplicate name") {
  luwu::Json j = hand_written();
  j["links"][0]["bandwidth_Bps"] = 0;
  auto e = load_error(j);
  CHECK(e.json_path() == "$.links[0].bandwidth_Bps");

  j = hand_written();
  j["links"][0]["latency_s"] = -1;
  CHECK(load_error(j).json_path() == "$.links[0].latency_s");

  j = hand_written();
  j["links"][0]["latency_s"] = "1GB";
  CHECK(contains(load_error(j).what(), "wrong dimension"));

  j = hand_written();
  j["vertices"][3]["name"] = "gpu1";
  CHECK(load_error(j).json_path() == "$.vertices[3].name");

  j = hand_written();
  j["vertices"][4].erase("ports");
  CHECK(load_error(j).json_path() == "$.vertices[4].ports");
}

TEST_CASE("validation: a vertex's own speed, disk rates and capacity are bounded where given") {
  // A host speed of 1e-300 FLOP/s once gave 0 s of compute: the engine's work units underflowed.
  luwu::Json j = hand_written();
  j["vertices"][0]["speed_flops"] = 1e-300;
  auto e = load_error(j);
  CHECK(e.json_path() == "$.vertices[0].speed_flops");
  CHECK(contains(e.what(), "1 MFLOP/s"));
  j = hand_written();
  j["vertices"][0]["speed_flops"] = 1e300;
  CHECK(load_error(j).json_path() == "$.vertices[0].speed_flops");
  j = hand_written();
  j["vertices"][4]["port_Bps"] = 1e300;
  CHECK(load_error(j).json_path() == "$.vertices[4].port_Bps");
  for (const char* field : {"read_Bps", "write_Bps", "read_write_Bps", "capacity_bytes"}) {
    CAPTURE(field);
    j = hand_written();
    j["vertices"][1][field] = 1e-300;
    CHECK(load_error(j).json_path() == std::string("$.vertices[1].") + field);
  }
  // Absent or 0: the default, as before; a real GPU's speed loads.
  j = hand_written();
  j["vertices"][0]["speed_flops"] = 0;
  j["vertices"][2]["speed_flops"] = "312TFLOP/s";
  const std::string path = temp_path("speeds.json");
  write_text(path, j.dump(2));
  CHECK_NOTHROW(load_topology(path));
  std::remove(path.c_str());
}

TEST_CASE("validation: errors are InputErrors, not crashes, for malformed files") {
  std::string path = temp_path("malformed.json");
  write_text(path, "{\"vertices\": [}");
  CHECK_THROWS_AS(load_topology(path), luwu::InputError);
  write_text(path, "{\"vertices\": 3, \"links\": []}");
  CHECK_THROWS_AS(load_topology(path), luwu::InputError);
  write_text(path, "{\"vertices\": [], \"links\": []}");
  CHECK_THROWS_AS(load_topology(path), luwu::InputError);
  std::remove(path.c_str());
  CHECK_THROWS_AS(load_topology(temp_path("does-not-exist.json")), luwu::InputError);
}
