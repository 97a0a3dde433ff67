// `luwusim memory`: per-GPU, per-host and optimizer-node bytes of a model under each training
// system, and whether it runs.  "Does not fit" is a result (exit 0), not an error.
//   luwusim memory SCENARIO.json   the scenario's systems on its cluster: the same verdict `run` gives
//   luwusim memory --model M --workers N --gpu-mem 40GB ...   a model alone, GPU memory only
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "cli/quantity_flag.hpp"
#include "common/units.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/stage_fit.hpp"
#include "sim/systems/registry.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/parallel_layout.hpp"

namespace {

using namespace luwu::workloads;
using luwu::sim::MemoryFootprint;
namespace units = luwu::units;

struct MemoryArgs {
  std::string scenario;
  std::string model;
  std::string system = "all";
  int workers = 0;
  std::string gpu_memory;
  int micro_batch = 1;
  int seq_len = 0;  // 0: the model's context, at most 2048
  int grad_accum = 1;
  bool recompute = false;
  bool memory_efficient_attention = false;
  bool offload_checkpoints = false;
  std::string dtype = "fp16";
  int prefetch_layers = -1;  // -1: each system's default
  std::string param_fetch;   // empty: the systems' default
  bool json = false;
};

struct Row {
  std::string system;
  MemoryFootprint footprint;
  std::string problem;  // "" when it runs
  std::optional<luwu::sim::DeepSpeedEstimate> deepspeed;  // DeepSpeed's own estimate, for its systems
};

std::string b(std::uint64_t bytes) { return units::bytes(static_cast<double>(bytes)); }

void print(const std::vector<Row>& rows, const luwu::Json& context, const std::string& heading, bool json, bool one) {
  if (json) {
    luwu::Json out = luwu::Json::array();
    for (const auto& r : rows) {
      luwu::Json row = luwu::sim::footprint_to_json(r.footprint);
      row["system"] = r.system;
      row["runs"] = r.problem.empty();
      row["problem"] = r.problem;
      if (r.deepspeed)
        row["deepspeed_estimate"] = {{"estimator", r.deepspeed->estimator},
                                     {"gpu_bytes", r.deepspeed->gpu_bytes},
                                     {"cpu_bytes_per_node", r.deepspeed->cpu_bytes_per_node}};
      for (const auto& [key, value] : context.items()) row[key] = value;
      out.push_back(std::move(row));
    }
    std::cout << (one ? out[0] : out).dump(2) << "\n";
    return;
  }
  std::cout << heading;
  std::cout << fmt::format("{:<20} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12} {:>12}  {}\n", "system",
                           "params", "grads", "optimizer", "activations", "buffers", "runtime", "GPU total",
                           "host/worker", "SSD/worker", "opt. node", "runs");
  for (const auto& r : rows) {
    const auto& f = r.footprint;
    std::cout << fmt::format("{:<20} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>12} {:>12}  {}\n", r.system,
                             b(f.gpu_params_bytes), b(f.gpu_grads_bytes), b(f.gpu_optimizer_bytes),
                             b(f.gpu_activation_bytes), b(f.gpu_buffer_bytes), b(f.gpu_runtime_bytes),
                             b(f.gpu_total_bytes()), b(f.host_bytes_per_worker), b(f.worker_ssd_bytes),
                             b(f.optimizer_node_bytes),
                             r.problem.empty() ? "yes" : "no");
  }
  for (const auto& r : rows) std::cout << "  " << r.system << ": " << (r.problem.empty() ? r.footprint.reason : r.problem) << "\n";
  // DeepSpeed's own estimators, beside luwusim's accounting (model states only: no activations).
  for (const auto& r : rows)
    if (r.deepspeed)
      std::cout << fmt::format("  {}: DeepSpeed's {}: {} per GPU{}\n", r.system, r.deepspeed->estimator,
                               units::bytes(r.deepspeed->gpu_bytes),
                               r.deepspeed->cpu_bytes_per_node > 0
                                   ? fmt::format(", {} per server", units::bytes(r.deepspeed->cpu_bytes_per_node))
                                   : "");
}

// The scenario's systems on its cluster, judged as `run` judges them: under a tensor x pipeline
// layout each stage's GPUs and optimizer node, and the stage that fits worst is the row.
int run_scenario_memory(const MemoryArgs& a) {
  const auto scenario = luwu::sim::load_scenario(a.scenario);
  const std::vector<Trace> stages = luwu::sim::scenario_stage_traces(scenario);
  luwu::sim::ParallelWorkload workload{scenario.layout, {}};
  for (const auto& stage : stages) workload.stages.push_back(&stage);
  const auto& hardware = scenario.hardware;
  std::vector<Row> rows;
  for (const auto& system : scenario.systems) {
    if (a.system != "all" && a.system != system->label() && a.system != system->name()) continue;
    const auto fit = luwu::sim::worst_stage_fit(workload, hardware, scenario.topology.optimizer_nodes().size(), *system);
    // DeepSpeed's estimators are for data parallelism over the whole model.
    const auto deepspeed = scenario.layout.whole_model_per_gpu() ? system->deepspeed_estimate(stages.front(), hardware)
                                                                 : std::nullopt;
    rows.push_back({system->label(), fit.fit().footprint, fit.problem(), deepspeed});
  }
  if (rows.empty()) throw std::invalid_argument("--system " + a.system + " is not one of the scenario's systems");
  const int workers = static_cast<int>(scenario.topology.gpus().size());
  std::uint64_t params = 0;  // the whole model's, not one stage's
  if (scenario.layout.whole_model_per_gpu())
    params = stages.front().total_params();
  else
    for (const auto& layer : layer_infos(scenario.model, scenario.training)) params += layer.params;
  luwu::Json context = {{"scenario", scenario.name}, {"model", scenario.model.name},
                        {"params", params},          {"workers", workers},
                        {"gpu", hardware.gpu.name},  {"gpu_memory_bytes", hardware.gpu.hbm_bytes}};
  std::string heading = fmt::format("{}: {} ({} params), {} workers x {} ({})\n", scenario.name, scenario.model.name,
                                    units::count(static_cast<double>(params)), workers, hardware.gpu.name,
                                    units::bytes(hardware.gpu.hbm_bytes));
  if (!scenario.layout.whole_model_per_gpu()) {
    const auto& l = scenario.layout;
    context["parallelism"] = layout_to_json(l);
    heading += fmt::format("layout: tensor {} x pipeline {} x data {}{}: per GPU of the stage that fits worst\n",
                           l.tensor, l.pipeline, l.data,
                           l.expert > 1 ? fmt::format(" (experts over {})", l.expert) : "");
  }
  print(rows, context, heading, a.json, a.system != "all");
  return 0;
}

// A model alone: the GPU memory each system needs, with its default settings (and the
// checkpoint-offload and prefetch flags, for the systems that have those settings).
int run_model_memory(const MemoryArgs& a) {
  if (a.model.empty() || a.workers == 0 || a.gpu_memory.empty())
    throw std::invalid_argument("give a scenario file, or --model, --workers and --gpu-mem");
  ModelConfig model = resolve_model(a.model);
  if (a.seq_len < 0) throw std::invalid_argument("--seq must be positive, got " + std::to_string(a.seq_len));
  TrainingConfig training;
  training.micro_batch = a.micro_batch;
  training.seq_len = a.seq_len > 0 ? a.seq_len : std::min(2048, model.max_seq);
  training.grad_accum = a.grad_accum;
  training.recompute = a.recompute;
  training.memory_efficient_attention = a.memory_efficient_attention;
  training.dtype = parse_dtype(a.dtype);
  const double gpu_bytes = luwu::cli::quantity_flag("--gpu-mem", a.gpu_memory, units::Dim::Bytes, "40GB or 80GiB");

  luwu::Json settings = luwu::Json::object();
  if (a.offload_checkpoints) settings["offload_activation_checkpoints"] = true;
  if (a.prefetch_layers >= 0) settings["prefetch_layers"] = a.prefetch_layers;
  // Prefetching layers ahead implies gathering per layer for the stage-3 systems.
  if (!a.param_fetch.empty()) settings["param_fetch"] = a.param_fetch;
  else if (a.prefetch_layers >= 0) settings["param_fetch"] = "layer";
  const auto names = a.system == "all" ? luwu::sim::system_names() : std::vector<std::string>{a.system};
  const Trace trace = generate_trace(model, training);
  std::vector<Row> rows;
  for (const auto& name : names) {
    auto system = luwu::sim::system_named(name, settings);
    auto footprint = system->memory_footprint(trace, a.workers, gpu_bytes);
    luwu::sim::Hardware one_gpu_servers;  // a model alone: single-GPU workers
    one_gpu_servers.workers = a.workers;
    rows.push_back({name, footprint, footprint.fits ? "" : footprint.reason, system->deepspeed_estimate(trace, one_gpu_servers)});
  }
  const luwu::Json context = {{"model", model.name},
                              {"params", trace.total_params()},
                              {"workers", a.workers},
                              {"gpu_memory_bytes", gpu_bytes},
                              {"micro_batch", training.micro_batch},
                              {"seq_len", training.seq_len},
                              {"grad_accum", training.grad_accum},
                              {"recompute", training.recompute},
                              {"dtype", to_string(training.dtype)},
                              {"memory_efficient_attention", training.memory_efficient_attention},
                              {"offload_activation_checkpoints", a.offload_checkpoints}};
  const std::string heading = fmt::format(
      "{} ({} params), {} workers, {} per GPU; micro-batch {} x seq {}, recompute {}{}, {}{}\n", model.name,
      units::count(static_cast<double>(trace.total_params())), a.workers, units::bytes(gpu_bytes),
      training.micro_batch, training.seq_len, training.recompute ? "on" : "off",
      a.offload_checkpoints ? " (checkpoints on host where the system offloads them)" : "", to_string(training.dtype),
      training.memory_efficient_attention ? ", memory-efficient attention" : "");
  print(rows, context, heading, a.json, a.system != "all");
  return 0;
}

const bool registered = luwu::cli::register_command(
    "memory", "Memory footprint per GPU, host and optimizer node under each training system, and whether it runs",
    [](CLI::App& app) {
      auto a = std::make_shared<MemoryArgs>();
      app.add_option("scenario", a->scenario,
                     "Scenario JSON file: its systems on its cluster, judged as `run` judges them");
      app.add_option("--model", a->model, "Catalog name or a model JSON file (without a scenario)");
      app.add_option("--system", a->system, "A system name (or, with a scenario, a label), or all")
          ->capture_default_str();
      app.add_option("--workers", a->workers, "Data-parallel workers, one GPU each (without a scenario)");
      app.add_option("--gpu-mem", a->gpu_memory, "GPU memory, with a unit: 40GB, 80GiB (without a scenario)");
      app.add_option("--micro-batch", a->micro_batch, "Sequences per micro-batch")->capture_default_str();
      app.add_option("--seq", a->seq_len, "Tokens per sequence (default: the model's context, at most 2048)");
      app.add_option("--grad-accum", a->grad_accum, "Micro-batches per iteration")->capture_default_str();
      app.add_flag("--recompute", a->recompute, "Full activation checkpointing");
      app.add_flag("--memory-efficient-attention", a->memory_efficient_attention,
                   "Attention without materialized scores (FlashAttention): no 5as^2b activation bytes");
      app.add_flag("--offload-checkpoints", a->offload_checkpoints,
                   "With --recompute: keep block checkpoints in host memory, for the systems that do "
                   "(offload_activation_checkpoints)");
      app.add_option("--dtype", a->dtype, "fp16, bf16 or fp32")->capture_default_str();
      app.add_option("--prefetch-layers", a->prefetch_layers,
                     "Layers fetched ahead of the computing one, for the systems that prefetch (default: theirs, 1); "
                     "ZeRO-3 and ZeRO-Infinity then gather per layer (--param-fetch layer)");
      app.add_option("--param-fetch", a->param_fetch,
                     "How ZeRO-3 and ZeRO-Infinity gather parameters: sub-module (DeepSpeed, their default) or layer "
                     "(FSDP-style)");
      app.add_flag("--json", a->json, "Print JSON (an object for one system, an array for all)");
      return [a]() -> int {
        if (!a->scenario.empty()) {
          if (!a->model.empty() || a->workers != 0 || !a->gpu_memory.empty())
            throw std::invalid_argument("give either a scenario file or --model/--workers/--gpu-mem, not both");
          return run_scenario_memory(*a);
        }
        return run_model_memory(*a);
      };
    });

}  // namespace
