#pragma once
// The named parameters of the simulated systems, each with its documented default.  A scenario's
// system entry may set any of them ({"name": "zero3", "prefetch_layers": 2}).
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "models/profile.hpp"
#include "workloads/memory_footprint.hpp"

namespace luwu::sim {

struct SystemSettings {
  workloads::SystemKind kind = workloads::SystemKind::Ddp;
  std::string label;  // how results name it ("zero3", "zero-infinity-nvme", ...)

  // DDP: gradient bucket size.  PyTorch DDP's bucket_cap_mb default, 25 MB.
  double bucket_bytes = 25e6;
  // ZeRO-3 family: layers whose parameters are all-gathered ahead of the compute stream.  1 =
  // "prefetch layer l+1 while layer l computes" (DeepSpeed's prefetch, ZeRO-3 paper section 7).
  int prefetch_layers = 1;
  // Collective algorithm: "auto" = hierarchical when servers hold several GPUs, ring otherwise;
  // "ring", "hierarchical", or "tree" (a pipelined binary tree for all-reduce, rings otherwise).
  std::string collective_algorithm = "auto";

  // ZeRO-Infinity: where parameters and optimizer state live, "nvme" or "dram" (DeepSpeed's
  // offload_param.device / offload_optimizer.device).
  std::string offload = "nvme";
  // ZeRO-Infinity: optimizer state is streamed through DRAM in sub-groups of this many parameters,
  // read -> update -> write back, double-buffered.  DeepSpeed's sub_group_size default, 1e9.
  double optimizer_chunk_params = 1e9;
  // ZeRO-Infinity / LuWu: keep activation checkpoints in host memory (DeepSpeed's
  // cpu_checkpointing): each block's checkpoint goes to the host after forward and comes back
  // before its recompute, over the GPU's PCIe.
  bool offload_activation_checkpoints = false;

  // ZeRO-Offload: gradients are reduce-scattered in buckets of this many bytes.  DeepSpeed's
  // reduce_bucket_size default, 5e8 elements = 1e9 bytes at 16 bits (as MemoryOptions counts it).
  double reduce_bucket_bytes = 1e9;
  // ZeRO-Offload: the paper's one-step delayed parameter update (DPU, arXiv 2101.06840): the CPU
  // step, the copy back and the all-gather of the previous step run under this step's forward and
  // backward.  Off by default: the paper enables it only after the first few steps, as an option.
  bool delayed_param_update = false;

  // LuWu: a layer's parameters and gradients cross the switch in this many pieces, so the
  // multicast and the aggregation pipeline (a piece is forwarded once it has fully arrived).
  int pipeline_chunks = 16;
  // LuWu / SwitchML: bytes per gradient element on the wire.  4: gradients travel as 32-bit fixed
  // point, which the switch's integer ALUs add (SwitchML, section 4); the paper does not say
  // otherwise for LuWu.
  double aggregation_element_bytes = 4;
  // LuWu: share of the optimizer node's DRAM available to hold fp16 parameters and optimizer state
  // (the rest: OS, buffers).  Project assumption.
  double optimizer_node_dram_share = 0.9;
  // LuWu: layers of optimizer state read from SSD into DRAM ahead of their update.
  int state_prefetch_layers = 2;
  // LuWu: where the optimizer node runs the update, "cpu" (its CPU, from DRAM) or "gpu" (a GPU
  // beside it over PCIe, models/gpu_update_engine.hpp); the paper leaves it open.  CPU by default:
  // the update is memory-bound, and the node's DRAM (307 GB/s achieved) outruns one PCIe Gen4 x16
  // link (28.6 GB/s per direction) for the same bytes.
  std::string update_engine = "cpu";
  std::string update_gpu = "a100-40gb-pcie";     // the GPU profile of the "gpu" engine
  std::string update_gpu_pcie = "pcie-gen4-x16";  // and of its PCIe link

