// Tensor and pipeline parallelism (sim/engine/model_parallel_comm.hpp, simulate_parallel_system):
// - a pipeline of single-GPU stages replays each stage's trace as a plain dependency recurrence
//   would (each op after the previous one on its stage; a receive after the matching send's
//   flow, latency + bytes / bottleneck on its route), for 1F1B and GPipe;
// - a tensor-parallel ring puts 2 (T-1)/T of each all-reduce's buffer on every GPU's NVLink, and
//   (T-1)/T of each reduce-scatter's and all-gather's;
// - with tensor x pipeline x data, a stage's GPUs send its activations (and receive their
//   gradients) through their NICs, m per iteration, while the data-parallel all-reduce of a
//   stage that sits in one server stays on its NVLink;
// - a scenario's "parallelism" is checked against the cluster's GPUs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "common/input_error.hpp"
#include "sim/engine/op_timing.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "workloads/stage_trace.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

const workloads::ModelConfig& gpt3_125m() { return *workloads::find_catalog_model("gpt3-125m"); }

workloads::TrainingConfig pipeline_training(int micro_batches) {
  workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 2048;
  t.grad_accum = micro_batches;
  t.recompute = false;
  return t;
}

struct Reference {
  double iteration_s = 0;
  double pipeline_waits_s = 0;  // summed over stages
};

// Each stage's ops in order on its own clock; a send's flow is alone on its route.
Reference pipeline_reference(const std::vector<workloads::Trace>& stages, const topologies::Topology& topo,
                             const sim::Hardware& hw) {
  const std::size_t p = stages.size();
  std::vector<double> clock(p, 0);
  std::vector<std::size_t> next(p, 0);
  std::vector<std::deque<double>> activations(p), gradients(p);  // arrival times at each stage
  Reference ref;
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < p; ++s) {
      const auto& trace = stages[s];
      for (; next[s] < trace.ops.size(); ++next[s], progress = true) {
        const auto& op = trace.ops[next[s]];
        using K = workloads::OpKind;
        const auto bytes = static_cast<double>(op.comm_bytes);
        if (workloads::is_compute(op.kind)) {
          for (const auto& k : trace.kernels_of(op)) clock[s] += sim::kernel_run(k, hw.gpu, trace.training.dtype).seconds;
        } else if (op.kind == K::SendActivation) {  // interleaved, the last stage's go to the first
          const std::size_t to = (s + 1) % p;
          activations[to].push_back(clock[s] + gpu_to_gpu(topo, int(s), int(to)).time_s(bytes));
        } else if (op.kind == K::SendGradient) {
          const std::size_t to = (s + p - 1) % p;
          gradients[to].push_back(clock[s] + gpu_to_gpu(topo, int(s), int(to)).time_s(bytes));
        } else {
          auto& queue = op.kind == K::RecvActivation ? activations[s] : gradients[s];
          if (queue.empty()) break;  // its sender has not got there yet
          ref.pipeline_waits_s += std::max(0.0, queue.front() - clock[s]);
          clock[s] = std::max(clock[s], queue.front());
          queue.pop_front();
        }
      }
    }
  }
  for (std::size_t s = 0; s < p; ++s) {
    REQUIRE(next[s] == stages[s].ops.size());  // the reference itself found no deadlock
    // DDP over one replica: no all-reduce, then Adam over the stage's parameters.
    ref.iteration_s =
        std::max(ref.iteration_s, clock[s] + gpu_optimizer_s(hw, static_cast<double>(stages[s].total_params())));
  }
  return ref;
}

sim::SystemResult simulate_layout(const std::vector<workloads::Trace>& stages, const workloads::ParallelLayout& layout,
                                  const topologies::Topology& topo, const sim::Hardware& hw,
                                  const std::string& system = "ddp") {
  sim::ParallelWorkload workload{layout, {}};
  for (const auto& s : stages) workload.stages.push_back(&s);
  return sim::simulate_parallel_system(workload, topo, hw, *make_system(system), {});
}

