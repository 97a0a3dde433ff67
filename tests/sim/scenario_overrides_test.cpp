// A scenario's inline profiles and field overrides (cluster.profiles objects, cluster.overrides):
// they reach the topology's links and the simulator's hardware specs, change the simulated
// result in the direction the models say, leave later scenarios untouched, and bad ones are
// InputErrors naming the scenario file and the JSON path.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "models/profile.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "topologies/json_format.hpp"

using luwu::Json;
using namespace luwu;

namespace {

const std::string kFile = "overrides-test.json";

// GPT-3 125M, micro-batch 1, sequence 256, DDP on 2 luwu-star workers: a fraction of a second.
Json tiny_scenario(const Json& cluster_extra = Json::object()) {
  Json s = Json::parse(R"({"name": "tiny", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "recompute": true},
    "cluster": {"topology": "luwu-star", "workers": 2},
    "systems": ["ddp"]})");
  for (auto it = cluster_extra.begin(); it != cluster_extra.end(); ++it) s["cluster"][it.key()] = it.value();
  return s;
}

sim::Scenario parse(const Json& j) { return sim::scenario_from_json(JsonNode(j, kFile)); }

sim::SystemResult simulate(const Json& j) {
  auto run = sim::run_scenario(parse(j), sim::RunOptions{});
  REQUIRE(run.results.size() == 1);
  REQUIRE(run.results[0].feasible);
  return run.results[0];
}

// The link between two named vertices.
const topologies::EdgeProps& link(const topologies::Topology& topo, const std::string& a, const std::string& b) {
  for (auto e : topo.edges()) {
    const auto& from = topo[topo.link_from(e)].name;
    const auto& to = topo[topo.link_to(e)].name;
    if ((from == a && to == b) || (from == b && to == a)) return topo[e];
  }
  FAIL("no link " << a << " - " << b);
  throw;
}

// The InputError's JSON path for a scenario, or "" when it parses.
std::string error_path(const Json& j) {
  try {
    parse(j);
  } catch (const InputError& e) {
    CHECK(e.file() == kFile);
    return e.json_path();
  }
  return "";
}

Json shipped_profile_json(const std::string& name) {
  return load_json_file(models::profiles_dir() + "/" + name + ".json");
}

}  // namespace

TEST_CASE("a NIC line-rate override sets the ethernet links and the hardware's NIC, and slows DDP") {
  const auto u50 = models::find_profile("alveo-u50");
  const double mtu = u50.get("mtu"), header = u50.get("header_overhead");
  // builder_parts.hpp: NIC <-> switch bandwidth = line rate * mtu / (mtu + header).
  const double line_50 = 50e9 / 8, line_100 = u50.get("line_rate");
  REQUIRE(line_100 == doctest::Approx(100e9 / 8));

  const Json slow = tiny_scenario({{"overrides", {{"alveo-u50", {{"line_rate", "50Gb/s"}}}}}});
  const auto scenario = parse(slow);
  CHECK(link(scenario.topology, "nic0", "switch").bandwidth_Bps == doctest::Approx(line_50 * mtu / (mtu + header)));
  CHECK(link(scenario.topology, "nic1", "switch").bandwidth_Bps == doctest::Approx(line_50 * mtu / (mtu + header)));
  CHECK(sim::hardware_of(scenario.topology).worker_nic.line_rate_Bps == doctest::Approx(line_50));

  // The override is the scenario's alone: the next scenario gets the shipped profile again
  // (the builders' profile cache must not keep the overridden one, nor the reverse).
  const auto plain = parse(tiny_scenario());
  CHECK(link(plain.topology, "nic0", "switch").bandwidth_Bps == doctest::Approx(line_100 * mtu / (mtu + header)));
  CHECK(sim::hardware_of(plain.topology).worker_nic.line_rate_Bps == doctest::Approx(line_100));

  // DDP all-reduces the same gradient bytes over links half as fast: the same bytes go out, and
  // the communication the backward pass cannot hide can only grow.
  const auto fast_result = simulate(tiny_scenario());
  const auto slow_result = simulate(slow);
  CHECK(slow_result.sent_bytes_per_worker == doctest::Approx(fast_result.sent_bytes_per_worker));
  CHECK(slow_result.breakdown.exposed_communication_s > fast_result.breakdown.exposed_communication_s);
  CHECK(slow_result.iteration_time_s > fast_result.iteration_time_s);
}

