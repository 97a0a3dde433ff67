#pragma once
// A system's entry in a scenario's "systems" list: the bare name ("zero3") or an object
// {"name": "zero3", "label": "zero3-prefetch-2", <the system's settings>}.  Each system parses its
// own settings from it; the settings several systems share are parsed by the mechanism that uses
// them (prefetch depth, aggregation, checkpoint offload, the collective algorithm).
#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/choice.hpp"
#include "common/json_input.hpp"
#include "common/units.hpp"
#include "sim/engine/data_parallel_collectives.hpp"
#include "sim/engine/gpu_device.hpp"

namespace luwu::sim {

class SystemEntry {
 public:
  // A lenient entry ignores fields that are not the system's settings (a caller that sets one
  // setting for every system that has it), instead of failing at them.
  explicit SystemEntry(const JsonNode& node, bool lenient = false)
      : node_(node), settings_(node.is_object() ? node : empty_node(node)), lenient_(lenient) {
    name_ = node.is_object() ? node.at("name").as_string() : node.as_string();
  }

  const std::string& name() const { return name_; }
  std::string label() const { return settings_.get_string("label", name_); }
  // The entry's fields (an empty object for a bare name), at the entry's JSON path.
  const JsonNode& settings() const { return settings_; }
  bool has(const std::string& key) const { return settings_.has(key); }
  JsonNode at(const std::string& key) const { return settings_.at(key); }

  // Fails at the first field that is not "name", "label" or one of the system's settings.
  void only_settings(std::vector<std::string> keys) const {
    if (!node_.is_object() || lenient_) return;
    keys.insert(keys.begin(), {"name", "label"});
    for (const auto& key : settings_.keys()) {
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      std::string own;
      for (std::size_t i = 2; i < keys.size(); ++i) own += (own.empty() ? "" : ", ") + keys[i];
      settings_.at(key).fail("\"" + key + "\" is not a setting of " + name_ + did_you_mean(key, keys) +
                             "; its settings: " + (own.empty() ? "none" : own));
    }
  }

 private:
  static JsonNode empty_node(const JsonNode& at) {
    static const Json empty = Json::object();
    return JsonNode(empty, at.file(), at.path());
  }
  JsonNode node_;
  JsonNode settings_;
  bool lenient_;
  std::string name_;
};

// Settings lists are concatenated from the mechanisms a system uses.
inline std::vector<std::string> setting_keys(std::initializer_list<std::vector<std::string>> groups) {
  std::vector<std::string> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  return all;
}

// A duration setting: a number of seconds or a quantity such as "10us", at most `max_s` and above
// 0 (or at least 0 where `zero_allowed`).
inline double duration_s(const JsonNode& node, double max_s, bool zero_allowed = false) {
  double v = 0;
  if (node.is_number()) {
    v = node.as_number();
  } else {
    try {
      v = units::parse_quantity(node.as_string(), units::Dim::Seconds);
    } catch (const std::invalid_argument& e) {
      node.fail(e.what());
    }
  }
  if (!(zero_allowed ? v >= 0 : v > 0) || v > max_s)
    node.fail(fmt::format("expected a duration in {}0, {:g} s], e.g. \"10us\"", zero_allowed ? "[" : "(", max_s));
  return v;
}

// The algorithm of a system's GPU collectives: "hierarchical" (the default: rings inside the
// servers and across them; a ring when servers hold one GPU), "ring", "tree" (a pipelined binary
// tree for all-reduce, rings otherwise), "in-network" (reduced in the switch, SHARP; rings inside a
// server), "pat" (NCCL's PAT for reduce-scatter and all-gather, log2 N steps; all-reduce stays a
// ring) or "auto" (per collective, the one NCCL's tuning predicts fastest from its size, the rank
// count and the routes: sim/engine/collective_tuning.hpp).  docs/collectives.md says what each models.
// Collectives executed by GPU kernels (NCCL): the algorithm, and how a collective kernel gets SMs
// beside the compute kernels (sim/engine/gpu_device.hpp): "non-preemptive" (what GPUs do: it waits
// for a kernel boundary), "mps" (SMs statically partitioned) or "preemptive" (hypothetical).
// Whether NCCL moves network data straight between GPU memory and the NIC (GPUDirect RDMA) or
// through a bounce buffer in host memory.  "auto" is NCCL's rule (2.20's ncclTopoCheckGdr): direct
// only where the GPU reaches its NIC through PCIe switches, without crossing the CPU
// (Topology::reaches_over_pcie_switches); through the host, NCCL's kernels run at the host
// profile's nccl_host_staged_bandwidth.
enum class GpuDirectRdma { Auto, On, Off };

struct CollectiveSettings {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Hierarchical;
  SmSharing sm_sharing = SmSharing::NonPreemptive;
  GpuDirectRdma gpu_direct_rdma = GpuDirectRdma::Auto;

  static std::vector<std::string> keys() { return {"collective_algorithm", "sm_sharing", "gpu_direct_rdma"}; }
  static CollectiveSettings parse(const SystemEntry& entry) {
    static const Choices<CollectiveAlgorithm> names = {{"hierarchical", CollectiveAlgorithm::Hierarchical},
                                                       {"ring", CollectiveAlgorithm::Ring},
                                                       {"pat", CollectiveAlgorithm::Pat},
                                                       {"auto", CollectiveAlgorithm::Auto},
                                                       {"tree", CollectiveAlgorithm::Tree},
                                                       {"in-network", CollectiveAlgorithm::InNetwork}};
    static const Choices<SmSharing> sharing = {{"non-preemptive", SmSharing::NonPreemptive},
                                               {"mps", SmSharing::Mps},
                                               {"preemptive", SmSharing::Preemptive}};
    CollectiveSettings s;
    if (entry.has("collective_algorithm"))
      s.algorithm = entry.at("collective_algorithm").as_choice(names, "collective algorithm");
    if (entry.has("sm_sharing")) s.sm_sharing = entry.at("sm_sharing").as_choice(sharing, "SM sharing");
    static const Choices<GpuDirectRdma> rdma = {
        {"auto", GpuDirectRdma::Auto}, {"on", GpuDirectRdma::On}, {"off", GpuDirectRdma::Off}};
    if (entry.has("gpu_direct_rdma"))
      s.gpu_direct_rdma = entry.at("gpu_direct_rdma").as_choice(rdma, "GPUDirect RDMA setting");
    return s;
  }
};

// How many layers' parameters are fetched ahead of the compute stream.  1 = "prefetch layer l+1
// while layer l computes" (DeepSpeed's prefetch, ZeRO-3 paper section 7; LuWu's per-layer multicast).
struct PrefetchSettings {
  int layers = 1;

  static std::vector<std::string> keys() { return {"prefetch_layers"}; }
  static PrefetchSettings parse(const SystemEntry& entry) {
    return {static_cast<int>(entry.settings().get_int("prefetch_layers", 1, 0, 1000))};
  }
};

}  // namespace luwu::sim
