// LuWu: model-in-network data parallelism (Sun et al., arXiv 2409.00918).
//
// GPU workers keep no persistent parameters, gradients or optimizer state.  The in-network
// optimizer node holds the fp16 parameters and the fp32 master, m and v, over DRAM and SSD.
//  - Forward, per layer: the node sends the layer's fp16 parameters once; the switch multicasts
//    them to every worker; each SmartNIC writes them into GPU memory by DMA (no GPU kernel, only
//    the smaller DMA interference).  The node streams `prefetch_layers` layers ahead of compute.
//  - Backward, per layer: the parameters are multicast again; each worker's SmartNIC streams the
//    layer's gradient into the switch, which aggregates it in-network and forwards one aggregated
//    copy to the node.  Each micro-batch's aggregate is accumulated at the node.
//  - The node updates layer l as soon as its aggregated gradient of the last micro-batch has
//    arrived, pipelined behind backward: layer l's state is prefetched from SSD into DRAM
//    (`state_prefetch_layers` ahead), updated on the node's CPU (or a GPU beside it:
//    `update_engine`), and written back.
//  - `param_fetch: "sub-module"` streams sub-modules instead of layers (luwu.hpp).
//  - `parameter_residency: "per-iteration"` multicasts each layer once per iteration (its first
//    use) and keeps it on the GPU; the workers accumulate gradients there and push them in the
//    last micro-batch's backward only (luwu.hpp says why).
//  - With model parallelism each data-parallel group (a stage's) runs this iteration with its
//    stage's optimizer node (luwu-star's optimizer_nodes, sim/experiment/simulate.cpp).
//  - `push_pull: "gpu-kernel"` (the paper's ablation) moves the pushes and pulls by GPU kernels
//    instead of SmartNIC DMA, so they contend for SMs as NCCL's collectives do.
//  - With offload_activation_checkpoints, each worker keeps its activation checkpoints in its
//    host's memory and moves them over its PCIe (checkpoint_offload.hpp).
// The iteration ends when the last layer is updated (the next forward needs layer 0 first).
// The actors: schedule.hpp.
#include "sim/systems/luwu/luwu.hpp"

#include "common/units.hpp"
#include "models/profile.hpp"
#include "sim/systems/luwu/placement.hpp"
#include "sim/systems/luwu/schedule.hpp"

namespace luwu::sim {

int luwu_layers_ahead(const LuwuSettings& s, const workloads::Trace& trace, int workers, double gpu_memory) {
  if (s.sub_module_fetch || s.parameter_residency != LuwuSettings::ParameterResidency::PerUse) return s.prefetch.layers;
  // Activations and the runtime, beside the layers in flight.
  const auto rest = base_footprint(trace, workers, gpu_memory, s.checkpoints.enabled).gpu_total_bytes();
  for (int ahead = s.prefetch.layers; ahead > 0; --ahead)
    if (static_cast<double>(rest + layer_working_set_bytes(trace, ahead)) <= gpu_memory) return ahead;
  return 0;
}

namespace {

class Luwu : public System {
 public:
  Luwu(const SystemEntry& entry, LuwuSettings settings) : System(entry), settings_(std::move(settings)) {}

  // Workers keep only the layers in flight (per-iteration residency: the parameters and their
  // gradient accumulator); the optimizer node keeps the parameters and the optimizer state.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = base_footprint(trace, workers, gpu_memory, settings_.checkpoints.enabled);
    const auto bytes = model_state_bytes(trace.training.dtype);
    std::string note;
    if (settings_.parameter_residency == LuwuSettings::ParameterResidency::PerIteration) {
      // The parameters stay for the iteration, beside the gradients accumulated over its micro-batches.
      f.gpu_params_bytes = bytes.param * trace.total_params();
      f.gpu_grads_bytes = bytes.grad * trace.total_params();
    } else if (settings_.sub_module_fetch) {
      f.gpu_buffer_bytes = gathered_working_set_bytes(trace, *settings_.sub_module_fetch);
    } else {
      const int ahead = luwu_layers_ahead(settings_, trace, workers, gpu_memory);
      f.gpu_buffer_bytes = layer_working_set_bytes(trace, ahead);
      if (ahead < settings_.prefetch.layers) {
        const auto asked = f.gpu_total_bytes() - f.gpu_buffer_bytes + layer_working_set_bytes(trace, settings_.prefetch.layers);
        f.fitted_by = note = "streams " + std::to_string(ahead) + " layer" + (ahead == 1 ? "" : "s") + " ahead, not " +
                             std::to_string(settings_.prefetch.layers) + ": " + std::to_string(settings_.prefetch.layers + 1) +
                             " layers' parameters and gradients on the GPU would need " +
                             units::bytes(static_cast<double>(asked));
      }
    }
    const std::uint64_t model = (bytes.optimizer + bytes.param) * trace.total_params();
    if (colocated())
      f.host_bytes_per_worker += model / static_cast<std::uint64_t>(workers);
    else
      f.optimizer_node_bytes = model;
    judge_footprint(f, name(), gpu_memory, note);
    return f;
  }

