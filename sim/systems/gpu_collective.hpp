#pragma once
// A collective executed by GPU kernels (NCCL) on a communication stream while the compute stream
// goes on: for as long as it runs it holds the collective kernel's share of the GPU
// (GpuDevice::LoadScope), which slows the kernels computing beside it.
#include <string>
#include <utility>
#include <vector>

#include "sim/systems/schedule.hpp"
#include "sim/engine/stream.hpp"

namespace luwu::sim {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter };

// `tag` names the communicator the collectives of one stream share (see DataParallelCollectives).
inline CompletionPtr enqueue_gpu_collective(Stream& stream, RankEnv& env, CollectiveOp op, std::string tag,
                                            double buffer_bytes, std::string label,
                                            std::vector<CompletionPtr> deps = {}) {
  return stream.enqueue(
      std::move(label),
      [&env, op, tag = std::move(tag), buffer_bytes] {
        GpuDevice::LoadScope kernel(env.gpu, GpuDevice::LoadKind::CollectiveKernel);
        auto& collectives = env.cluster.collectives;
        switch (op) {
          case CollectiveOp::AllReduce: collectives.all_reduce(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::AllGather: collectives.all_gather(tag, env.rank(), buffer_bytes); break;
          case CollectiveOp::ReduceScatter: collectives.reduce_scatter(tag, env.rank(), buffer_bytes); break;
        }
      },
      std::move(deps));
}

}  // namespace luwu::sim
