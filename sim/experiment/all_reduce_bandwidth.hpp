#pragma once
// The LuWu paper's microbenchmark: the algorithm bandwidth (buffer bytes / time, NCCL's "algbw")
// of one all-reduce across the workers, alone or beside a GEMM that keeps every GPU computing,
// executed
//  - by NCCL's kernels (the cluster's collective algorithm: sim/engine/data_parallel_collectives),
//  - by LuWu's push/pull: each worker's SmartNIC pushes its copy into the programmable switch by
//    DMA, the switch sums it and multicasts the sum back (sim/systems/in_switch_aggregation.hpp),
//  - or by the same push/pull issued by GPU kernels (the paper's ablation).
// Every GPU's SMs are partitioned by MPS, as in the paper's measurement, so a collective kernel
// always launches and only the GEMM's contention for memory (the GPU profile's
// collective_bandwidth_drop) and the kernels' interference act.
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/systems/system_entry.hpp"
#include "topologies/topology.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

enum class AllReduceMechanism { NcclKernels, PushPullDma, PushPullKernels };
// "nccl", "push-pull", "push-pull-gpu-kernel".
const std::vector<std::pair<std::string, AllReduceMechanism>>& all_reduce_mechanisms();

struct AllReduceBandwidth {
  std::string mechanism;
  int workers = 0;
  double buffer_bytes = 0;
  bool beside_gemm = false;
  double time_s = 0;
  double algbw_Bps = 0;  // buffer_bytes / time_s
  std::string problem;   // "" when it ran, else why not (no programmable switch, ...)
};

// One all-reduce of `buffer_bytes` (in the trace's dtype: push/pull sends the switch's integer
// elements) on the cluster.
// `nccl_path`: NCCL's network path (CollectiveSettings::gpu_direct_rdma); push/pull does not use it.
AllReduceBandwidth measure_all_reduce_bandwidth(const topologies::Topology& topology, const Hardware& hardware,
                                                const workloads::TrainingConfig& training,
                                                AllReduceMechanism mechanism, double buffer_bytes,
                                                bool beside_gemm, GpuDirectRdma nccl_path = GpuDirectRdma::Auto);

luwu::Json all_reduce_bandwidth_to_json(const AllReduceBandwidth& point);
std::string all_reduce_bandwidth_csv_header();
std::string all_reduce_bandwidth_csv_row(const AllReduceBandwidth& point);

}  // namespace luwu::sim