// Simulates single-GPU stages and checks the iteration and the pipeline waits (averaged over the
// stages) against pipeline_reference's recurrence.
sim::SystemResult simulate_against_reference(const std::vector<workloads::Trace>& stages,
                                             const workloads::ParallelLayout& layout, const topologies::Topology& topo,
                                             const sim::Hardware& hw) {
  const Reference ref = pipeline_reference(stages, topo, hw);
  auto r = simulate_layout(stages, layout, topo, hw);
  REQUIRE(r.feasible);
  CHECK(r.iteration_time_s == doctest::Approx(ref.iteration_s).epsilon(1e-9));
  REQUIRE(r.model_parallel);
  CHECK(r.model_parallel->pipeline_waits_s ==
        doctest::Approx(ref.pipeline_waits_s / static_cast<double>(stages.size())).epsilon(1e-9));
  return r;
}

std::vector<workloads::Trace> stage_traces(const workloads::TrainingConfig& training,
                                           const workloads::ParallelLayout& layout) {
  std::vector<workloads::Trace> stages;
  for (int s = 0; s < layout.pipeline; ++s)
    stages.push_back(workloads::generate_stage_trace(gpt3_125m(), training, layout, s));
  return stages;
}

// A luwu-star of 4 servers of 2 GPUs (8 workers), in `racks` racks under `pods` pods.
topologies::Topology star_of_2gpu_servers(int racks, int pods) {
  topologies::LuwuStarParams p;
  p.workers = 8;
  p.gpus_per_server = 2;
  p.racks = racks;
  p.pods = pods;
  return topologies::build_luwu_star(p);
}

workloads::ParallelLayout tp2_pp2_dp2() {
  workloads::ParallelLayout layout;
  layout.tensor = 2;
  layout.pipeline = 2;
  layout.data = 2;
  return layout;
}

// Two micro-batches of 256 tokens.
workloads::TrainingConfig short_pipeline_training() {
  workloads::TrainingConfig training = pipeline_training(2);
  training.seq_len = 256;
  return training;
}

topologies::Topology dgx(int servers, int gpus_per_server) {
  topologies::DgxParams p;
  p.servers = servers;
  p.gpus_per_server = gpus_per_server;
  return topologies::build_dgx(p);
}

}  // namespace

TEST_CASE("a pipeline of 4 single-GPU stages finishes when the stages' dependency recurrence does (1F1B, GPipe)") {
  const auto topo = star(4);
  const auto hw = quiet_hardware(topo);
  for (auto schedule : {workloads::PipelineSchedule::OneFOneB, workloads::PipelineSchedule::GPipe}) {
    CAPTURE(workloads::to_string(schedule));
    workloads::ParallelLayout layout;
    layout.pipeline = 4;
    layout.pipeline_schedule = schedule;
    const auto r = simulate_against_reference(stage_traces(pipeline_training(6), layout), layout, topo, hw);
    CHECK(r.model_parallel->tensor_collectives_s == 0);
    // Each stage sends m activations forward and m gradients back, where it has a neighbour.
    const double a = static_cast<double>(workloads::pipeline_transfer_bytes(gpt3_125m(), pipeline_training(6), layout));
    CHECK(r.sent_bytes_per_worker == doctest::Approx(6 * a * (3 + 3) / 4).epsilon(1e-12));
  }
}

TEST_CASE("interleaved 1F1B over 4 single-GPU stages finishes when the stages' dependency recurrence does, "
          "with a smaller bubble than 1F1B's") {
  // GPT-3 125M's 12 blocks: 4 stages of 3 chunks of 1 block (v = 3), 8 micro-batches.
  const auto topo = star(4);
  const auto hw = quiet_hardware(topo);
  workloads::ParallelLayout layout;
  layout.pipeline = 4;
  layout.layers_per_virtual_stage = 1;
  const auto r = simulate_against_reference(stage_traces(pipeline_training(8), layout), layout, topo, hw);
  // Every virtual stage boundary is a transfer: 3 x 4 - 1 = 11 of them each way, m per iteration.
  const double a = static_cast<double>(workloads::pipeline_transfer_bytes(gpt3_125m(), pipeline_training(8), layout));
  CHECK(r.sent_bytes_per_worker == doctest::Approx(8 * a * 2 * 11 / 4).epsilon(1e-12));
  // The same stages without interleaving wait longer for their neighbours.
  workloads::ParallelLayout plain = layout;
  plain.layers_per_virtual_stage = 0;
  const auto one_chunk = simulate_layout(stage_traces(pipeline_training(8), plain), plain, topo, hw);
  REQUIRE(one_chunk.model_parallel);
  CHECK(r.model_parallel->pipeline_waits_s < one_chunk.model_parallel->pipeline_waits_s);
  CHECK(r.iteration_time_s < one_chunk.iteration_time_s);
}

