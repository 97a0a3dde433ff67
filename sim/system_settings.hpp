#pragma once
// The named parameters of the simulated systems, each with its documented default.  A scenario's
// system entry may set any of them ({"name": "zero3", "prefetch_layers": 2}).
#include <string>
#include <vector>

#include "common/json_input.hpp"
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
  // Collective algorithm: "auto" = hierarchical when servers hold several GPUs, ring otherwise.
  std::string collective_algorithm = "auto";

  // The names a scenario may set, for strict parsing.
  static const std::vector<std::string>& keys() {
    static const std::vector<std::string> k = {"name", "label", "bucket_bytes", "prefetch_layers",
                                               "collective_algorithm"};
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
  if (s.collective_algorithm != "auto" && s.collective_algorithm != "ring" && s.collective_algorithm != "hierarchical")
    node.at("collective_algorithm").fail("expected \"auto\", \"ring\" or \"hierarchical\"");
  return s;
}

}  // namespace luwu::sim
