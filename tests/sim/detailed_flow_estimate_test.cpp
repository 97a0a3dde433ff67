// Detailed mode's budget counts what will run (sim/systems/collective_calls.hpp,
// estimate_detailed_flows): each algorithm's flows per call in closed form, and, for the systems
// that count their own calls, the estimate equals the flows their simulation reports.
#include <doctest/doctest.h>

#include <string>

#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/systems/collective_calls.hpp"
#include "workloads/trace.hpp"

using namespace luwu;
using sim::CollectiveAlgorithm;
using sim::CollectiveMode;
using sim::CollectiveOp;

namespace {

workloads::TraceOp op(workloads::OpKind kind, std::uint64_t param_bytes, std::uint64_t grad_bytes) {
  workloads::TraceOp o;
  o.kind = kind;
  o.param_bytes = param_bytes;
  o.grad_bytes = grad_bytes;
  return o;
}

long double flows(CollectiveOp o, CollectiveAlgorithm a, int ranks, int simulated, int per_server,
                  CollectiveMode mode = CollectiveMode::Detailed, double bytes = 1e6) {
  return sim::flows_of_call({o, bytes, 1}, a, mode, {ranks, simulated, per_server});
}

}  // namespace

TEST_CASE("ZeRO-3's per-op pattern: an all-gather per parameter read and a reduce-scatter per gradient") {
  using workloads::OpKind;
  workloads::Trace trace;
  // Three layers, the middle one without parameters; recompute of the first.
  trace.ops = {op(OpKind::Forward, 100, 0),  op(OpKind::Forward, 0, 0),   op(OpKind::Forward, 50, 0),
               op(OpKind::Backward, 50, 50), op(OpKind::Backward, 0, 0),  op(OpKind::Recompute, 100, 0),
               op(OpKind::Backward, 100, 100)};
  int gathers = 0, scatters = 0;
  for (const auto& c : sim::per_op_collective_calls(trace)) (c.op == CollectiveOp::AllGather ? gathers : scatters) += 1;
  CHECK(gathers == 5);  // 2 forward + 2 backward + 1 recompute
  CHECK(scatters == 2);
}

TEST_CASE("flows per collective call, by algorithm, in closed form") {
  // 32 ranks in 4 servers of 8.
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 32, 32, 8) == 32 * 31);
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 32, 32, 8) == 2 * 32 * 31);
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 32, 32, 8, CollectiveMode::Coarse) == 32);
  // Hierarchical: inside each server 8 x 7 per server, across 4 servers 8 rings of 4 x 3.
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Hierarchical, 32, 32, 8) == 32 * 7 + 32 * 3);
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 32, 32, 8) == 2 * 32 * 7 + 2 * 32 * 3);
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 32, 32, 8, CollectiveMode::Coarse) == 3 * 32);
  // ... a ring when the servers hold one rank each, or one server holds them all.
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Hierarchical, 32, 32, 1) == 32 * 31);
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Hierarchical, 8, 8, 8) == 8 * 7);
  // PAT: ceil(log2 N) steps per rank; across servers with rings inside; coarse or folded one flow.
  CHECK(flows(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Pat, 32, 32, 1) == 32 * 5);
  CHECK(flows(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Pat, 24, 24, 1) == 24 * 5);
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Pat, 32, 32, 8) == 32 * 2 + 32 * 7);
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Pat, 32, 8, 1) == 8);
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::Pat, 32, 32, 8) == 2 * 32 * 31);  // all-reduce rings
  // Tree: 2 (N - 1) chunks of 4 MiB; folded, the ring.
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 16, 16, 1, CollectiveMode::Detailed, 10 * 1048576.0) ==
        2 * 15 * 3);
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 16, 4, 1) == 2 * 4 * 15);
  // In-network: up and down per member; with servers of 8, the rings inside too.
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::InNetwork, 16, 16, 1) == 32);
  CHECK(flows(CollectiveOp::AllReduce, CollectiveAlgorithm::InNetwork, 32, 32, 8) == 64 + 2 * 32 * 7);
  // Folded: each simulated rank passes the represented ring's steps.
  CHECK(flows(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring, 1024, 2, 1) == 2 * 1023);
  CHECK(flows(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Hierarchical, 1024, 16, 8) == 16 * 7 + 16 * 127);
  // Reduces to each owner, whatever the algorithm: the ring over all ranks, N steps of which a rank
  // sends in N - 1 (silent in its own reduce's); with several GPUs in each of several servers the
  // ring inside each server and the reduces across servers.
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Ring, 32, 32, 1) == 32 * 31);
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Pat, 32, 32, 1) == 32 * 31);
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Ring, 8, 8, 8) == 8 * 7);
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Ring, 32, 32, 8) == 32 * 7 + 32 * 3);
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Hierarchical, 32, 32, 8) == 32 * 7 + 32 * 3);
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Ring, 32, 32, 1, CollectiveMode::Coarse) == 32);
  CHECK(flows(CollectiveOp::ReduceToOwners, CollectiveAlgorithm::Ring, 1024, 2, 1) == 2 * 1023);
  // In the server, and across servers.
  CHECK(flows(CollectiveOp::AllGatherInServer, CollectiveAlgorithm::Ring, 32, 32, 8) == 32 * 7);
  CHECK(flows(CollectiveOp::AllReduceAcrossServers, CollectiveAlgorithm::Hierarchical, 32, 32, 8) == 2 * 32 * 3);
  // Auto: the most of its candidates.
  CHECK(flows(CollectiveOp::AllGather, CollectiveAlgorithm::Auto, 32, 32, 8) == 32 * 31);
}

