#include "sim/experiment/all_reduce_bandwidth.hpp"

#include <memory>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>

#include "common/csv.hpp"
#include "sim/engine/countdown.hpp"
#include "sim/engine/stream.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/gpu_collective.hpp"
#include "sim/systems/in_switch_aggregation.hpp"
#include "sim/systems/luwu/luwu.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {
namespace {

// The GEMM beside the all-reduce runs as back-to-back kernels of this length, so that it ends at
// the first kernel boundary after the all-reduce (the measurement itself ends with the all-reduce).
constexpr double kGemmKernelSeconds = 1e-3;

// Keeps the rank's GPU running GEMM kernels until `until` is set (an actor of its own beside the
// rank's, as a second CUDA stream would).
void keep_computing_until(GpuDevice& gpu, CompletionPtr until) {
  simgrid::s4u::Actor::create("gemm beside", gpu.host(), [&gpu, until] {
    static const workloads::Kernel gemm = [] {
      workloads::Kernel k;
      k.name = "gemm beside the all-reduce";
      return k;
    }();
    const KernelRun run{&gemm, kGemmKernelSeconds, 1.0, true};
    while (!until->done()) gpu.run_kernels("gemm", std::span(&run, 1));
  });
}

// A probe is a System only so that simulate_system can run it: it keeps no model state.
class Probe : public System {
 public:
  Probe(const SystemEntry& entry, double buffer_bytes, bool beside_gemm, GpuDirectRdma nccl_path = GpuDirectRdma::Auto)
      : System(entry), buffer_bytes_(buffer_bytes), beside_gemm_(beside_gemm), nccl_path_(nccl_path) {}
  MemoryFootprint memory_footprint(const workloads::Trace&, int, double) const override {
    MemoryFootprint f;
    f.fits = true;
    return f;
  }
  CollectiveSettings collectives() const override {
    CollectiveSettings s;
    s.sm_sharing = SmSharing::Mps;  // the paper measured with SMs partitioned by MPS
    s.gpu_direct_rdma = nccl_path_;
    return s;
  }

 protected:
  double buffer_bytes_;
  bool beside_gemm_;
  GpuDirectRdma nccl_path_;
};

class NcclAllReduce : public Probe {
 public:
  using Probe::Probe;
  std::unique_ptr<Schedule> make_schedule(ClusterEnv&) const override {
    return std::make_unique<Run>(buffer_bytes_, beside_gemm_);
  }

 private:
  struct Run : Schedule {
    Run(double bytes, bool gemm) : bytes(bytes), gemm(gemm) {}
    void run_rank(RankEnv& env) override {
      Stream nccl(env.gpu.name(), "nccl", "communication", env.gpu.host(), &env.cluster.timeline);
      auto done = enqueue_gpu_collective(nccl, env, CollectiveOp::AllReduce, "probe", bytes, "all-reduce");
      if (gemm) keep_computing_until(env.gpu, done);
      env.gpu.wait(done, WaitCause::Communication, "all-reduce");
    }
    double bytes;
    bool gemm;
  };
};

class PushPull : public Probe {
 public:
  PushPull(const SystemEntry& entry, double buffer_bytes, bool beside_gemm, DataMover mover)
      : Probe(entry, buffer_bytes, beside_gemm), mover_(mover) {}
  std::string capacity_problem(const workloads::Trace&, const Hardware& hw) const override {
    return hw.network_switch ? "" : "does not run: push/pull needs a programmable switch";
  }
  std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const override {
    return std::make_unique<Run>(env, buffer_bytes_, beside_gemm_, mover_);
  }

