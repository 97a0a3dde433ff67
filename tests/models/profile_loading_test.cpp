// Loading hardware profiles: every shipped profile is valid and sourced; malformed ones are rejected
// with the file and the JSON path of the bad field.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/models.hpp"

using namespace luwu;
using namespace luwu::models;

namespace {

// A small valid SSD profile, as text, for tests to break one field at a time.
Json valid_ssd() {
  return Json::parse(R"({
    "name": "test-ssd", "kind": "ssd", "description": "an SSD for tests",
    "fields": {
      "read_bandwidth":  {"value": 7.0, "unit": "GB/s", "source": "test"},
      "write_bandwidth": {"value": 3.8, "unit": "GB/s", "source": "test"},
      "capacity":        {"value": 3.84, "unit": "TB", "source": "test"},
      "latency":         {"value": 90, "unit": "us", "source": "test", "assumption": true}
    }})");
}

// The InputError a profile raises, or a failed check if none.
InputError rejection(const Json& json, const std::string& file = "bad.json") {
  try {
    profile_from_json(JsonNode(json, file));
  } catch (const InputError& e) {
    return e;
  }
  FAIL("profile was accepted");
  return InputError("", "", "");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a valid profile loads with every value converted to base units") {
  Profile p = profile_from_json(JsonNode(valid_ssd(), "ssd.json"));
  CHECK(p.name == "test-ssd");
  CHECK(p.kind == "ssd");
  CHECK(p.file == "ssd.json");
  CHECK(p.get("read_bandwidth") == doctest::Approx(7.0e9));   // 7 GB/s = 7e9 B/s
  CHECK(p.get("capacity") == doctest::Approx(3.84e12));       // 3.84 TB = 3.84e12 B
  CHECK(p.get("latency") == doctest::Approx(90e-6).scale(0));          // 90 us
  CHECK(p.fields.at("latency").assumption);
  CHECK_FALSE(p.fields.at("capacity").assumption);
  CHECK(p.fields.at("read_bandwidth").unit == "GB/s");
  CHECK(p.fields.at("read_bandwidth").value_in_unit == 7.0);
  CHECK(p.get_or("no_such_field", 42.0) == 42.0);
}

TEST_CASE("a missing unit is rejected naming the field's JSON path") {
  Json j = valid_ssd();
  j["fields"]["capacity"].erase("unit");
  auto e = rejection(j);
  CHECK(e.file() == "bad.json");
  CHECK(e.json_path() == "$.fields.capacity");
  CHECK(contains(e.what(), "unit"));
}

TEST_CASE("a missing or blank source is rejected") {
  Json j = valid_ssd();
  j["fields"]["latency"].erase("source");
  auto e = rejection(j);
  CHECK(e.json_path() == "$.fields.latency");
  CHECK(contains(e.what(), "source"));

  Json blank = valid_ssd();
  blank["fields"]["latency"]["source"] = "  ";
  CHECK(rejection(blank).json_path() == "$.fields.latency.source");
}

TEST_CASE("an unknown field is rejected with the nearest known field suggested") {
  Json j = valid_ssd();
  j["fields"]["read_bandwith"] = {{"value", 1}, {"unit", "GB/s"}, {"source", "typo"}};
  auto e = rejection(j);
  CHECK(e.json_path() == "$.fields.read_bandwith");
  CHECK(contains(e.what(), "did you mean \"read_bandwidth\""));
}

TEST_CASE("a negative or zero bandwidth is rejected at its value") {
  Json j = valid_ssd();
  j["fields"]["write_bandwidth"]["value"] = -3.8;
  auto e = rejection(j);
  CHECK(e.json_path() == "$.fields.write_bandwidth.value");
  CHECK(contains(e.what(), "positive"));

  Json zero = valid_ssd();
  zero["fields"]["read_bandwidth"]["value"] = 0;
  CHECK(rejection(zero).json_path() == "$.fields.read_bandwidth.value");
}

