#pragma once
// LuWu: model-in-network data parallelism (Sun et al., arXiv 2409.00918).
#include <optional>
#include <string>

#include "models/reliable_transport.hpp"
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/data_mover.hpp"
#include "sim/systems/in_switch_aggregation.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

// Bytes of one gradient element on LuWu's wire: 16-bit integers.  The SmartNIC converts bf16 to
// integers as SwitchML does, and the paper's requirement table counts 100 Gb/s of aggregated
// gradients as 6.25e9 of them per second (12.5e9 B/s / 2 B: 99 GFLOP/s of Adam, 81.4 GiB/s of SSD
// per direction; models/optimizer_node.hpp), where SwitchML's are 32-bit.
inline constexpr double kLuwuGradientElementBytes = 2;

struct LuwuSettings {
  // Layers the optimizer node multicasts ahead of the workers' compute ("prefetch_layers", 1): at
  // most this many, fewer where a worker's GPU holds fewer (luwu_layers_ahead).  The paper's design
  // needs only the layer in use on a GPU; streaming ahead overlaps the next layer's multicast with
  // compute where memory allows.
  PrefetchSettings prefetch;
  // Set with "param_fetch": "sub-module": the node multicasts each sub-module's parameters when a
  // worker's budget of live parameters lets it, as DeepSpeed's stage-3 coordinator gathers them
  // (param_fetch_plan.hpp), instead of whole layers `prefetch_layers` ahead.  The paper describes
  // LuWu's streaming per layer but trains models whose two layers in flight exceed an A100-40GB
  // (Custom-1.0T: 46.5 GB); per layer those stream none ahead, finer streaming keeps a multicast in
  // flight beside compute.  Workers keep no persistent parameters, so param_persistence_threshold is 0.
  std::optional<ParamFetchSettings> sub_module_fetch;
  // Gradients cross the switch in pieces of integer elements (in_switch_aggregation.hpp); the
  // parameters are multicast in as many pieces.  Elements of kLuwuGradientElementBytes unless
  // "aggregation_element_bytes" says otherwise.
  AggregationSettings aggregation;
  CheckpointOffloadSettings checkpoints;
  // Where the optimizer node keeps the model ("node_storage").
  //  - "out-of-core" (default): the paper's node (arXiv 2409.00918, the optimizer node's steps per
  //    parameter): the fp16 parameters and the optimizer state live on the node's SSDs; forward
  //    reads each layer's parameters from SSD to send them, backward reads them again with the
  //    state and writes both back, and DRAM only stages what is on its way.  A node without SSDs
  //    keeps the model in DRAM.
  //  - "dram-first": the parameters, then as much of the state as fits, stay in the node's DRAM
  //    (optimizer_node_dram_share of it); only the rest is on SSD.
  enum class NodeStorage { OutOfCore, DramFirst } node_storage = NodeStorage::OutOfCore;
  // With "dram-first": share of the optimizer node's DRAM available to hold fp16 parameters and
  // optimizer state (the rest: OS, buffers).  Project assumption.
  double optimizer_node_dram_share = 0.9;
  // Layers of optimizer state read from SSD into DRAM ahead of their update.
  int state_prefetch_layers = 2;
  // Where the optimizer node runs the update: on its CPU from DRAM, or on a GPU beside it over PCIe
  // (models/gpu_update_engine.hpp); the paper leaves it open.  CPU by default: the update is
  // memory-bound, and the node's DRAM (307 GB/s achieved) outruns one PCIe Gen4 x16 link
  // (28.6 GB/s per direction) for the same bytes.
  enum class UpdateEngine { Cpu, Gpu } update_engine = UpdateEngine::Cpu;
  std::string update_gpu = "a100-40gb-pcie";     // the GPU profile of the "gpu" engine
  std::string update_gpu_pcie = "pcie-gen4-x16";  // and of its PCIe link
  // How the optimizer node's CPU threads are organised (models/optimizer_node.hpp).  Step-centric,
  // the paper's design: each step (read state, update, write back, ...) has its own threads, sized
  // from the node's per-thread rates to keep up with the line rate, and layers rotate through the
  // steps, several in flight.  Layer-centric, the paper's ablation: each layer in flight gets a
  // fixed group of threads (as many as the update needs) that runs its steps in order, so
  // floor(threads / group) layers are in flight.  Without per-thread rates in the node's host
  // profile, step-centric leaves the update to the node's whole CPU and layer-centric cannot run.
  enum class NodePipelining { StepCentric, LayerCentric } node_pipelining = NodePipelining::StepCentric;
  // Who moves a worker's pushes (gradients out) and pulls (parameters in) between GPU memory and
  // the network (data_mover.hpp): the SmartNIC by DMA, LuWu's design ("smartnic-dma"), or GPU
  // kernels, the paper's ablation that keeps the SM contention of GPU-executed collectives
  // ("gpu-kernel": each push, and each layer's pull, waits for SMs to launch, holds the collective
  // kernel's share of the GPU and is slowed by a GEMM beside it).
  DataMover push_pull = DataMover::NicDma;
  // How the optimizer node learns what its peers received (models/reliable_transport.hpp):
  // heartbeats aggregated by the switch (LuWu's design, "heartbeats") or per-packet ACKs
  // ("per-packet-ack", the paper's comparison), whose frames share the node's line and packet rate.
  models::ReliabilitySettings reliability;
  // Where the optimizer (parameters, optimizer state, updates) lives: on the in-network optimizer
  // node (LuWu's design, "node"), or colocated on the workers (the paper's ablation, "colocated":
  // each worker server keeps 1/K of every layer in its DRAM and NVMe, updates it on its CPU and
  // sends it into the switch for the multicast; the switch sends each its share of every
  // aggregated gradient).  Colocated, the optimizer node and its NIC's limits are not used.
  enum class OptimizerPlacement { Node, Colocated } optimizer_placement = OptimizerPlacement::Node;
  // How long a worker keeps the parameters the node multicasts ("parameter_residency").
  //  - "per-use" (default): the paper's per-layer streaming.  The node multicasts a layer's fp16
  //    parameters before each use (the forward and the backward of every micro-batch), the GPU
  //    frees them after, and every micro-batch's backward pushes its gradient through the switch
  //    (the node accumulates the aggregates and updates after the last).  The GPU holds only the
  //    layers in flight, which is what lets LuWu train models far beyond GPU memory.
  //  - "per-iteration": the node multicasts each layer's parameters once, for its first use (in
  //    micro-step 0), and the GPU keeps them for the rest of the iteration's micro-batches; the
  //    workers accumulate their gradients on the GPU (into the weight-gradient GEMM's output, as
  //    Megatron-LM's gradient_accumulation_fusion does: no extra kernel) and push them (one
  //    aggregation round per layer) only in the last micro-step's backward.  The GPU then holds
  //    the model's (a pipeline stage's) fp16 parameters and gradient accumulator.  The paper's
  //    scale-out (175B at tensor 8 x pipeline 16, 32 micro-batches) does not say whether LuWu
  //    streams per use there; per use, every micro-batch moves the stage's parameters again
  //    through the node's link (docs/parallelism.md), which this setting avoids where a stage's
  //    parameters fit on its GPUs.
  enum class ParameterResidency { PerUse, PerIteration } parameter_residency = ParameterResidency::PerUse;
};

// Whole layers the node streams ahead of the one in use with per-use residency and per-layer
// streaming: prefetch.layers if the GPU holds that many layers' parameters and gradients beside
// the activations, else the most that fit down to 0 (only the layer in use; a model whose one layer
// does not fit does not run).  Other streaming modes: prefetch.layers.
int luwu_layers_ahead(const LuwuSettings& settings, const workloads::Trace& trace, int workers, double gpu_memory);

SystemPtr parse_luwu(const SystemEntry& entry);

}  // namespace luwu::sim