namespace {

// 4 DGX-like servers of 2 GPUs, GPT-3 125M, detailed collectives; folded to 2 servers' worth.
std::string dgx_scenario(const std::string& system, int fold) {
  return R"({"name": "flows", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "grad_accum": 2, "recompute": true, "dtype": "fp16"},
    "cluster": {"topology": "dgx", "servers": 4, "gpus_per_server": 2, "gpus_per_nic": 1, "network": "100Gb/s",
                "profiles": {"nic": "rdma-nic-100g", "switch": "tofino"}},
    "simulation": {"mode": "detailed")" +
         // PAT and tree fold inexactly: allowed here, where only the flow count is compared.
         (fold > 0 ? R"(, "fold_data_parallel": )" + std::to_string(fold) + R"(, "allow_inexact_fold": true)" : std::string()) +
         R"(},
    "systems": [)" + system + "]}";
}

}  // namespace

TEST_CASE("the estimate is the flows the simulation reports, for the systems that count their calls") {
  for (const std::string system :
       {R"({"name": "zero3", "collective_algorithm": "ring"})", R"({"name": "zero3", "collective_algorithm": "hierarchical"})",
        R"({"name": "zero3", "collective_algorithm": "pat"})", R"({"name": "ddp", "collective_algorithm": "ring"})",
        R"({"name": "ddp", "collective_algorithm": "hierarchical"})", R"({"name": "ddp", "collective_algorithm": "tree"})",
        R"({"name": "zero-hierarchical", "partition_size": 2})"}) {
    for (int fold : {0, 4}) {
      CAPTURE(system);
      CAPTURE(fold);
      const Json doc = Json::parse(dgx_scenario(system, fold));
      const sim::Scenario scenario = sim::scenario_from_json(JsonNode(doc, "flows.json"));
      const auto e = sim::estimate_detailed_flows(scenario, *scenario.systems.front());
      const auto run = sim::run_scenario(scenario, sim::RunOptions{});
      REQUIRE(run.results.size() == 1);
      REQUIRE(run.results.front().feasible);
      CHECK(static_cast<double>(e.detailed_flows) == static_cast<double>(run.results.front().simulated_flows));
    }
  }
}

TEST_CASE("systems that reduce in the switch or on servers make no ring flows to budget") {
  const Json doc = Json::parse(dgx_scenario(R"("luwu", "switchml")", 0));
  const sim::Scenario scenario = sim::scenario_from_json(JsonNode(doc, "flows.json"));
  for (const auto& system : scenario.systems) CHECK(sim::estimate_detailed_flows(scenario, *system).detailed_flows == 0);
}
