// Expert parallelism (workloads/parallel_layout.hpp's `expert`; ModelParallelComm's all-to-all; DDP's
// expert buckets), against closed forms on one 4-GPU NVSwitch server:
// - each GPU's NVLink carries (E-1)/E of every all-to-all's buffer (its flows to the other members),
//   2 (D-1)/D of every non-expert bucket's (a ring over all D ranks) and, with experts on E < D
//   ranks, 2 (D/E-1)/(D/E) of the experts' gradients (a ring over the ranks holding them);
// - what is not simulated is refused: another system, a folded group.
#include <doctest/doctest.h>

#include "common/input_error.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "workloads/stage_trace.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

// A small fine-grained mixture: 8 SwiGLU experts of 128, 2 per token, 1 shared, the first block dense.
workloads::ModelConfig small_moe() {
  const Json j = Json::parse(R"({"name": "small-moe", "layers": 3, "hidden": 256, "heads": 4, "ffn_hidden": 512,
    "ffn_kind": "swiglu", "vocab": 1000, "max_seq": 256, "biases": false, "tied_embeddings": false,
    "experts": 8, "experts_per_token": 2, "expert_ffn_hidden": 128, "shared_experts": 1, "dense_layers": 1})");
  return workloads::model_from_json(JsonNode(j, "small-moe.json"));
}

workloads::TrainingConfig training() {
  workloads::TrainingConfig t;
  t.micro_batch = 2;
  t.seq_len = 256;
  t.dtype = workloads::DType::Bf16;
  return t;
}

topologies::Topology one_server_of_4() {
  topologies::DgxParams p;
  p.servers = 1;
  p.gpus_per_server = 4;
  return topologies::build_dgx(p);
}

}  // namespace

TEST_CASE("expert parallelism on one 4-GPU server: NVLink carries the all-to-alls and both reductions in closed form") {
  const auto topo = one_server_of_4();
  const auto hw = quiet_hardware(topo);
  for (int expert : {4, 2}) {
    CAPTURE(expert);
    workloads::ParallelLayout layout;
    layout.data = 4;
    layout.expert = expert;
    const auto trace = workloads::generate_stage_trace(small_moe(), training(), layout, 0);
    const double e = 2;  // bf16
    double all_to_all = 0, expert_grads = 0, other_grads = 0;
    int all_to_alls = 0;
    for (const auto& op : trace.ops) {
      if (op.kind == workloads::OpKind::ExpertAllToAll) {
        all_to_all += static_cast<double>(op.comm_bytes);
        ++all_to_alls;
      }
      if (op.kind != workloads::OpKind::Backward) continue;
      const double experts = static_cast<double>(trace.layers.at(static_cast<std::size_t>(op.layer)).expert_params) * e;
      expert_grads += experts;
      other_grads += static_cast<double>(op.grad_bytes) - experts;
    }
    // 2 blocks with experts x (forward, backward) x (dispatch, combine); each E x rows x h.
    CHECK(all_to_alls == 8);
    CHECK(all_to_all == 8.0 * 8 * workloads::expert_rows(small_moe(), training()) * 256 * e);
    // Each GPU holds 8 / expert of each such block's experts: SwiGLU 3 h f each.
    CHECK(expert_grads == 2.0 * (8 / expert) * 3 * 256 * 128 * e);
    const double groups = 4.0 / expert;  // ranks holding the same experts
    const double expected = (expert - 1.0) / expert * all_to_all + 2.0 * 3 / 4 * other_grads +
                            (groups > 1 ? 2.0 * (groups - 1) / groups * expert_grads : 0);

    sim::ParallelWorkload workload{layout, {&trace}};
    const auto r = sim::simulate_parallel_system(workload, topo, hw, *make_system("ddp"), {});
    REQUIRE(r.feasible);
    for (int g = 0; g < 4; ++g) {
      CAPTURE(g);
      CHECK(link_bytes(r, "gpu" + std::to_string(g) + "--nvswitch0_UP") == doctest::Approx(expected).epsilon(1e-9));
    }
    REQUIRE(r.model_parallel);
    CHECK(r.model_parallel->expert_all_to_all_s > 0);
    CHECK(r.model_parallel->tensor_collectives_s == 0);
  }
}

TEST_CASE("expert parallelism: a stage's trace holds experts / E per block and runs every member's rows through them") {
  workloads::ParallelLayout layout;
  layout.data = 4;
  layout.expert = 4;
  const auto whole = workloads::generate_trace(small_moe(), training());
  const auto ep = workloads::generate_stage_trace(small_moe(), training(), layout, 0);
  // Same FLOPs (each GPU's tokens still meet k experts), a quarter of the experts' parameters.
  CHECK(ep.flops_per_iteration() == doctest::Approx(whole.flops_per_iteration()).epsilon(1e-12));
  const auto& block = ep.layers.at(2);
  CHECK(block.expert_params == 2 * 3 * 256 * 128);
  CHECK(whole.layers.at(2).params - block.params == 6 * 3 * 256 * 128);
  CHECK(ep.layers.at(1).expert_params == 0);  // the dense block
  const std::uint64_t rows = workloads::expert_rows(small_moe(), training());
  for (const auto& op : ep.ops) {
    if (op.kind != workloads::OpKind::Forward || op.layer != 2) continue;
    for (const auto& k : ep.kernels_of(op))
      if (k.name == "experts-up") CHECK(k.gemm == workloads::GemmShape{static_cast<std::int64_t>(4 * rows), 256, 256, 2});
  }
}

TEST_CASE("expert parallelism is refused where it is not simulated or does not fit the layout") {
  auto scenario = [](Json parallelism, const char* system = "ddp") {
    Json j = Json::parse(R"({"name": "ep", "model": "mixtral-8x7b",
      "training": {"micro_batch": 1, "seq_len": 256, "dtype": "bf16"},
      "cluster": {"topology": "dgx", "servers": 2, "gpus_per_server": 4}})");
    j["parallelism"] = std::move(parallelism);
    j["systems"] = Json::array({system});
    return j;
  };
  auto failure = [](const Json& j) -> std::string {
    try {
      const auto s = sim::scenario_from_json(JsonNode(j, "ep.json"));
      sim::check_expert_parallel(s);
    } catch (const InputError& e) {
      return e.json_path();
    }
    return "";
  };
  CHECK(failure(scenario({{"expert", 4}})).empty());
  CHECK(sim::scenario_from_json(JsonNode(scenario({{"expert", 4}}), "ep.json")).layout.data == 8);
  CHECK(failure(scenario({{"expert", 4}}, "zero3")) == "$.parallelism.expert");
  CHECK(failure(scenario({{"expert", 3}})) == "$.parallelism.expert");               // 8 experts
  CHECK(failure(scenario({{"expert", 8}, {"data", 4}, {"pipeline", 2}})) == "$.parallelism.expert");  // data 4
  CHECK(failure(scenario({{"expert", 2}, {"tensor", 2}})) == "$.parallelism.expert");
  Json dense = scenario({{"expert", 2}});
  dense["model"] = "llama2-7b";
  CHECK(failure(dense) == "$.parallelism.expert");
  Json folded = scenario({{"expert", 4}});
  folded["simulation"] = {{"fold_data_parallel", 4}};
  CHECK(failure(folded) == "$.simulation.fold_data_parallel");
}
