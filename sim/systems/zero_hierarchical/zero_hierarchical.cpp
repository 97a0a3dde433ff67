// ZeRO-3 with hierarchical partitioning (zero_hierarchical.hpp) as ZeRO-3's schedule
// (sim/systems/zero3/schedule.hpp) with its partition inside the server:
//  - every parameter gather (forward, recompute, backward) is an all-gather among the server's G
//    GPUs over NVLink, from a partition of P/G parameters per GPU;
//  - each gradient is reduce-scattered inside the server, then each GPU's 1/G shard of the
//    server's sum is all-reduced with the same shard of every other server (the only traffic that
//    crosses the network: 2 (S-1)/S x 2P/G per GPU for S servers);
//  - the optimizer steps on the GPU over its P/G shard.
// Each GPU holds 16P/G bytes of model state instead of ZeRO-3's 16P/N: the memory bought with
// the network traffic saved.
#include "sim/systems/zero_hierarchical/zero_hierarchical.hpp"

#include <algorithm>
#include <string>

#include "sim/systems/zero3/schedule.hpp"

namespace luwu::sim {
namespace {

class ZeroHierarchical : public System {
 public:
  ZeroHierarchical(const SystemEntry& entry, ZeroHierarchicalSettings settings) : System(entry), settings_(settings) {}

  // ZeRO-3's shards over the partition's G GPUs, whatever the number of workers.
  MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers, double gpu_memory) const override {
    MemoryFootprint f = zero3_shards_footprint(trace, std::min(settings_.partition_size, workers), gpu_memory,
                                               settings_.zero3.fetch);
    judge_footprint(f, name(), gpu_memory, "the model state is partitioned over each server's GPUs");
    return f;
  }
  std::string capacity_problem(const workloads::Trace&, const Hardware& hw) const override {
    const int g = std::min(settings_.partition_size, hw.workers);
    if (g != hw.gpus_per_server)
      return "does not run: partition_size " + std::to_string(settings_.partition_size) +
             " must be the cluster's GPUs per server (" + std::to_string(hw.gpus_per_server) +
             "), the domain luwusim keeps a partition in";
    return "";
  }
  CollectiveSettings collectives() const override { return settings_.zero3.collectives; }
  // ZeRO-3's schedule (which folds): its partition is the server's (a fold fills whole servers)
  // and its one cross-server collective is folded by DataParallelCollectives.
  bool folds_data_parallel() const override { return true; }
  bool sends_only_collectives_across_servers() const override { return true; }
  std::vector<CollectiveCall> collective_calls(const workloads::Trace& trace) const override {
    return zero3_collective_calls(settings_.zero3, wire(), trace);
  }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return make_zero3_schedule(settings_.zero3, wire(), env.trace);
  }

 private:
  static Zero3Wire wire() {
    Zero3Wire wire;
    wire.partition_in_server = true;
    return wire;
  }
  ZeroHierarchicalSettings settings_;
};

}  // namespace

SystemPtr parse_zero_hierarchical(const SystemEntry& entry) {
  entry.only_settings(setting_keys({Zero3Settings::keys(), {"partition_size"}}));
  ZeroHierarchicalSettings s;
  s.zero3 = Zero3Settings::parse(entry);
  s.partition_size = static_cast<int>(entry.settings().get_int("partition_size", s.partition_size, 1, 1 << 20));
  return std::make_shared<ZeroHierarchical>(entry, s);
}

}  // namespace luwu::sim
