#pragma once
// The result of simulating one system on one scenario: the iteration time and why.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_input.hpp"

namespace luwu::sim {

// Where the iteration time went, averaged over ranks; the parts add up to the iteration time.
struct Breakdown {
  double compute_s = 0;                 // forward/recompute/backward kernels (stretched by interference)
  double exposed_communication_s = 0;   // compute stream waiting for collectives / parameters
  double exposed_optimizer_s = 0;       // optimizer step on the GPU, or waiting for it elsewhere
  double io_stall_s = 0;                // waiting for PCIe/NVMe transfers (offload systems)
  double host_launch_s = 0;             // waiting for the host to launch the next kernel (eager launches, hooks)
  double idle_s = 0;                    // none of the above (e.g. waiting for slower ranks)
};

// What the GPU's sharing with collectives and DMA cost (inside compute_s, or beside it).
struct GpuContention {
  double compute_stretch_s = 0;          // compute_s minus the kernels' undisturbed time
  double collective_launch_wait_s = 0;   // collectives waiting for a kernel boundary to launch (not in the sum)
};

// With tensor or pipeline parallelism: the parts of exposed_communication_s that are theirs (per
// rank, averaged).  Pipeline waits are a stage's receives: its neighbour's compute (the bubble) and
// the transfer.
struct ModelParallelTimes {
  double tensor_collectives_s = 0;
  double pipeline_waits_s = 0;
  double expert_all_to_all_s = 0;  // expert parallelism's dispatch and combine (JSON only where not 0)
};

struct LinkUse {
  std::string link;        // SimGrid link name (<edge name>_UP or _DOWN)
  double bytes = 0;
  double bandwidth_Bps = 0;
  double utilization = 0;  // bytes / (bandwidth x iteration time)
};

// One switch of the fabric's top tier (a fat-tree's spines or cores; topologies/switch_tiers.hpp).
struct SpineUse {
  std::string name;
  double bytes = 0;                     // bytes that entered it (transit bytes leave it again)
  double busiest_link_utilization = 0;  // max over its links and directions of bytes / (bandwidth x iteration time)
};

// The spines side by side: how much the busiest carried, and how evenly routing spread the bytes.
struct SpineSummary {
  int count = 0;
  double bytes_max = 0, bytes_mean = 0, bytes_min = 0;
  double utilization_max = 0, utilization_mean = 0, utilization_min = 0;
  // bytes_max / bytes_mean: 1 when every spine carried as much, count when one carried all; null
  // (absent) when no byte crossed a spine.
  std::optional<double> imbalance;
};
SpineSummary summarize_spines(const std::vector<SpineUse>& spines);
// {"count", "bytes_max", ..., "imbalance", "per_switch": {"switch": [...], "bytes": [...],
// "busiest_link_utilization": [...]}}: the summary flat, the switches as equal-length columns.
luwu::Json spines_to_json(const std::vector<SpineUse>& spines);
// The summary's keys, in the order CSVs give them as "spine_<key>" columns.
const std::vector<std::string>& spine_summary_keys();

// A folded run: `simulated` ranks of every data-parallel group of `data_parallel` stood for it
// (SimulationOptions::fold_data_parallel).  Times and per-worker figures are the simulated ranks';
// links and storage count only their traffic.
struct Folding {
  int data_parallel = 0;
  int simulated = 0;
};

struct SystemResult {
  std::string system;
  bool feasible = true;
  std::string reason;  // why not, when not feasible
  int workers = 0;
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  // executed FLOPs (recompute included) per second per GPU
  double mfu = 0;             // model FLOPs (forward + backward, no recompute) / (time x peak)
  Breakdown breakdown;
  GpuContention contention;  // per rank, averaged
  std::optional<ModelParallelTimes> model_parallel;  // only with tensor or pipeline parallelism
  std::optional<Folding> folding;                     // only when folded
  double sent_bytes_per_worker = 0;
  double received_bytes_per_worker = 0;
  std::vector<LinkUse> links;              // sorted by name
  std::vector<SpineUse> spines;            // in vertex order; empty unless the fabric has tiers above its leaves
  std::map<std::string, double> storage_bytes;  // "<disk>:read" / "<disk>:write" -> bytes
  std::vector<double> gpu_peak_memory_bytes;  // by rank
  luwu::Json memory = luwu::Json::object();    // the memory footprint behind feasibility
  std::uint64_t simulated_flows = 0;           // network flows the engine simulated
  std::uint64_t simulated_kernels = 0;         // GPU kernels the engine simulated
  luwu::Json cost;                             // cluster_cost.hpp's cost_to_json; null without a price list
  luwu::Json details;                          // what a system's schedule reports of itself (Schedule::details); null for most
  luwu::Json timeline;                         // Chrome trace events, when asked for
};

luwu::Json result_to_json(const SystemResult& r, bool with_links = true);
SystemResult result_from_json(const luwu::Json& j);

}  // namespace luwu::sim