TEST_CASE("1F1B's bubble: with more micro-batches the pipeline waits grow less than the iteration") {
  // (p - 1) stage-times of bubble, whatever m: the waits' share of the iteration falls with m.
  const auto topo = star(4);
  const auto hw = quiet_hardware(topo);
  workloads::ParallelLayout layout;
  layout.pipeline = 4;
  const auto few = simulate_layout(stage_traces(pipeline_training(4), layout), layout, topo, hw);
  const auto many = simulate_layout(stage_traces(pipeline_training(16), layout), layout, topo, hw);
  REQUIRE((few.model_parallel && many.model_parallel));
  CHECK(many.model_parallel->pipeline_waits_s / many.iteration_time_s <
        few.model_parallel->pipeline_waits_s / few.iteration_time_s);
}

TEST_CASE("tensor parallelism over 4 GPUs: each GPU's NVLink carries 2 (T-1)/T of every all-reduce, (T-1)/T of "
          "every reduce-scatter and all-gather") {
  const auto topo = dgx(1, 4);
  const auto hw = quiet_hardware(topo);
  for (bool sequence_parallel : {false, true}) {
    CAPTURE(sequence_parallel);
    workloads::ParallelLayout layout;
    layout.tensor = 4;
    layout.sequence_parallel = sequence_parallel;
    workloads::TrainingConfig training = pipeline_training(2);
    const auto stages = stage_traces(training, layout);
    double expected = 0;
    for (const auto& op : stages[0].ops) {
      const double b = static_cast<double>(op.comm_bytes);
      if (op.kind == workloads::OpKind::TensorAllReduce) expected += 2.0 * 3 / 4 * b;
      if (op.kind == workloads::OpKind::TensorReduceScatter || op.kind == workloads::OpKind::TensorAllGather)
        expected += 3.0 / 4 * b;
    }
    REQUIRE(expected > 0);
    const auto r = simulate_layout(stages, layout, topo, hw);
    REQUIRE(r.feasible);
    for (int g = 0; g < 4; ++g) {
      CAPTURE(g);
      const std::string link = "gpu" + std::to_string(g) + "--nvswitch0_UP";
      CHECK(link_bytes(r, link) == doctest::Approx(expected).epsilon(1e-9));
    }
    CHECK(r.sent_bytes_per_worker == 0);  // nothing leaves the server
    REQUIRE(r.model_parallel);
    CHECK(r.model_parallel->tensor_collectives_s > 0);
    CHECK(r.model_parallel->pipeline_waits_s == 0);
  }
}