  // The names a scenario may set, for strict parsing.
  static const std::vector<std::string>& keys() {
    static const std::vector<std::string> k = {"name",
                                               "label",
                                               "bucket_bytes",
                                               "prefetch_layers",
                                               "collective_algorithm",
                                               "offload",
                                               "optimizer_chunk_params",
                                               "offload_activation_checkpoints",
                                               "reduce_bucket_bytes",
                                               "delayed_param_update",
                                               "pipeline_chunks",
                                               "aggregation_element_bytes",
                                               "optimizer_node_dram_share",
                                               "state_prefetch_layers",
                                               "update_engine",
                                               "update_gpu",
                                               "update_gpu_pcie"};
    return k;
  }
};

// {"name": "ddp", ...} or the bare string "ddp".
inline SystemSettings system_settings_from_json(const JsonNode& node) {
  SystemSettings s;
  if (node.is_string()) {
    try {
      s.kind = workloads::parse_system(node.as_string());
    } catch (const std::invalid_argument& e) {
      node.fail(e.what());
    }
    s.label = workloads::to_string(s.kind);
    return s;
  }
  node.only_keys(SystemSettings::keys());
  try {
    s.kind = workloads::parse_system(node.at("name").as_string());
  } catch (const std::invalid_argument& e) {
    node.at("name").fail(e.what());
  }
  s.label = node.get_string("label", workloads::to_string(s.kind));
  if (node.has("bucket_bytes")) s.bucket_bytes = node.at("bucket_bytes").as_positive();
  s.prefetch_layers = static_cast<int>(node.get_int("prefetch_layers", s.prefetch_layers, 0, 1000));
  s.collective_algorithm = node.get_string("collective_algorithm", s.collective_algorithm);
  if (s.collective_algorithm != "auto" && s.collective_algorithm != "ring" && s.collective_algorithm != "hierarchical" &&
      s.collective_algorithm != "tree")
    node.at("collective_algorithm").fail("expected \"auto\", \"ring\", \"hierarchical\" or \"tree\"");
  s.offload = node.get_string("offload", s.offload);
  if (s.offload != "nvme" && s.offload != "dram") node.at("offload").fail("expected \"nvme\" or \"dram\"");
  if (node.has("optimizer_chunk_params")) s.optimizer_chunk_params = node.at("optimizer_chunk_params").as_positive();
  s.offload_activation_checkpoints = node.get_bool("offload_activation_checkpoints", s.offload_activation_checkpoints);
  if (node.has("reduce_bucket_bytes")) s.reduce_bucket_bytes = node.at("reduce_bucket_bytes").as_positive();
  s.delayed_param_update = node.get_bool("delayed_param_update", s.delayed_param_update);
  s.pipeline_chunks = static_cast<int>(node.get_int("pipeline_chunks", s.pipeline_chunks, 1, 1 << 16));
  if (node.has("aggregation_element_bytes")) s.aggregation_element_bytes = node.at("aggregation_element_bytes").as_positive();
  if (node.has("optimizer_node_dram_share")) {
    s.optimizer_node_dram_share = node.at("optimizer_node_dram_share").as_positive();
    if (s.optimizer_node_dram_share > 1) node.at("optimizer_node_dram_share").fail("expected a share in (0, 1]");
  }
  s.state_prefetch_layers = static_cast<int>(node.get_int("state_prefetch_layers", s.state_prefetch_layers, 0, 1000));
  s.update_engine = node.get_string("update_engine", s.update_engine);
  if (s.update_engine != "cpu" && s.update_engine != "gpu") node.at("update_engine").fail("expected \"cpu\" or \"gpu\"");
  s.update_gpu = node.get_string("update_gpu", s.update_gpu);
  s.update_gpu_pcie = node.get_string("update_gpu_pcie", s.update_gpu_pcie);
  // The engine's profiles are resolved now, so a misspelt name is an error at its JSON path.
  if (s.update_engine == "gpu") {
    for (const char* key : {"update_gpu", "update_gpu_pcie"}) {
      const std::string name = key == std::string("update_gpu") ? s.update_gpu : s.update_gpu_pcie;
      try {
        auto profile = models::find_profile(name);
        models::require_kind(profile, {key == std::string("update_gpu") ? "gpu" : "pcie"});
      } catch (const InputError& e) {
        (node.has(key) ? node.at(key) : node).fail(e.what());
      }
    }
  }
  return s;
}

}  // namespace luwu::sim
