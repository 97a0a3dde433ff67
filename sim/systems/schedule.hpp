#pragma once
// A system's schedule: what each rank's actor does in one iteration, and, for systems with parts
// in the network (an in-network optimizer node, a switch that aggregates), the actors those run.
// Each system's schedule is in its home under sim/systems/ and reads like the paper's description
// of its iteration.
#include <memory>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "models/optimizer_cost.hpp"
#include "sim/engine/cluster_roles.hpp"
#include "sim/engine/data_parallel_collectives.hpp"
#include "sim/engine/gpu_device.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/engine/model_parallel_comm.hpp"
#include "sim/engine/op_timing.hpp"
#include "sim/engine/timeline.hpp"
#include "sim/engine/traffic_meter.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

inline std::string op_label(const workloads::Trace& trace, const workloads::TraceOp& op) {
  return workloads::to_string(op.kind) + " " + trace.layers.at(static_cast<std::size_t>(op.layer)).name +
         (trace.training.grad_accum > 1 ? " mb" + std::to_string(op.micro_step) : "");
}

// Everything the schedules of one simulation share.
struct ClusterEnv {
  const workloads::Trace& trace;
  const Hardware& hw;
  const ClusterRoles& roles;
  DataParallelCollectives& collectives;
  TrafficMeter& traffic;
  Timeline& timeline;
  std::vector<GpuDevice*> gpus;  // by rank

  // The ranks simulated, one actor each.
  int world() const { return roles.world(); }
  // The data-parallel group they stand for: world(), or more when it is folded
  // (DataParallelCollectives::represent).  What a system partitions over and sizes by.
  int data_parallel_size() const { return collectives.represented_size(); }
  // The kernels of an op, timed on this cluster's GPU; ops sharing a kernel list share the result.
  const std::vector<KernelRun>& kernel_runs(const workloads::TraceOp& op);
  std::vector<std::vector<KernelRun>> kernel_run_cache = {};  // by kernel list, filled on first use
};

// One rank's view.
struct RankEnv {
  ClusterEnv& cluster;
  GpuDevice& gpu;
  const RankHosts& hosts;
  // With tensor or pipeline parallelism: their communication, and this GPU's rank in the whole
  // cluster (rank() is its rank in its data-parallel group, which is what the system sees).
  ModelParallelComm* model_parallel = nullptr;
  int cluster_rank = -1;

  int rank() const { return gpu.rank(); }
  int world() const { return cluster.world(); }
  int data_parallel_size() const { return cluster.data_parallel_size(); }
  // The expert-parallel degree: a mixture's experts are spread over this many consecutive ranks of
  // the data-parallel group (workloads/parallel_layout.hpp); 1 without expert parallelism.
  int expert_parallel() const { return model_parallel ? model_parallel->layout().expert : 1; }
  const workloads::Trace& trace() const { return cluster.trace; }
  // Runs the op's kernels on this rank's compute stream; a tensor collective or pipeline transfer
  // of a stage trace blocks the stream while it runs (model_parallel_comm.hpp).
  void compute(const workloads::TraceOp& op) {
    if (!workloads::is_compute(op.kind)) return model_parallel_op(op);
    gpu.run_kernels(op_label(trace(), op), cluster.kernel_runs(op));
  }
  // Runs kernels [first, last) of the op (a schedule that waits for something between kernels);
  // an op without kernels (communication) runs whole on its first call.
  void compute(const workloads::TraceOp& op, std::size_t first, std::size_t last) {
    if (!workloads::is_compute(op.kind)) {
      if (first == 0) model_parallel_op(op);
      return;
    }
    const auto& runs = cluster.kernel_runs(op);
    if (first < last) gpu.run_kernels(op_label(trace(), op), std::span(runs).subspan(first, last - first));
  }
  // Adam over `params` parameters whose state is in this GPU's HBM (sim/systems/model_state.hpp).
  double gpu_optimizer_time_s(double params) const;

 private:
  void model_parallel_op(const workloads::TraceOp& op);
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  // Runs in the rank's actor, on its GPU's host.
  virtual void run_rank(RankEnv& env) = 0;
  // After the iteration (iteration_time_s, the slowest rank's): what the system reports of itself
  // in the result's "details" (null: nothing).
  virtual luwu::Json details(double /*iteration_time_s*/) const { return nullptr; }
};


}  // namespace luwu::sim