TEST_CASE("tensor 2 x pipeline 2 x data 2 on two 4-GPU servers: the NICs carry the pipeline, NVLink the all-reduce") {
  // Megatron's order puts ranks 0-3 (stage 0, both replicas) in server 0 and stage 1 in server 1.
  const auto topo = dgx(2, 4);
  const auto hw = quiet_hardware(topo);
  workloads::ParallelLayout layout;
  layout.tensor = 2;
  layout.pipeline = 2;
  layout.data = 2;
  const int m = 3;
  const auto training = pipeline_training(m);
  const auto stages = stage_traces(training, layout);
  const auto r = simulate_layout(stages, layout, topo, hw);
  REQUIRE(r.feasible);
  const double a = static_cast<double>(workloads::pipeline_transfer_bytes(gpt3_125m(), training, layout));
  CHECK(r.sent_bytes_per_worker == doctest::Approx(m * a).epsilon(1e-12));
  CHECK(r.received_bytes_per_worker == doctest::Approx(m * a).epsilon(1e-12));
  // DDP's all-reduce of stage 0's gradient between ranks 0 and 2 (tensor index 0): a ring of 2
  // sends half the buffer each way, once to reduce and once to gather, over the NVSwitch.
  const double grad = 2.0 * static_cast<double>(stages[0].total_params());
  double tensor = 0;
  for (const auto& op : stages[0].ops) {
    if (op.kind == workloads::OpKind::TensorAllReduce) tensor += 2.0 * 1 / 2 * static_cast<double>(op.comm_bytes);
    // The receives' split activations (gradients, on stage 0) gathered over the tensor group.
    if (op.kind == workloads::OpKind::TensorAllGather) tensor += 1.0 / 2 * static_cast<double>(op.comm_bytes);
  }
  CHECK(link_bytes(r, "gpu0--nvswitch0_UP") == doctest::Approx(tensor + 2.0 * 1 / 2 * grad).epsilon(1e-9));

  // ZeRO-3 partitions a stage's model state over its data-parallel group of 2, not over all 8
  // GPUs: each GPU keeps half of its stage's 12 B/param of fp32 state (for the stage that fits
  // worst, whichever it is).
  const auto zero3 = simulate_layout(stages, layout, topo, hw, "zero3");
  REQUIRE(zero3.feasible);
  const double optimizer = zero3.memory.at("gpu_optimizer_bytes").get<double>();
  bool half_of_a_stage = false;
  for (const auto& stage : stages)
    half_of_a_stage |= std::abs(optimizer - 12.0 * static_cast<double>((stage.total_params() + 1) / 2)) < 1;
  CHECK(half_of_a_stage);
}

TEST_CASE("a scenario's parallelism: data derived from the GPUs, checked when given, refused with a trace") {
  auto scenario = [](Json parallelism) {
    Json j = Json::parse(R"({"name": "tp-pp", "model": "gpt3-125m",
      "training": {"micro_batch": 1, "seq_len": 256, "grad_accum": 4},
      "cluster": {"topology": "dgx", "servers": 2, "gpus_per_server": 4},
      "systems": ["ddp"]})");
    j["parallelism"] = std::move(parallelism);
    return j;
  };
  auto failure = [](const Json& j) -> std::string {
    try {
      sim::scenario_from_json(JsonNode(j, "tp-pp.json"));
    } catch (const InputError& e) {
      return e.json_path() + ": " + e.what();
    }
    return "";
  };
  const auto s = sim::scenario_from_json(JsonNode(scenario({{"tensor", 2}, {"pipeline", 2}}), "tp-pp.json"));
  CHECK(s.layout.data == 2);
  CHECK(sim::scenario_stage_traces(s).size() == 2);
  CHECK(failure(scenario({{"tensor", 2}, {"pipeline", 2}, {"data", 2}})).empty());
  CHECK(failure(scenario({{"tensor", 2}, {"pipeline", 2}, {"data", 4}})).starts_with("$.parallelism.data"));
  CHECK(failure(scenario({{"tensor", 3}})).starts_with("$.parallelism"));
  // Without "parallelism" every GPU is a data-parallel rank of the whole model.
  Json plain = scenario(Json::object());
  plain.erase("parallelism");
  const auto whole = sim::scenario_from_json(JsonNode(plain, "tp-pp.json"));
  CHECK(whole.layout.whole_model_per_gpu());
  CHECK(whole.layout.data == 8);
}

