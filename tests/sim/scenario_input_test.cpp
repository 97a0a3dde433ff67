// A scenario's named values (simulation mode, topology builder, catalog model) and its training
// object: bad ones are InputErrors naming the scenario file, the JSON path and the nearest name.
#include <doctest/doctest.h>

#include <string>

#include "common/input_error.hpp"
#include "sim/experiment/scenario.hpp"

using namespace luwu;

namespace {

const std::string kFile = "scenario-input-test.json";

// GPT-3 125M on 2 luwu-star workers: parsing builds a 2-worker topology, nothing is simulated.
Json tiny() {
  return Json::parse(R"({"name": "tiny", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256},
    "cluster": {"topology": "luwu-star", "workers": 2},
    "systems": ["ddp"]})");
}

sim::Scenario parse(const Json& j) { return sim::scenario_from_json(JsonNode(j, kFile)); }

struct Failure {
  std::string path;
  std::string what;
};

Failure failure_of(const Json& j) {
  try {
    parse(j);
  } catch (const InputError& e) {
    CHECK(e.file() == kFile);
    return {e.json_path(), e.what()};
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("simulation.mode is one of auto, detailed and coarse") {
  CHECK(parse(tiny()).mode == sim::ModeChoice::Auto);  // no "simulation" object
  Json j = tiny();
  j["simulation"] = Json::object();
  CHECK(parse(j).mode == sim::ModeChoice::Auto);
  j["simulation"]["mode"] = "coarse";
  CHECK(parse(j).mode == sim::ModeChoice::Coarse);
  j["simulation"]["mode"] = "detailed";
  CHECK(parse(j).mode == sim::ModeChoice::Detailed);
  j["simulation"]["mode"] = "auto";
  CHECK(parse(j).mode == sim::ModeChoice::Auto);

  j["simulation"]["mode"] = "detialed";
  const Failure f = failure_of(j);
  CHECK(f.path == "$.simulation.mode");
  CHECK(contains(f.what, "unknown simulation mode \"detialed\" (did you mean \"detailed\"?); expected \"auto\", "
                         "\"detailed\" or \"coarse\""));
}

TEST_CASE("an unknown topology builder or catalog model suggests the nearest name") {
  Json j = tiny();
  j["cluster"]["topology"] = "fat-tre";
  Failure f = failure_of(j);
  CHECK(f.path == "$.cluster.topology");
  CHECK(contains(f.what, "unknown topology builder \"fat-tre\" (did you mean \"fat-tree\"?); expected \"luwu-star\", "
                         "\"dgx\", \"fat-tree\" or \"wan\""));

  j = tiny();
  j["model"] = "gpt3-125n";
  f = failure_of(j);
  CHECK(f.path == "$.model");
  CHECK(contains(f.what, "unknown model \"gpt3-125n\" (did you mean \"gpt3-125m\"?)"));
}

TEST_CASE("the training object is read with the trace reader's rules: defaults, bounds and paths") {
  const sim::Scenario s = parse(tiny());
  CHECK(s.training.micro_batch == 1);
  CHECK(s.training.seq_len == 256);
  CHECK(s.training.grad_accum == 1);  // absent: the default
  CHECK(s.training.dtype == workloads::DType::Fp16);

  Json j = tiny();
  j["training"]["seq_len"] = 4096;  // gpt3-125m's max_seq is 2048
  Failure f = failure_of(j);
  CHECK(f.path == "$.training.seq_len");
  CHECK(contains(f.what, "exceeds gpt3-125m's max_seq 2048"));
  j = tiny();
  j["training"]["micro_batch"] = 1048577;
  CHECK(failure_of(j).path == "$.training.micro_batch");
  j = tiny();
  j["training"]["dtype"] = "bf61";
  f = failure_of(j);
  CHECK(f.path == "$.training.dtype");
  CHECK(contains(f.what, "did you mean \"bf16\""));
}

TEST_CASE("luwu-star's optimizer_host and optimizer_ssd roles reach the optimizer node alone") {
  Json j = tiny();
  j["cluster"]["profiles"] = {{"optimizer_host", "xeon-gold-5320-node"}, {"optimizer_ssd", "intel-optane-p5800x"}};
  const auto s = parse(j);
  REQUIRE(s.hardware.optimizer_node);
  CHECK(s.hardware.optimizer_node->cpu.cores == 52);             // 2 x 26 (the Xeon 5320 node)
  CHECK(s.hardware.optimizer_node->thread_rates.has_value());
  CHECK(s.hardware.optimizer_node->ssds->device.read_Bps == 7.2e9);  // P5800X
  CHECK(s.hardware.worker_host.cpu.cores == 64);                 // the default worker host
  // A profile of the wrong kind is refused as the host role's is: at the role that names it.
  j["cluster"]["profiles"] = {{"optimizer_host", "samsung-pm1733"}};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("at $.cluster.profiles.optimizer_host: profile \"samsung-pm1733\" is a ssd profile"),
                       InputError);
}

TEST_CASE("a stage-3 system's parameter fetch settings apply only with their policy") {
  Json j = tiny();
  j["systems"] = Json::parse(R"([{"name": "zero3", "param_fetch": "layer", "prefetch_layers": 2},
                                 {"name": "zero-infinity", "max_live_parameters": 2e8, "prefetch_bucket_size": 0}])");
  CHECK(parse(j).systems.size() == 2);
  j["systems"] = Json::parse(R"([{"name": "zero3", "prefetch_layers": 2}])");
  Failure f = failure_of(j);
  CHECK(f.path == "$.systems[0].prefetch_layers");
  CHECK(contains(f.what, "applies only with \"param_fetch\": \"layer\""));
  j["systems"] = Json::parse(R"([{"name": "zero-infinity", "param_fetch": "layer", "max_reuse_distance": 0}])");
  f = failure_of(j);
  CHECK(f.path == "$.systems[0].max_reuse_distance");
  CHECK(contains(f.what, "applies only with \"param_fetch\": \"sub-module\""));
  j["systems"] = Json::parse(R"([{"name": "zero3", "param_fetch": "submodule"}])");
  f = failure_of(j);
  CHECK(f.path == "$.systems[0].param_fetch");
  CHECK(contains(f.what, "did you mean \"sub-module\""));
  j["systems"] = Json::parse(R"([{"name": "zero3", "max_live_parameters": 0}])");
  CHECK(failure_of(j).path == "$.systems[0].max_live_parameters");
}