 private:
  // Each worker pushes its copy; the switch multicasts each summed piece back to all.
  struct Run : Schedule {
    Run(ClusterEnv& env, double bytes, bool gemm, DataMover mover)
        : aggregation(env, AggregationSettings{.element_bytes = kLuwuGradientElementBytes}, "push/pull"),
          gemm(gemm),
          mover(mover) {
      aggregation.add_round(bytes);
      for (int r = 0; r < env.world(); ++r) back.push_back(std::make_shared<Countdown>(aggregation.pieces()));
      aggregation.on_summed([this](std::size_t, int, double piece) {
        aggregation.multicast_to_workers(piece, this->mover, [this](int r) { back[r]->arrive(); });
      });
    }
    void run_rank(RankEnv& env) override {
      const auto& all_back = back[env.rank()]->done();
      if (gemm) keep_computing_until(env.gpu, all_back);
      aggregation.send(env, 0, mover, env.gpu.kernels_launched());
      env.gpu.wait(all_back, WaitCause::Communication, "sum back from the switch");
    }
    InSwitchAggregation aggregation;
    bool gemm;
    DataMover mover;
    std::vector<std::shared_ptr<Countdown>> back;  // [rank]: pieces of the sum received
  };
  DataMover mover_;
};

}  // namespace

const std::vector<std::pair<std::string, AllReduceMechanism>>& all_reduce_mechanisms() {
  static const std::vector<std::pair<std::string, AllReduceMechanism>> names = {
      {"nccl", AllReduceMechanism::NcclKernels},
      {"push-pull", AllReduceMechanism::PushPullDma},
      {"push-pull-gpu-kernel", AllReduceMechanism::PushPullKernels}};
  return names;
}

AllReduceBandwidth measure_all_reduce_bandwidth(const topologies::Topology& topology, const Hardware& hardware,
                                                const workloads::TrainingConfig& training,
                                                AllReduceMechanism mechanism, double buffer_bytes,
                                                bool beside_gemm, GpuDirectRdma nccl_path) {
  AllReduceBandwidth point;
  for (const auto& [name, m] : all_reduce_mechanisms())
    if (m == mechanism) point.mechanism = name;
  point.workers = static_cast<int>(topology.gpus().size());
  point.buffer_bytes = buffer_bytes;
  point.beside_gemm = beside_gemm;

  const Json entry_json = {{"name", point.mechanism}};
  const SystemEntry entry(JsonNode(entry_json, "all-reduce bandwidth"));
  SystemPtr probe;
  switch (mechanism) {
    case AllReduceMechanism::NcclKernels:
      probe = std::make_shared<NcclAllReduce>(entry, buffer_bytes, beside_gemm, nccl_path);
      break;
    case AllReduceMechanism::PushPullDma:
      probe = std::make_shared<PushPull>(entry, buffer_bytes, beside_gemm, DataMover::NicDma);
      break;
    case AllReduceMechanism::PushPullKernels:
      probe = std::make_shared<PushPull>(entry, buffer_bytes, beside_gemm, DataMover::GpuKernel);
      break;
  }
  workloads::Trace trace;
  trace.training = training;
  const SystemResult r = simulate_system(trace, topology, hardware, *probe, {});
  if (!r.feasible) {
    point.problem = r.reason;
    return point;
  }
  point.time_s = r.iteration_time_s;
  point.algbw_Bps = buffer_bytes / r.iteration_time_s;
  return point;
}

luwu::Json all_reduce_bandwidth_to_json(const AllReduceBandwidth& p) {
  luwu::Json j = {{"mechanism", p.mechanism},
                  {"workers", p.workers},
                  {"buffer_bytes", p.buffer_bytes},
                  {"beside_gemm", p.beside_gemm}};
  if (p.problem.empty()) {
    j["time_s"] = p.time_s;
    j["algbw_Bps"] = p.algbw_Bps;
  } else {
    j["problem"] = p.problem;
  }
  return j;
}

std::string all_reduce_bandwidth_csv_header() {
  return "mechanism,workers,buffer_bytes,beside_gemm,time_s,algbw_Bps,problem\n";
}

std::string all_reduce_bandwidth_csv_row(const AllReduceBandwidth& p) {
  CsvRow row;
  row.add(p.mechanism);
  row.add(luwu::Json(p.workers));
  row.add(luwu::Json(p.buffer_bytes));
  row.add(luwu::Json(p.beside_gemm));
  if (p.problem.empty()) {
    row.add(luwu::Json(p.time_s));
    row.add(luwu::Json(p.algbw_Bps));
  } else {
    row.add_blanks(2);
  }
  row.add(p.problem);
  return row.line();
}

}  // namespace luwu::sim