TEST_CASE("a unit of the wrong dimension is rejected at the unit") {
  Json j = valid_ssd();
  j["fields"]["read_bandwidth"]["unit"] = "GB";  // a size where a rate is needed
  auto e = rejection(j);
  CHECK(e.json_path() == "$.fields.read_bandwidth.unit");
  CHECK(contains(e.what(), "B/s"));

  Json unknown = valid_ssd();
  unknown["fields"]["latency"]["unit"] = "fortnights";
  CHECK(rejection(unknown).json_path() == "$.fields.latency.unit");
}

TEST_CASE("a missing required field, an unknown kind, a wrong kind, a stray key are rejected") {
  Json missing = valid_ssd();
  missing["fields"].erase("latency");
  auto e = rejection(missing);
  CHECK(e.json_path() == "$.fields");
  CHECK(contains(e.what(), "latency"));

  Json kind = valid_ssd();
  kind["kind"] = "sdd";
  auto k = rejection(kind);
  CHECK(k.json_path() == "$.kind");
  CHECK(contains(k.what(), "did you mean \"ssd\""));

  Json stray = valid_ssd();
  stray["fields"]["capacity"]["comment"] = "x";
  CHECK(rejection(stray).json_path() == "$.fields.capacity.comment");

  Profile ssd = profile_from_json(JsonNode(valid_ssd(), "ssd.json"));
  try {
    gpu_from_profile(ssd);
    FAIL("an ssd profile made a GPU");
  } catch (const InputError& err) {
    CHECK(err.file() == "ssd.json");
    CHECK(err.json_path() == "$.kind");
  }
}

TEST_CASE("flags need a boolean value and the unit \"boolean\", counts must be whole") {
  Profile bf2 = find_profile("bluefield2-200g");
  Json j = profile_to_json(bf2);
  j["fields"]["gpudirect"]["value"] = 1;
  CHECK(rejection(j).json_path() == "$.fields.gpudirect.value");

  Json unit = profile_to_json(bf2);
  unit["fields"]["gpudirect"]["unit"] = "count";
  CHECK(rejection(unit).json_path() == "$.fields.gpudirect.unit");

  Json frac = profile_to_json(bf2);
  frac["fields"]["dma_engines"]["value"] = 2.5;
  CHECK(rejection(frac).json_path() == "$.fields.dma_engines.value");
}

TEST_CASE("a bad profile file is named in the error, Profile::get names the missing field's path") {
  std::string path = "models-test-bad-profile.json";
  Json j = valid_ssd();
  j["fields"]["capacity"].erase("source");
  { std::ofstream(path) << j.dump(); }
  try {
    load_profile_file(path);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.json_path() == "$.fields.capacity");
  }
  std::remove(path.c_str());

  Profile p = profile_from_json(JsonNode(valid_ssd(), "ssd.json"));
  try {
    p.get("read_bandwith");
    FAIL("absent field returned a value");
  } catch (const InputError& e) {
    CHECK(e.file() == "ssd.json");
    CHECK(e.json_path() == "$.fields.read_bandwith");
  }
}

TEST_CASE("an inline profile's errors carry its position in the enclosing file") {
  Json scenario = {{"profiles", Json::array({valid_ssd()})}};
  scenario["profiles"][0]["fields"]["latency"]["value"] = -1;
  try {
    profile_from_json(JsonNode(scenario, "scenario.json").at("profiles").at(0));
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.file() == "scenario.json");
    CHECK(e.json_path() == "$.profiles[0].fields.latency.value");
  }
}