TEST_CASE("an SSD override with a unit sets the NVMe links (max of read and write) and the host's SSD") {
  // pm1733: read 7.0 GB/s, write 3.8 GB/s; the NVMe link carries max(read, write).
  const Json j = tiny_scenario({{"overrides", {{"samsung-pm1733", {{"read_bandwidth", "9GB/s"}}}}}});
  const auto scenario = parse(j);
  CHECK(link(scenario.topology, "cpu0", "nvme0-0").bandwidth_Bps == doctest::Approx(9e9));
  CHECK(scenario.topology[scenario.topology.vertex("nvme0-0")].read_Bps == doctest::Approx(9e9));
  CHECK(scenario.topology[scenario.topology.vertex("optnode-ssd0")].read_Bps == doctest::Approx(9e9));
  CHECK(parse(tiny_scenario()).topology[parse(tiny_scenario()).topology.vertex("nvme0-0")].read_Bps ==
        doctest::Approx(7e9));
}

TEST_CASE("a bare number is in base units, a flag takes true or false") {
  // 1e9 B/s written bare == "1GB/s".
  const Json bare = tiny_scenario({{"overrides", {{"samsung-pm1733", {{"write_bandwidth", 8e9}}}}}});
  CHECK(parse(bare).topology[parse(bare).topology.vertex("nvme0-0")].write_Bps == doctest::Approx(8e9));
  const Json flag = tiny_scenario({{"overrides", {{"alveo-u50", {{"gpudirect", false}}}}}});
  CHECK(error_path(flag).empty());
  const Json flag_number = tiny_scenario({{"overrides", {{"alveo-u50", {{"gpudirect", 0}}}}}});
  CHECK(error_path(flag_number) == "$.cluster.overrides.alveo-u50.gpudirect");
}

TEST_CASE("collective interference: a larger override stretches DDP's compute, by at most 1 / (1 - share)") {
  auto with_interference = [](double share) {
    return simulate(tiny_scenario({{"overrides", {{"a100-40gb-sxm", {{"collective_interference", share}}}}}}));
  };
  const auto none = with_interference(0.0);
  const auto heavy = with_interference(0.3);
  // models/gpu.hpp: while a collective kernel runs, compute runs at (1 - share) of its speed.
  // DDP's bucketed all-reduce overlaps the backward pass, so some compute is stretched; none by
  // more than 1 / (1 - 0.3).
  CHECK(heavy.breakdown.compute_s > none.breakdown.compute_s * (1 + 1e-6));
  CHECK(heavy.breakdown.compute_s <= none.breakdown.compute_s / (1 - 0.3) * (1 + 1e-9));
}

