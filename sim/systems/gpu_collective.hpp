#pragma once
// A collective executed by GPU kernels (NCCL) on a communication stream while the compute stream
// goes on: it launches once it has its SMs (GpuDevice::await_collective_launch: not while a
// compute kernel fills the GPU), and for as long as it runs it holds the collective kernel's share
// of the GPU (GpuDevice::LoadScope), which slows the kernels computing beside it.
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/systems/data_mover.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/systems/system_entry.hpp"
#include "sim/engine/stream.hpp"

namespace luwu::sim {

enum class CollectiveOp {
  AllReduce,
  AllGather,
  ReduceScatter,
  ReduceToOwners,  // one NCCL Reduce per shard's owner (DataParallelCollectives::reduce_to_owners)
  AllGatherInServer,
  ReduceScatterInServer,
  AllReduceAcrossServers
};

// Whether a sharded system's all-gathers and reduce-scatters share one collective stream, running
// in the order they are issued ("one", the default: the LuWu paper observes ZeRO issuing AG1, GEMM1,
// AG2, RS1, GEMM2, RS2, ... on one stream, so an AG and an RS never run at once), or run on two
// streams ("separate").
struct CollectiveStreamSettings {
  bool one_stream = true;

  static std::vector<std::string> keys() { return {"collective_streams"}; }
  static CollectiveStreamSettings parse(const SystemEntry& entry) {
    CollectiveStreamSettings s;
    if (entry.has("collective_streams"))
      s.one_stream = entry.at("collective_streams").as_choice(Choices<bool>{{"one", true}, {"separate", false}},
                                                              "collective streams");
    return s;
  }
};

// `tag` names the communicator the collectives of one stream share (see DataParallelCollectives).
inline CompletionPtr enqueue_gpu_collective(Stream& stream, RankEnv& env, CollectiveOp op, std::string tag,
                                            double buffer_bytes, std::string label,
                                            std::vector<CompletionPtr> deps = {}) {
  return stream.enqueue(
      std::move(label),
      [&env, op, tag = std::move(tag), buffer_bytes, issued = env.gpu.kernels_launched()] {
        DataMoverScope kernel(env.gpu, DataMover::GpuKernel, issued);  // its steps are paced by the group
        auto& collectives = env.cluster.collectives;
        switch (op) {
          case CollectiveOp::AllReduce: collectives.all_reduce(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::AllGather: collectives.all_gather(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::ReduceScatter: collectives.reduce_scatter(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::ReduceToOwners: collectives.reduce_to_owners(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::AllGatherInServer: collectives.all_gather_in_server(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::ReduceScatterInServer: collectives.reduce_scatter_in_server(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::AllReduceAcrossServers: collectives.all_reduce_across_servers(tag, env.rank(), buffer_bytes); break;
        }
      },
      std::move(deps));
}

// An elementwise kernel of `hbm_bytes` on a side stream (quantization around a collective, the
// gradient passes around a reduce-scatter), after `deps`: HBM-bound, it holds the collective
// kernel's share of the GPU while it runs, as a collective does.
inline CompletionPtr enqueue_stream_kernel(Stream& stream, RankEnv& env, double hbm_bytes, std::string label,
                                           std::vector<CompletionPtr> deps = {}) {
  return stream.enqueue(
      std::move(label),
      [&env, seconds = hbm_bytes / env.gpu.spec().achieved_hbm_Bps()] {
        GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
        simgrid::s4u::this_actor::sleep_for(seconds);
      },
      std::move(deps));
}

// An all-reduce over the ranks holding the same experts (expert parallelism over `expert_parallel`
// consecutive ranks), as enqueue_gpu_collective runs its collectives.
inline CompletionPtr enqueue_expert_all_reduce(Stream& stream, RankEnv& env, int expert_parallel, double buffer_bytes,
                                               std::string label) {
  return stream.enqueue(std::move(label), [&env, expert_parallel, buffer_bytes, issued = env.gpu.kernels_launched()] {
    DataMoverScope kernel(env.gpu, DataMover::GpuKernel, issued);
    env.cluster.collectives.all_reduce_strided("experts", env.rank(), expert_parallel, buffer_bytes);
  });
}

}  // namespace luwu::sim
