// ZeRO++ (arXiv 2306.10209) as ZeRO-3 (sim/systems/zero3) with other wire formats:
//  - qwZ: each forward all-gather moves 1 B per parameter plus a 4 B scale per block instead of
//    2 B, then a dequantization kernel reads the int8 and writes fp16 (3 B per element of HBM);
//  - hpZ (zero_hpz_partition_size = GPUs per server): forward's gathers also fill a secondary fp16 partition over the server's GPUs, from
//    which the backward pass (recompute and backward) gathers inside the server, at 2 B per
//    parameter over NVLink; it costs each GPU P x 2 B / (GPUs per server) more memory;
//  - qgZ: each gradient reduce-scatter moves 0.5 B per element plus the block scales, and its
//    quantization kernels read and write 2 x (2 + 0.5) B per element (quantize, then dequantize
//    and requantize between the intra- and inter-server steps, as its hierarchy does).
// The rest (prefetch, live parameters, streams, the optimizer on the GPU shard) is ZeRO-3's.
#include "sim/systems/zeropp/zeropp.hpp"

#include <algorithm>
#include <string>

#include "sim/systems/model_state.hpp"
#include "sim/systems/zero3/schedule.hpp"

namespace luwu::sim {
namespace {

class Zeropp : public System {
 public:
  Zeropp(const SystemEntry& entry, ZeroppSettings settings) : System(entry), settings_(settings) {}

  // ZeRO-3's shards, plus hpZ's secondary partition.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = zero3_shards_footprint(trace, workers, gpu_memory, settings_.zero3.fetch);
    const auto bytes = model_state_bytes(trace.training.dtype);
    if (const int h = std::min(settings_.hpz_partition_size, workers); h > 1)
      f.gpu_params_bytes += bytes.param * shard_params(trace.total_params(), h);
    judge_footprint(f, name(), gpu_memory);
    return f;
  }
  std::string capacity_problem(const workloads::Trace&, const Hardware& hw) const override {
    const int h = settings_.hpz_partition_size;
    if (h > 1 && h != hw.gpus_per_server)
      return "does not run: zero_hpz_partition_size " + std::to_string(h) + " must be the cluster's GPUs per server (" +
             std::to_string(hw.gpus_per_server) + "), where luwusim keeps the secondary partition, or 1 (off)";
    return "";
  }
  CollectiveSettings collectives() const override { return settings_.zero3.collectives; }
  // ZeRO-3's schedule (which folds) with other wire formats; hpZ's secondary partition is the
  // server's, and a fold fills whole servers.
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  std::vector<CollectiveCall> collective_calls(const workloads::Trace& trace) const override {
    return zero3_collective_calls(settings_.zero3, wire(), trace);
  }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return make_zero3_schedule(settings_.zero3, wire(), env.trace);
  }

 private:
  Zero3Wire wire() const {
    const double scale = 4 / settings_.quantization_block_elements;  // an fp32 scale per block
    Zero3Wire wire;
    if (settings_.quantized_weights) {
      wire.weight_bytes_per_element = 1 + scale;
      wire.weight_codec_hbm_bytes_per_element = 1 + 2;
    }
    if (settings_.quantized_gradients) {
      wire.gradient_bytes_per_element = 0.5 + scale;
      wire.gradient_codec_hbm_bytes_per_element = 2 * (2 + 0.5);
    }
    wire.backward_gathers_in_server = settings_.hpz_partition_size > 1;  // = GPUs per server (capacity_problem)
    return wire;
  }

  ZeroppSettings settings_;
};

}  // namespace

SystemPtr parse_zeropp(const SystemEntry& entry) {
  entry.only_settings(setting_keys({Zero3Settings::keys(),
                                    {"zero_quantized_weights", "zero_hpz_partition_size", "zero_quantized_gradients",
                                     "quantization_block_elements"}}));
  ZeroppSettings s;
  s.zero3 = Zero3Settings::parse(entry);
  s.quantized_weights = entry.settings().get_bool("zero_quantized_weights", s.quantized_weights);
  s.quantized_gradients = entry.settings().get_bool("zero_quantized_gradients", s.quantized_gradients);
  s.hpz_partition_size = static_cast<int>(entry.settings().get_int("zero_hpz_partition_size", 1, 1, 1 << 20));
  s.quantization_block_elements =
      static_cast<double>(entry.settings().get_int("quantization_block_elements", 2048, 1, 1 << 30));
  return std::make_shared<Zeropp>(entry, s);
}

}  // namespace luwu::sim