TEST_CASE("luwu-star's optimizer_nodes, trunks_per_rack, pods and trunks_per_pod are >= 1, a trunk needs racks "
          "(pods), pods need racks, and luwu's parameter_residency is per-use or per-iteration, each error at its JSON "
          "path") {
  Json j = tiny();
  j["cluster"]["optimizer_nodes"] = 2;
  j["cluster"]["racks"] = 2;
  j["cluster"]["trunks_per_rack"] = 3;
  const auto s = parse(j);
  CHECK(s.topology.optimizer_nodes().size() == 2);
  CHECK(s.topology.builder_args.at("trunks_per_rack") == 3);

  for (const char* key : {"optimizer_nodes", "trunks_per_rack"}) {
    Json bad = j;
    bad["cluster"][key] = 0;
    const Failure f = failure_of(bad);
    CHECK(f.path == std::string("$.cluster.") + key);
    CHECK(contains(f.what, "expected an integer in [1, "));
  }
  Json one_rack = j;
  one_rack["cluster"].erase("racks");
  const Failure trunk = failure_of(one_rack);
  CHECK(trunk.path == "$.cluster.trunks_per_rack");
  CHECK(contains(trunk.what, "\"racks\" > 1"));

  // Pods split the racks: they need racks (at least as many), and their trunks need pods.
  Json podded = j;
  podded["cluster"]["pods"] = 2;
  podded["cluster"]["trunks_per_pod"] = 2;
  const auto p = parse(podded);
  CHECK(p.topology.builder_args.at("pods") == 2);
  CHECK(p.topology.builder_args.at("trunks_per_pod") == 2);
  CHECK(p.topology.find_vertex("pod1").has_value());
  for (const char* key : {"pods", "trunks_per_pod"}) {
    Json bad = podded;
    bad["cluster"][key] = 0;
    const Failure f = failure_of(bad);
    CHECK(f.path == std::string("$.cluster.") + key);
    CHECK(contains(f.what, "expected an integer in [1, "));
  }
  Json too_many = podded;
  too_many["cluster"]["pods"] = 3;
  const Failure pods = failure_of(too_many);
  CHECK(pods.path == "$.cluster.pods");
  CHECK(contains(pods.what, "3 pods need at least as many racks"));
  Json no_racks = podded;
  no_racks["cluster"].erase("racks");
  no_racks["cluster"].erase("trunks_per_rack");
  CHECK(failure_of(no_racks).path == "$.cluster.pods");
  Json no_pods = podded;
  no_pods["cluster"].erase("pods");
  const Failure pod_trunk = failure_of(no_pods);
  CHECK(pod_trunk.path == "$.cluster.trunks_per_pod");
  CHECK(contains(pod_trunk.what, "\"pods\" > 1"));

  Json luwu = tiny();
  luwu["systems"] = Json::parse(R"([{"name": "luwu", "parameter_residency": "per-batch"}])");
  const Failure residency = failure_of(luwu);
  CHECK(residency.path == "$.systems[0].parameter_residency");
  CHECK(contains(residency.what, "per-iteration"));
  luwu["systems"][0]["parameter_residency"] = "per-iteration";
  CHECK_NOTHROW(parse(luwu));
  luwu["systems"][0]["param_fetch"] = "sub-module";
  const Failure sub_module = failure_of(luwu);
  CHECK(sub_module.path == "$.systems[0].parameter_residency");
  CHECK(contains(sub_module.what, "sub-module"));
}