TEST_CASE("an inline GPU profile with half the fp16 peak and HBM bandwidth doubles the compute time") {
  // The A100's own numbers under another name, with peak_fp16_flops 312 -> 156 TFLOP/s and
  // hbm_bandwidth 1555 -> 777.5 GB/s.  op_timing.hpp: a matrix kernel takes
  // max(flops / (peak * gemm_efficiency_max), bytes / (hbm_bandwidth * hbm_efficiency)) over its
  // waves, an elementwise kernel bytes / (hbm_bandwidth * hbm_efficiency): with both rates halved
  // every forward/backward kernel takes exactly twice as long.
  // Interference, launch blocking and the bandwidth drop are off in both so that no
  // overlap-dependent stretching enters.
  Json half = shipped_profile_json("a100-40gb-sxm");
  half["name"] = "a100-half-fp16";
  half["fields"]["peak_fp16_flops"]["value"] = 156;
  half["fields"]["peak_fp16_flops"]["unit"] = "TFLOP/s";
  half["fields"]["hbm_bandwidth"]["value"] = 777.5;
  half["fields"]["hbm_bandwidth"]["unit"] = "GB/s";
  const Json quiet = {{"collective_interference", 0}, {"dma_interference", 0}, {"collective_sm_share", 0},
                      {"collective_bandwidth_drop_under_gemm", 0}};

  const auto baseline = simulate(tiny_scenario({{"overrides", {{"a100-40gb-sxm", quiet}}}}));
  const Json inline_scenario =
      tiny_scenario({{"profiles", {{"gpu", half}}}, {"overrides", {{"a100-half-fp16", quiet}}}});
  const auto scenario = parse(inline_scenario);
  CHECK(scenario.topology[scenario.topology.gpus()[0]].profile == "a100-half-fp16");
  CHECK(sim::hardware_of(scenario.topology).gpu.peak_fp16_flops == doctest::Approx(156e12));
  CHECK(sim::hardware_of(scenario.topology).gpu.collective_interference == 0);
  const auto halved = simulate(inline_scenario);
  CHECK(halved.breakdown.compute_s == doctest::Approx(2 * baseline.breakdown.compute_s).epsilon(1e-6));
}

TEST_CASE("errors name the scenario file and the JSON path") {
  auto override_of = [](const std::string& profile, const Json& fields) {
    return tiny_scenario({{"overrides", {{profile, fields}}}});
  };
  const std::string ci = "$.cluster.overrides.a100-40gb-sxm.collective_interference";
  CHECK(error_path(override_of("a100-40gb-sxm", {{"collective_interference", 1.5}})) == ci);   // out of [0, 1)
  CHECK(error_path(override_of("a100-40gb-sxm", {{"collective_interference", "3GB/s"}})) == ci);  // wrong dimension
  CHECK(error_path(override_of("a100-40gb-sxm", {{"collective_interference", "0.3"}})) == ci);  // string without unit
  CHECK(error_path(override_of("a100-40gb-sxm", {{"collective_interferance", 0.3}})) ==
        "$.cluster.overrides.a100-40gb-sxm.collective_interferance");  // unknown field
  CHECK(error_path(override_of("a100-40gb-sxn", {{"collective_interference", 0.3}})) ==
        "$.cluster.overrides.a100-40gb-sxn");  // unknown profile
  CHECK(error_path(override_of("tofino2", {{"aggregation_slots", 1024}})) ==
        "$.cluster.overrides.tofino2");  // a profile this cluster does not use
  CHECK(error_path(tiny_scenario({{"overrides", {{"a100-40gb-sxm.collective_interference", 0.3}}}})) ==
        "$.cluster.overrides.a100-40gb-sxm.collective_interference");  // flat key: told to nest

  try {
    parse(override_of("a100-40gb-sxm", {{"collective_interferance", 0.3}}));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("did you mean \"collective_interference\"") != std::string::npos);
  }

  Json bad_unit = shipped_profile_json("a100-40gb-sxm");
  bad_unit["name"] = "my-gpu";
  bad_unit["fields"]["peak_fp16_flops"]["unit"] = "GB/s";
  CHECK(error_path(tiny_scenario({{"profiles", {{"gpu", bad_unit}}}})) == "$.cluster.profiles.gpu.fields.peak_fp16_flops.unit");
  Json shadow = shipped_profile_json("a100-40gb-sxm");  // an inline profile may not take a shipped name
  CHECK(error_path(tiny_scenario({{"profiles", {{"gpu", shadow}}}})) == "$.cluster.profiles.gpu.name");
  Json nic_as_gpu = shipped_profile_json("alveo-u50");
  nic_as_gpu["name"] = "not-a-gpu";
  CHECK(error_path(tiny_scenario({{"profiles", {{"gpu", nic_as_gpu}}}})) == "$.cluster.profiles.gpu.kind");
  // A shipped profile of the wrong kind: at the role that names it, not in the profile's own file.
  CHECK(error_path(tiny_scenario({{"profiles", {{"gpu", "alveo-u50"}}}})) == "$.cluster.profiles.gpu");
  CHECK(error_path(tiny_scenario({{"profiles", {{"nic", "a100-40gb-sxm"}}}})) == "$.cluster.profiles.nic");
  CHECK(error_path(tiny_scenario({{"profiles", {{"switch", "nvlink3-a100"}}}})) == "$.cluster.profiles.switch");
  try {
    parse(tiny_scenario({{"profiles", {{"ssd", "tofino2"}}}}));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("is a switch profile; the ssd role takes a profile of kind \"ssd\"") != std::string::npos);
    CHECK(std::string(e.file()).find("tofino2.json") == std::string::npos);
  }
}