TEST_CASE("every shipped profile loads, is named after its file, is sourced, and builds its spec") {
  auto names = shipped_profile_names();
  REQUIRE(names.size() >= 20);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const auto& name : names) {
    CAPTURE(name);
    Profile p = find_profile(name);
    CHECK(p.name == name);
    CHECK_FALSE(p.description.empty());
    for (const auto& [field, f] : p.fields) {
      CAPTURE(field);
      CHECK_FALSE(f.source.empty());
      CHECK_FALSE(f.unit.empty());
    }
    // Building the typed spec reads every required field of the kind.
    if (p.kind == "gpu") CHECK(gpu_from_profile(p).peak_fp16_flops > 0);
    else if (p.kind == "pcie") CHECK(pcie_from_profile(p).achieved_Bps_per_direction() > 0);
    else if (p.kind == "nvlink" || p.kind == "nvswitch") CHECK(nvlink_from_profile(p).per_direction_Bps > 0);
    else if (p.kind == "nic") CHECK(nic_from_profile(p).goodput_Bps() > 0);
    else if (p.kind == "smartnic") CHECK(smartnic_from_profile(p).throughput_Bps(4096) > 0);
    else if (p.kind == "switch") {
      const SwitchSpec s = switch_from_profile(p);
      CHECK(s.ports * s.port_Bps > 0);
      CHECK(s.aggregates == (s.payload_bytes() > 0));  // a conventional switch has no aggregation fields
    }
    else if (p.kind == "ssd") CHECK(ssd_from_profile(p).read_Bps > 0);
    else if (p.kind == "memory") CHECK(memory_from_profile(p).achieved_Bps() > 0);
    else if (p.kind == "host") CHECK(cpu_from_profile(p).memory_Bps > 0);
    else FAIL("shipped profile of a kind no spec reads: " << p.kind);
  }
}

TEST_CASE("the shipped set covers the devices the project needs") {
  for (const char* name : {"a100-40gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie", "v100-32gb-sxm", "h100-80gb-sxm", "dgx2-nvswitch",
                           "infiniband-edr-100g", "rdma-nic-100g", "rdma-nic-200g", "bluefield2-100g",
                           "bluefield2-200g", "bluefield3-400g", "alveo-u50", "tofino", "tofino2", "pcie-gen3-x16", "pcie-gen4-x16", "pcie-gen5-x16",
                           "samsung-pm1733", "intel-optane-p5800x", "intel-optane-p4800x", "ddr4-3200-dual-socket",
                           "dual-socket-server-2021", "xeon-gold-5320-node"}) {
    CAPTURE(name);
    CHECK_NOTHROW(find_profile(name));
  }
}

TEST_CASE("an unknown profile name suggests the nearest shipped one") {
  try {
    find_profile("a100-40gb-sxn");
    FAIL("found");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "did you mean \"a100-40gb-sxm\""));
  }
}

TEST_CASE("profile_to_json round-trips through the loader in base units") {
  Profile a = find_profile("a100-40gb-sxm");
  Json j = profile_to_json(a);
  CHECK(j["fields"]["peak_fp16_flops"]["unit"] == "FLOP/s");
  CHECK(j["fields"]["peak_fp16_flops"]["value"].get<double>() == doctest::Approx(312e12));
  Profile b = profile_from_json(JsonNode(j, "roundtrip.json"));
  REQUIRE(b.fields.size() == a.fields.size());
  for (const auto& [name, f] : a.fields) {
    CAPTURE(name);
    CHECK(b.get(name) == doctest::Approx(f.value));
    CHECK(b.fields.at(name).source == f.source);
    CHECK(b.fields.at(name).assumption == f.assumption);
  }
}

TEST_CASE("overrides replace a value in base units and are range-checked") {
  Profile nic = find_profile("rdma-nic-100g");
  apply_override(nic, "line_rate", 25e9, "scenario override");
  CHECK(nic_from_profile(nic).line_rate_Bps == 25e9);
  CHECK(nic.fields.at("line_rate").source == "scenario override");
  CHECK_THROWS_AS(apply_override(nic, "line_rate", -1), std::invalid_argument);
  CHECK_THROWS_AS(apply_override(nic, "line_rat", 1e9), std::invalid_argument);
}

TEST_CASE("LUWUSIM_PROFILE_DIR redirects the shipped profiles") {
  std::string dir = "models-test-profile-dir";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/only-ssd.json") << valid_ssd().dump(); }
  ::setenv("LUWUSIM_PROFILE_DIR", dir.c_str(), 1);
  auto names = shipped_profile_names();
  ::unsetenv("LUWUSIM_PROFILE_DIR");
  std::filesystem::remove_all(dir);
  REQUIRE(names.size() == 1);
  CHECK(names[0] == "only-ssd");
}
