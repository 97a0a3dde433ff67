#pragma once
// Who moves a worker's bytes between GPU memory and the network.
//  - The NIC, by DMA (SwitchML's and LuWu's design): no kernel runs, the DMA only takes its small
//    share of the GPU's memory system (GpuDevice::LoadKind::NicDma).
//  - A GPU kernel (NCCL's collectives; the LuWu paper's ablation "push/pull issued by a GPU
//    kernel"): it launches only once it has its SMs (GpuDevice::await_collective_launch), holds the
//    collective kernel's share of the GPU while it runs, and its bytes are paced by the GPU's
//    collective engine, so a GEMM beside it cuts its bandwidth (sim/engine/gpu_device.hpp).
#include <cstdint>
#include <optional>

#include "sim/engine/gpu_device.hpp"

namespace luwu::sim {

enum class DataMover { NicDma, GpuKernel };

// Alive while a mover moves one piece of work's bytes (a collective, a gradient push, a layer's pull).
class DataMoverScope {
 public:
  // `issued_after`: GpuDevice::kernels_launched() when the work was issued (see await_collective_launch).
  DataMoverScope(GpuDevice& gpu, DataMover mover, std::uint64_t issued_after) : gpu_(gpu), mover_(mover) {
    if (mover == DataMover::GpuKernel) gpu.await_collective_launch(issued_after);
    load_.emplace(gpu, mover == DataMover::GpuKernel ? GpuDevice::LoadKind::CollectiveKernel
                                                     : GpuDevice::LoadKind::NicDma);
  }
  // The pacing host the moved bytes go through (nullptr: nothing paces them).
  simgrid::s4u::Host* pace() const { return mover_ == DataMover::GpuKernel ? gpu_.collective_engine() : nullptr; }

 private:
  GpuDevice& gpu_;
  DataMover mover_;
  std::optional<GpuDevice::LoadScope> load_;
};

}  // namespace luwu::sim
