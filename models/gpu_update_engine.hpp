#pragma once
// An optimizer update run on a GPU attached to a host over PCIe (LuWu's optimizer node may update
// on its CPU or on a GPU; the paper leaves it open).  The host keeps the state: for each update
// the state slice and the gradient cross PCIe to the GPU, Adam runs in HBM, and the updated state
// and fp16 parameters come back.  PCIe is full duplex, so the two directions overlap:
//   pcie_s = params * max(bytes_read, bytes_written) / PCIe achieved bandwidth per direction
//   gpu_s  = optimizer_update_time_s(params, cost, HBM, HBM, fp32 peak)
//   total  = max(pcie_s, gpu_s)        (streamed in chunks, transfers and kernels overlap)
// The host's DRAM still streams the same bytes; the caller takes the max with that.
#include <algorithm>

#include "models/gpu.hpp"
#include "models/optimizer_cost.hpp"
#include "models/pcie.hpp"

namespace luwu::models {

struct GpuUpdateTimes {
  double pcie_s = 0;
  double gpu_s = 0;
  double total_s = 0;
};

inline GpuUpdateTimes gpu_update_times(double params, const OptimizerCost& cost, const GpuSpec& gpu,
                                       const PcieSpec& pcie) {
  GpuUpdateTimes t;
  t.pcie_s = params * std::max(cost.bytes_read_per_param, cost.bytes_written_per_param) /
             pcie.achieved_Bps_per_direction();
  t.gpu_s = optimizer_update_time_s(params, cost, gpu.achieved_hbm_Bps(), gpu.achieved_hbm_Bps(), gpu.peak_fp32_flops);
  t.total_s = std::max(t.pcie_s, t.gpu_s);
  return t;
}

}  // namespace luwu::models
