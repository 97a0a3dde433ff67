#pragma once
// LuWu's in-network optimizer node as the paper builds it (arXiv 2409.00918): per parameter and
// iteration, what its SSDs, DRAM and CPU must move and compute at a given rate of aggregated
// gradients, and how many CPU threads each step needs.
//
// Steps per parameter (sizes: p = parameter, g = gradient, S = optimizer state, W = what the
// optimizer writes = S + the low-precision parameter copy; bf16 with Adam: p = g = 2, S = 12, W = 14):
//   forward : (1) read p from SSD into DRAM, (2) push it from DRAM to the NIC
//   backward: (1) read p from SSD, (2) push it, (3) pull the aggregated g from the NIC into DRAM,
//             (4) read S from SSD into DRAM, (5) Adam: read g + S, write W (FLOPs: the optimizer's),
//             (6) write W from DRAM to SSD
// DRAM traffic counts every byte that enters or leaves DRAM (SSD -> DRAM, DRAM -> NIC, NIC -> DRAM,
// the update's reads and writes, DRAM -> SSD):
//   forward : SSD read p; DRAM p (1) + p (2)                               (bf16: 2 B; 4 B)
//   backward: SSD read p + S; SSD write W;                                  (bf16: 14 B; 14 B)
//             DRAM p (1) + p (2) + g (3) + S (4) + (g + S + W) (5) + W (6)  (bf16: 60 B, 30 each way)
//             FLOPs: the update's                                           (AdamW: 17)
// At G bytes/s of aggregated gradient the node handles G / g parameters per second; each quantity
// above times that rate is the requirement.
//
// Threads: a step that moves data (1-4, 6) is driven by a thread at `io_thread_Bps` bytes/s of its
// own traffic; the Adam step runs `adam_thread_params_per_s` parameters per second per thread.  A
// step needs ceil(required rate / per-thread rate) threads.
//  - step-centric pipelining (the paper's design): every step has its own threads, sized so; layers
//    rotate through the steps, several in flight, and the node keeps up with
//      min over steps of min(threads_s * per_thread_s, device_s)   parameters/s.
//  - layer-centric pipelining: each layer in flight gets a fixed group of `threads_per_layer`
//    threads that runs all six steps of it in order, so L = floor(total_threads / threads_per_layer)
//    layers are in flight and a layer takes sum over steps of 1 / min(group * per_thread_s, device_s)
//    seconds per parameter; the node keeps up with
//      min(L / that sum, min over steps of device_s)                 parameters/s.
//    With Adam needing most of the threads, L is small and the steps of one layer cannot overlap:
//    the pipeline bubbles.
// device_s is the step's hardware bound in parameters/s (the SSDs, the NIC's line rate), given by
// the caller.
#include <string>
#include <vector>

#include "models/optimizer_cost.hpp"
#include "models/profile.hpp"

namespace luwu::models {

enum class NodeStep { ReadParam, PushParam, PullGradient, ReadState, Update, WriteBack };
constexpr int kNodeSteps = 6;
std::string to_string(NodeStep step);

// Sizes per parameter.
struct NodeSizes {
  double param_bytes = 2;   // the training-precision parameter (bf16)
  double grad_bytes = 2;    // the aggregated gradient as it arrives
  OptimizerCost update;     // the update's bytes and FLOPs (adam_mixed_precision_cost: S = 12, W = 14)
};

// What one step does to one parameter.
struct NodeStepWork {
  NodeStep step;
  double ssd_read_bytes = 0;
  double ssd_write_bytes = 0;
  double dram_read_bytes = 0;   // bytes leaving DRAM
  double dram_write_bytes = 0;  // bytes entering DRAM
  double flops = 0;
  // The bytes a thread drives through this step (0 for the update, which is counted in params).
  double io_bytes() const { return step == NodeStep::Update ? 0 : dram_read_bytes + dram_write_bytes; }
};

std::vector<NodeStepWork> forward_steps(const NodeSizes& sizes);   // steps 1, 2
std::vector<NodeStepWork> backward_steps(const NodeSizes& sizes);  // steps 1-6

// Per-parameter sums over a phase's steps.
NodeStepWork total(const std::vector<NodeStepWork>& steps);

// The requirement table at `gradient_Bps` of aggregated gradients (bytes/s).
struct NodePhaseRequirement {
  double ssd_read_Bps = 0;
  double ssd_write_Bps = 0;
  double dram_Bps = 0;  // read + write
  double flops = 0;     // FLOP/s
};
struct NodeRequirements {
  double params_per_s = 0;  // gradient_Bps / grad_bytes
  NodePhaseRequirement forward, backward;
};
NodeRequirements node_requirements(const NodeSizes& sizes, double gradient_Bps);

// Per-thread rates of the node's CPU (host profile fields adam_thread_update_rate and
// io_thread_bandwidth).
struct NodeThreadRates {
  double adam_params_per_s = 0;  // one thread's Adam updates per second
  double io_Bps = 0;             // bytes per second one thread drives through a data-moving step
  // Parameters per second one thread carries through `work`'s step.
  double params_per_s(const NodeStepWork& work) const;
};
bool has_node_thread_rates(const Profile& host);
// InputError naming the missing field's path if the profile lacks one.
NodeThreadRates node_thread_rates_from_profile(const Profile& host);

// Threads each backward step needs (in step order) to keep up with `gradient_Bps`.
std::vector<int> step_threads(const NodeSizes& sizes, const NodeThreadRates& rates, double gradient_Bps);

// Parameters per second the node sustains in backward.  `threads` per step (step-centric) or the
// total and the group per layer (layer-centric); device_params_per_s per backward step (<= 0: none).
double step_centric_params_per_s(const NodeSizes& sizes, const NodeThreadRates& rates, const std::vector<int>& threads,
                                 const std::vector<double>& device_params_per_s);
struct LayerCentricRate {
  int layers_in_flight = 0;
  double params_per_s = 0;
};
LayerCentricRate layer_centric_params_per_s(const NodeSizes& sizes, const NodeThreadRates& rates, int total_threads,
                                            int threads_per_layer, const std::vector<double>& device_params_per_s);

}  // namespace luwu::models