  std::string capacity_problem(const workloads::Trace& trace, const Hardware& hw) const override {
    if (!colocated() && !hw.optimizer_node)
      return "does not run: luwu needs an in-network optimizer node (the luwu-star topology has one)";
    if (!hw.network_switch) return "does not run: luwu needs a programmable switch";
    if (settings_.node_pipelining == LuwuSettings::NodePipelining::LayerCentric && !luwu_site_host(hw, settings_).thread_rates)
      return "does not run: layer-centric node pipelining needs the optimizer host's per-thread rates "
             "(adam_thread_update_rate and io_thread_bandwidth in its host profile, e.g. xeon-gold-5320-node)";
    const auto p = luwu_site_placement(trace, hw, settings_);
    if (!p.fits())
      return does_not_fit(colocated() ? "a worker server's share of the optimizer (DRAM share + NVMe)"
                                      : "the optimizer node (DRAM share + SSDs)",
                          p.param_bytes + p.state_bytes, p.dram_usable_bytes + p.ssd_bytes);
    return "";
  }

  bool uses_optimizer_node() const override { return !colocated(); }
  // Colocated, each worker keeps and updates its own share of the model: not symmetric to fold.
  bool folds_data_parallel() const override { return !colocated(); }
  // The colocated ablation keeps the optimizer on the workers' own SSDs.
  bool uses_worker_ssds() const override { return colocated(); }
  // No GPU collectives: its traffic goes through the switch or its servers, never a ring.
  std::vector<CollectiveCall> collective_calls(const workloads::Trace&) const override { return {}; }
  // The node streams as many layers ahead as the workers' GPUs hold (luwu_layers_ahead).
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    LuwuSettings s = settings_;
    s.prefetch.layers = luwu_layers_ahead(settings_, env.trace, env.hw.workers, env.hw.gpu.hbm_bytes);
    return make_luwu_schedule(s, env);
  }

 private:
  bool colocated() const { return luwu_colocated(settings_); }
  LuwuSettings settings_;
};

// At most the paper's resend timeout scale.
double interval_s(const JsonNode& node) { return duration_s(node, 10); }

}  // namespace