TEST_CASE("LuWu in each data-parallel group of tensor 2 x pipeline 2 x data 2: racks a group leaves empty send nothing") {
  // 4 servers of 2 GPUs in 2 racks: stage 0's groups sit in rack 0, stage 1's in rack 1, so each
  // group's in-switch aggregation and multicast have an empty rack.  A worker moves what it
  // moves under one switch.
  const auto layout = tp2_pp2_dp2();
  const auto stages = stage_traces(short_pipeline_training(), layout);
  const auto one_switch_topo = star_of_2gpu_servers(1, 1);
  const auto racked_topo = star_of_2gpu_servers(2, 1);
  const auto one_switch = simulate_layout(stages, layout, one_switch_topo, quiet_hardware(one_switch_topo), "luwu");
  const auto racked = simulate_layout(stages, layout, racked_topo, quiet_hardware(racked_topo), "luwu");
  REQUIRE((one_switch.feasible && racked.feasible));
  CHECK(racked.sent_bytes_per_worker == doctest::Approx(one_switch.sent_bytes_per_worker).epsilon(1e-12));
  CHECK(racked.received_bytes_per_worker == doctest::Approx(one_switch.received_bytes_per_worker).epsilon(1e-12));
  // Each trunk carries only its own stage's groups: rack 0's up and down both non-zero.
  CHECK(link_bytes(racked, "tor0--switch_UP") > 0);
  CHECK(link_bytes(racked, "tor1--switch_UP") > 0);
  // Down a trunk goes what the rack's 4 workers receive from outside it, each multicast piece once
  // for the rack's 2 data-parallel ranks (its switch replicates it): well under what they receive
  // (it was all of it, and more, when every stage's multicast went down rack 0's trunk).
  for (const char* trunk : {"tor0--switch_DOWN", "tor1--switch_DOWN"}) {
    CAPTURE(trunk);
    CHECK(link_bytes(racked, trunk) > 0);
    CHECK(link_bytes(racked, trunk) < 0.75 * 4 * racked.received_bytes_per_worker);
  }
}

TEST_CASE("LuWu in each data-parallel group of tensor 2 x pipeline 2 x data 2 with pods: a group leaves a pod empty") {
  // 4 servers of 2 GPUs, a server per rack, racks 0-1 in pod 0 and 2-3 in pod 1: stage 0's groups
  // span racks 0 and 1 (pod 0), stage 1's racks 2 and 3 (pod 1), so each group's aggregation and
  // multicast have an empty pod.  Pod j's trunk then carries what rack j's trunk carries with 2
  // racks of 2 servers and no pods (there the rack switch sums the group, here the pod switch).
  const auto layout = tp2_pp2_dp2();
  const auto stages = stage_traces(short_pipeline_training(), layout);
  const auto one_switch_topo = star_of_2gpu_servers(1, 1);
  const auto racked_topo = star_of_2gpu_servers(2, 1);
  const auto podded_topo = star_of_2gpu_servers(4, 2);
  const auto one_switch = simulate_layout(stages, layout, one_switch_topo, quiet_hardware(one_switch_topo), "luwu");
  const auto racked = simulate_layout(stages, layout, racked_topo, quiet_hardware(racked_topo), "luwu");
  const auto podded = simulate_layout(stages, layout, podded_topo, quiet_hardware(podded_topo), "luwu");
  REQUIRE((one_switch.feasible && racked.feasible && podded.feasible));
  CHECK(podded.sent_bytes_per_worker == doctest::Approx(one_switch.sent_bytes_per_worker).epsilon(1e-12));
  CHECK(podded.received_bytes_per_worker == doctest::Approx(one_switch.received_bytes_per_worker).epsilon(1e-12));
  for (int j = 0; j < 2; ++j) {
    for (const char* dir : {"_UP", "_DOWN"}) {
      const std::string pod_trunk = "pod" + std::to_string(j) + "--switch" + dir;
      const std::string rack_trunk = "tor" + std::to_string(j) + "--switch" + dir;
      CAPTURE(pod_trunk);
      CHECK(link_bytes(podded, pod_trunk) > 0);
      CHECK(link_bytes(podded, pod_trunk) == doctest::Approx(link_bytes(racked, rack_trunk)).epsilon(1e-9));
    }
  }
  // Every rack trunk carries its own rack's share: each goes to its pod, none to the cluster switch.
  for (int k = 0; k < 4; ++k) {
    const std::string trunk = "tor" + std::to_string(k) + "--pod" + std::to_string(k / 2);
    CHECK(link_bytes(podded, trunk + "_UP") > 0);
    CHECK(link_bytes(podded, trunk + "_DOWN") > 0);
    CHECK(link_bytes(podded, "tor" + std::to_string(k) + "--switch_UP") == 0);
  }
}