TEST_CASE("a profile catalog round-trips through JSON") {
  models::ProfileCatalog catalog;
  models::Profile gpu = models::find_profile("a100-40gb-sxm");
  Json value = 0.25;
  models::override_field(gpu, "collective_interference", JsonNode(value, kFile, "$.x"));
  catalog.add(gpu);
  const Json j = models::catalog_to_json(catalog);
  const auto back = models::catalog_from_json(JsonNode(j, kFile));
  REQUIRE(back.find("a100-40gb-sxm") != nullptr);
  CHECK(back.find("a100-40gb-sxm")->get("collective_interference") == 0.25);
  CHECK(back.find("a100-40gb-sxm")->get("peak_fp16_flops") == gpu.get("peak_fp16_flops"));
  // resolve: the catalog's profile for its names, the shipped one for the others.
  const double shipped = shipped_profile_json("a100-40gb-sxm")["fields"]["collective_interference"]["value"];
  CHECK(back.resolve("a100-40gb-sxm").get("collective_interference") == 0.25);
  CHECK(models::ProfileCatalog{}.resolve("a100-40gb-sxm").get("collective_interference") == shipped);
  CHECK(back.resolve("tofino").get("ports") == shipped_profile_json("tofino")["fields"]["ports"]["value"]);
}

TEST_CASE("a scenario's topology keeps its profiles and line rate, also through a saved topology file") {
  const Json j = tiny_scenario({{"network", "50Gb/s"},
                                {"overrides", {{"a100-40gb-sxm", {{"collective_interference", 0.25}}}}}});
  const auto scenario = parse(j);
  REQUIRE(scenario.topology.profiles.find("a100-40gb-sxm") != nullptr);
  CHECK(scenario.topology.profiles.find("a100-40gb-sxm")->get("collective_interference") == 0.25);
  CHECK(scenario.topology.network_Bps == 50e9 / 8);
  CHECK(sim::hardware_of(scenario.topology).gpu.collective_interference == 0.25);
  CHECK(sim::hardware_of(scenario.topology).worker_nic.line_rate_Bps == 50e9 / 8);
  // A scenario without overrides or inline profiles has none of its own.
  CHECK(parse(tiny_scenario()).topology.profiles.empty());
  CHECK(parse(tiny_scenario()).topology.network_Bps == 0);

  // Saved and used as a topology_file, the topology brings its overridden profile and line rate;
  // the second scenario's overrides go on top of them.
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("overrides-test-" + std::to_string(::getpid()) + "-topology.json")).string();
  topologies::save_topology(scenario.topology, file);
  Json from_file = tiny_scenario();
  from_file["cluster"] = {{"topology_file", file}};
  const auto loaded = parse(from_file);
  CHECK(sim::hardware_of(loaded.topology).gpu.collective_interference == 0.25);
  CHECK(sim::hardware_of(loaded.topology).worker_nic.line_rate_Bps == 50e9 / 8);
  from_file["cluster"]["overrides"] = {{"a100-40gb-sxm", {{"dma_interference", 0.125}}}};
  const auto stacked = parse(from_file);
  CHECK(sim::hardware_of(stacked.topology).gpu.collective_interference == 0.25);
  CHECK(sim::hardware_of(stacked.topology).gpu.dma_interference == 0.125);
  std::filesystem::remove(file);
  // A topology_file that is not there: at the field that names it, in the scenario.
  from_file["cluster"] = {{"topology_file", file}};
  CHECK(error_path(from_file) == "$.cluster.topology_file");
}