SystemPtr parse_luwu(const SystemEntry& entry) {
  entry.only_settings(setting_keys({ParamFetchSettings::keys(), AggregationSettings::keys(),
                                    CheckpointOffloadSettings::keys(),
                                    {"node_storage", "optimizer_node_dram_share", "state_prefetch_layers", "update_engine", "update_gpu",
                                     "update_gpu_pcie", "node_pipelining", "push_pull", "reliability",
                                     "heartbeat_interval", "optimizer_placement", "parameter_residency"}}));
  LuwuSettings s;
  // Layers unless "param_fetch" says otherwise (ZeRO's default is sub-modules, LuWu's is layers).
  if (entry.has("param_fetch")) {
    const ParamFetchSettings fetch = ParamFetchSettings::parse(entry);  // its keys only with their policy
    s.prefetch.layers = fetch.prefetch_layers;
    if (fetch.granularity == ParamFetchSettings::Granularity::SubModule) {
      if (entry.has("param_persistence_threshold"))
        entry.at("param_persistence_threshold")
            .fail("luwu's workers keep no persistent parameters: every sub-module is streamed");
      for (const char* key : {"module_hooks", "forward_hook_host_time", "backward_hook_host_time"})
        if (entry.has(key))
          entry.at(key).fail(std::string("\"") + key + "\": luwu's workers run no per-module hooks: its SmartNIC streams the sub-modules");
      s.sub_module_fetch = fetch;
      s.sub_module_fetch->param_persistence_threshold = 0;
      s.sub_module_fetch->module_hooks = ParamFetchSettings::ModuleHooks::WithParameters;
    }
  } else {
    for (const auto& key : ParamFetchSettings::sub_module_keys())
      if (entry.has(key)) entry.at(key).fail("\"" + key + "\" applies only with \"param_fetch\": \"sub-module\"");
    s.prefetch = PrefetchSettings::parse(entry);
  }
  s.aggregation = AggregationSettings::parse(entry, kLuwuGradientElementBytes);
  s.checkpoints = CheckpointOffloadSettings::parse(entry, /*blocking_by_default=*/false);
  using Storage = LuwuSettings::NodeStorage;
  if (entry.has("node_storage"))
    s.node_storage = entry.at("node_storage").as_choice(
        Choices<Storage>{{"out-of-core", Storage::OutOfCore}, {"dram-first", Storage::DramFirst}}, "node storage");
  if (entry.has("optimizer_node_dram_share")) {
    if (s.node_storage != Storage::DramFirst)
      entry.at("optimizer_node_dram_share").fail("\"optimizer_node_dram_share\" applies with \"node_storage\": \"dram-first\"");
    s.optimizer_node_dram_share = entry.at("optimizer_node_dram_share").as_positive();
    if (s.optimizer_node_dram_share > 1) entry.at("optimizer_node_dram_share").fail("expected a share in (0, 1]");
  }
  s.state_prefetch_layers = static_cast<int>(entry.settings().get_int("state_prefetch_layers", s.state_prefetch_layers, 0, 1000));
  using Engine = LuwuSettings::UpdateEngine;
  if (entry.has("update_engine"))
    s.update_engine = entry.at("update_engine").as_choice(Choices<Engine>{{"cpu", Engine::Cpu}, {"gpu", Engine::Gpu}}, "update engine");
  using Pipelining = LuwuSettings::NodePipelining;
  if (entry.has("node_pipelining"))
    s.node_pipelining = entry.at("node_pipelining")
                            .as_choice(Choices<Pipelining>{{"step-centric", Pipelining::StepCentric},
                                                           {"layer-centric", Pipelining::LayerCentric}},
                                       "node pipelining");
  if (entry.has("push_pull"))
    s.push_pull = entry.at("push_pull").as_choice(
        Choices<DataMover>{{"smartnic-dma", DataMover::NicDma}, {"gpu-kernel", DataMover::GpuKernel}}, "push/pull mover");
  using Protocol = models::ReliabilityProtocol;
  if (entry.has("reliability"))
    s.reliability.protocol = entry.at("reliability").as_choice(
        Choices<Protocol>{{"heartbeats", Protocol::SwitchHeartbeats}, {"per-packet-ack", Protocol::PerPacketAck}},
        "reliability protocol");
  if (entry.has("heartbeat_interval")) s.reliability.heartbeat_interval_s = interval_s(entry.at("heartbeat_interval"));
  using Placement = LuwuSettings::OptimizerPlacement;
  if (entry.has("optimizer_placement")) {
    s.optimizer_placement = entry.at("optimizer_placement")
                                .as_choice(Choices<Placement>{{"node", Placement::Node}, {"colocated", Placement::Colocated}},
                                           "optimizer placement");
    // What only the optimizer node has: its link's transport and a GPU beside it.
    if (s.optimizer_placement == Placement::Colocated)
      for (const char* key : {"reliability", "heartbeat_interval", "update_engine"})
        if (entry.has(key))
          entry.at(key).fail(std::string("\"") + key + "\" applies to the optimizer node; with \"optimizer_placement\": "
                             "\"colocated\" the workers' servers run the optimizer");
  }
  using Residency = LuwuSettings::ParameterResidency;
  if (entry.has("parameter_residency")) {
    s.parameter_residency = entry.at("parameter_residency")
                                .as_choice(Choices<Residency>{{"per-use", Residency::PerUse},
                                                              {"per-iteration", Residency::PerIteration}},
                                           "parameter residency");
    // Sub-module streaming exists for layers that do not fit whole; keeping every one makes it moot.
    if (s.parameter_residency == Residency::PerIteration && s.sub_module_fetch)
      entry.at("parameter_residency")
          .fail("\"per-iteration\" keeps every layer's parameters on the GPU: it streams whole layers, not "
                "\"param_fetch\": \"sub-module\"");
  }
  s.update_gpu = entry.settings().get_string("update_gpu", s.update_gpu);
  s.update_gpu_pcie = entry.settings().get_string("update_gpu_pcie", s.update_gpu_pcie);
  // The engine's profiles are resolved now, so a misspelt name is an error at its JSON path.
  if (s.update_engine == LuwuSettings::UpdateEngine::Gpu) {
    for (const auto& [key, name, kind] : {std::tuple{"update_gpu", s.update_gpu, "gpu"},
                                          std::tuple{"update_gpu_pcie", s.update_gpu_pcie, "pcie"}}) {
      try {
        models::require_kind(models::find_profile(name), {kind});
      } catch (const InputError& e) {
        (entry.has(key) ? entry.at(key) : entry.settings()).fail(e.what());
      }
    }
  }
  return std::make_shared<Luwu>(entry, s);
}

}  // namespace luwu::sim
