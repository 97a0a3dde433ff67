// The simulation budget (sim/experiment/run_scenario.hpp): the estimate counts the kernels every
// simulated rank replays and the ops the traces hold, as the traces themselves count them.
#include <doctest/doctest.h>

#include <string>

#include "common/input_error.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/stage_trace.hpp"

using namespace luwu;

namespace {

sim::Scenario scenario_of(const std::string& text) {
  const Json doc = Json::parse(text);
  return sim::scenario_from_json(JsonNode(doc, "budget.json"));
}

// Megatron-LM's GPT 1T shape (Narayanan et al. 2021 table 1) at tensor 8 x pipeline 64 x data 6,
// micro-batch 1, batch 3072 (512 micro-batches per data-parallel rank), folded to 2 of 6.
std::string gpt_1t(int micro_batches, const std::string& extra_layout = "") {
  return R"({"name": "gpt-1t",
    "model": {"name": "gpt-1t", "layers": 128, "hidden": 25600, "heads": 160, "ffn_hidden": 102400, "vocab": 51200, "max_seq": 2048},
    "training": {"micro_batch": 1, "seq_len": 2048, "grad_accum": )" +
         std::to_string(micro_batches) + R"(, "recompute": true, "dtype": "fp16"},
    "parallelism": {"tensor": 8, "pipeline": 64, "data": 6)" +
         extra_layout + R"(},
    "cluster": {"topology": "fat-tree", "servers": 384, "gpus_per_server": 8, "gpus_per_nic": 1, "network": "200Gb/s",
                "tiers": 3, "profiles": {"switch": "tofino2", "nic": "rdma-nic-200g", "gpu": "h100-80gb-sxm"}},
    "simulation": {"fold_data_parallel": 2},
    "systems": ["ddp"]})";
}

}  // namespace

TEST_CASE("the simulation estimate counts each stage's kernels on its GPUs and every stage's ops") {
  for (const std::string interleaving : {"", R"(, "num_layers_per_virtual_pipeline_stage": 1)"}) {
    CAPTURE(interleaving);
    const sim::Scenario s = scenario_of(gpt_1t(128, interleaving));
    const auto e = sim::estimate_simulation_cost(s);
    // 3,072 GPUs, each data-parallel group of 6 folded to 2: 1,024 simulated, 16 per stage.
    CHECK(e.gpus == 1024);
    long double kernels = 0, ops = 0;
    for (int p = 0; p < 64; ++p) {
      const auto stage = workloads::generate_stage_trace(s.model, s.training, s.layout, p);
      kernels += 16.0L * static_cast<long double>(stage.kernel_count());
      ops += static_cast<long double>(stage.ops.size());
    }
    CHECK(static_cast<double>(e.kernels) == doctest::Approx(static_cast<double>(kernels)).epsilon(1e-12));
    CHECK(static_cast<double>(e.trace_ops) == doctest::Approx(static_cast<double>(ops)).epsilon(1e-12));
    CHECK(e.seconds == e.kernels * sim::kSecondsPerReplayedKernel);
    CHECK(e.bytes == e.gpus * sim::kBytesPerSimulatedGpu + e.trace_ops * sim::kBytesPerTraceOp);
  }
}

TEST_CASE("the budget admits Megatron-LM's GPT 1T run folded and refuses what would take hours, at grad_accum") {
  CHECK_NOTHROW(sim::check_simulation_budget(scenario_of(gpt_1t(512))));
  // Sixteen times the micro-batches: past half an hour of replay.
  const sim::Scenario big = scenario_of(gpt_1t(8192));
  CHECK(sim::estimate_simulation_cost(big).seconds > sim::kMaxEstimatedSimulationSeconds);
  try {
    sim::check_simulation_budget(big);
    FAIL("not refused");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("budget.json: at $.training.grad_accum: ") != std::string::npos);
    CHECK(what.find("on 1024 simulated GPUs") != std::string::npos);
    CHECK(what.find("over the budget of") != std::string::npos);
  }
}
