#pragma once
// ZeRO++ (Wang et al., arXiv 2306.10209): ZeRO-3 with three communication reductions, each
// switchable, named as DeepSpeed's zero_optimization config names them.
#include "sim/systems/system.hpp"
#include "sim/systems/zero3/zero3.hpp"

namespace luwu::sim {

struct ZeroppSettings {
  Zero3Settings zero3;
  // qwZ: parameters all-gathered as int8 with a scale per block (the paper's block-based
  // quantization), dequantized on the GPU after the gather.
  bool quantized_weights = true;
  // hpZ: a secondary copy of the parameters, partitioned over the GPUs of each server, so that
  // the backward pass gathers inside the server (NVLink).  The paper sets it to the GPUs per node
  // (8 on its DGX nodes); 1 = off, the default here, since a system's memory is judged before the
  // cluster is known: set it to the cluster's GPUs per server (any other value does not run).
  int hpz_partition_size = 1;
  // qgZ: gradients reduce-scattered as int4 with a scale per block (the paper's hierarchical
  // all-to-all, modelled as a reduce-scatter of the int4 bytes), quantized and dequantized twice.
  bool quantized_gradients = true;
  // Elements per quantization block, each with one fp32 scale.  The paper quantizes per block but
  // its size is a DeepSpeed implementation detail: a project assumption.
  double quantization_block_elements = 2048;
};

SystemPtr parse_zeropp(const SystemEntry& entry);

}  // namespace luwu::sim
