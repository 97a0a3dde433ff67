#pragma once
// One GPU of the simulation at kernel granularity, as the LuWu paper describes its scheduling:
// - The compute stream runs an op's kernels one after another on the GPU's SimGrid host, so
//   anything else executing there at the same time (a collective kernel, a NIC's DMA into HBM)
//   slows them, by the interference model of models/gpu.hpp.
// - A collective kernel needs a share of the SMs free to launch (collective_sm_share).  The GPU
//   does not preempt: while a compute kernel holds more than the rest, the collective waits for
//   the next kernel boundary, where its blocks, queued first, get their SMs; the next compute
//   kernel then runs beside it on the rest (SmSharing::NonPreemptive).  The paper's what-ifs:
//   SMs statically partitioned by MPS (the collective always finds its SMs; compute kernels always
//   run on the rest), and hypothetical SM preemption (it takes them at once).
// - While a GEMM (or attention) kernel runs, a collective's bandwidth drops by
//   collective_bandwidth_drop (HBM and L2 contention, measured by the paper even under MPS): the
//   collective's ring steps are paced by a per-GPU "collective engine" host whose speed, in
//   bytes/s, is unbounded (the HBM bandwidth) between GEMMs and (1 - drop) x the NIC's goodput
//   during them; SimGrid re-shares running activities when the speed changes.
// - The host thread that launches the kernels (eager PyTorch) spends the host profile's
//   eager_kernel_launch_time (set_kernel_launch_host_time) on each launch and runs ahead of the GPU, which starts a kernel no sooner than the host has
//   launched it; it falls back to the GPU's time only where it blocks itself (a synchronous copy,
//   the CPU optimizer step) and spends its own time in a framework's hooks.  With small kernels
//   or after each block, the GPU waits for it (RankTimes::host_launch_wait_s).  Not modelled: a
//   bound on how far ahead it may run (CUDA's launch queue), the launches of collectives.
// Every moment of the compute stream is accounted: computing, or waiting and for what.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "models/gpu.hpp"
#include "sim/engine/completion.hpp"
#include "sim/engine/op_timing.hpp"
#include "sim/engine/timeline.hpp"

namespace luwu::sim {

enum class WaitCause { Communication, Optimizer, Io };

// How a collective kernel gets SMs beside the compute stream (see above).
enum class SmSharing { NonPreemptive, Mps, Preemptive };

// Where one rank's iteration time went (the compute stream's view).
struct RankTimes {
  double compute_s = 0;         // kernels running (stretched by interference)
  double optimizer_s = 0;       // the optimizer step on the GPU, or waiting for it elsewhere
  double communication_wait_s = 0;
  double io_wait_s = 0;
  double host_launch_wait_s = 0;  // waiting for the host thread to launch the next kernel
  double finish_s = 0;
  bool finished = false;        // the rank's actor reached the end of its iteration
  std::uint64_t kernels = 0;    // kernels executed, for the simulator's own statistics
  double undisturbed_compute_s = 0;  // what compute_s would be with nothing beside the kernels
  // Parts of communication_wait_s: tensor-parallel collectives, expert all-to-alls, pipeline receives.
  double tensor_collective_s = 0;
  double expert_all_to_all_s = 0;  // expert parallelism's dispatch and combine
  double pipeline_wait_s = 0;
  // Not part of the compute stream's time: how long collectives waited for SMs to launch.
  double collective_launch_wait_s = 0;
};

class GpuDevice {
 public:
  // `network_goodput_Bps`: the rate a collective reaches through the GPU's NIC; the collective
  // engine's speed during a GEMM is (1 - spec.collective_bandwidth_drop) times it.
  // `host_staged_Bps` > 0: NCCL's network path goes through a bounce buffer in host memory
  // (GPUDirect RDMA off) and its kernels reach at most this rate, with or without a GEMM beside
  // them (the engine's speed is capped at it, and the GEMM's drop applies below it).
  GpuDevice(int rank, simgrid::s4u::Host* host, const models::GpuSpec& spec, Timeline* timeline,
            SmSharing sharing = SmSharing::NonPreemptive, double network_goodput_Bps = 0,
            double host_staged_Bps = 0);
  // The name its timeline tracks carry ("gpu<rank>" unless renamed: with model parallelism a GPU's
  // rank in its data-parallel group is not its rank in the cluster).
  void rename(std::string name) { name_ = std::move(name); }

  int rank() const { return rank_; }
  simgrid::s4u::Host* host() const { return host_; }
  const models::GpuSpec& spec() const { return spec_; }
  const std::string& name() const { return name_; }
  RankTimes& times() { return times_; }
  // The host that paces this GPU's collective steps, or nullptr when nothing slows them.
  simgrid::s4u::Host* collective_engine() const { return engine_; }
  // The same pace for a second stream in the other direction: a kernel receiving (a pull) while
  // another sends (a push).  A collective's ring step sends and receives as one, on the engine above.
  simgrid::s4u::Host* receive_engine() const { return receive_engine_; }

  // Runs an op's kernels (or a run of them) in order (called from the rank's actor).
  void run_kernels(const std::string& label, std::span<const KernelRun> kernels);
  // The optimizer step as a kernel on this GPU.
  void optimizer_step(const std::string& label, double seconds);
  // Blocks the compute stream until `done`; the wait is charged to `cause`.  The host thread
  // does not wait (a stream waiting for an event): it goes on launching.
  void wait(const CompletionPtr& done, WaitCause cause, const std::string& label);
  // The host thread itself waits until `done` (a synchronous copy, a step it runs on the CPU), and
  // the compute stream with it: nothing more is launched before.
  void host_wait(const CompletionPtr& done, WaitCause cause, const std::string& label);
  // The host thread's own time per kernel launch (0, the default: launches take no time).
  void set_kernel_launch_host_time(double seconds) { launch_host_s_ = seconds; }
  // The host thread spends `seconds` (a framework's hook) before it launches anything more.
  void host_work(double seconds, std::string_view label);
  // Charges the compute stream's time since `since_s` to `cause` (the caller blocked on it itself).
  void account_wait(WaitCause cause, const std::string& label, double since_s);
  // Kernels launched on the compute stream so far: a collective records it when it is issued.
  std::uint64_t kernels_launched() const { return launched_; }
  // Called by a collective's actor before its kernel starts: returns once it has its SMs.
  // `issued_after` is kernels_launched() when the collective was issued: a kernel launched later,
  // at the very instant the collective became ready, queued its blocks after it.
  void await_collective_launch(std::uint64_t issued_after);

  // While a scope is alive, a share of the GPU's throughput goes elsewhere.  Scopes of one kind
  // nest (two collectives at once still take one collective's share).
  enum class LoadKind { CollectiveKernel, NicDma };
  class LoadScope {
   public:
    LoadScope(GpuDevice& gpu, LoadKind kind);
    ~LoadScope();
    LoadScope(const LoadScope&) = delete;
    LoadScope& operator=(const LoadScope&) = delete;

   private:
    GpuDevice& gpu_;
    LoadKind kind_;
  };

 private:
  // `kernel` (nullptr for the optimizer step) names the span "label: kernel" and gives its FLOPs.
  void run_kernel(const std::string& label, const workloads::Kernel* kernel, const char* category, double seconds,
                  double sm_share, bool is_gemm, double* account);
  struct Load {
    int depth = 0;
    simgrid::s4u::ExecPtr exec;
  };
  Load& load(LoadKind kind) { return kind == LoadKind::CollectiveKernel ? collective_ : dma_; }
  double load_share(LoadKind kind) const;
  // The compute stream idles until the host has launched what comes next.
  void await_host(std::string_view label);

  int rank_;
  simgrid::s4u::Host* host_;
  models::GpuSpec spec_;
  Timeline* timeline_;
  std::string name_;
  SmSharing sharing_;
  RankTimes times_;
  Load collective_, dma_;
  simgrid::s4u::Host* engine_ = nullptr;
  simgrid::s4u::Host* receive_engine_ = nullptr;
  // The launch gate: the SM share of the compute kernel running now, and kernel boundaries seen.
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr boundary_;
  double running_sm_share_ = 0;
  double running_since_s_ = 0;
  std::uint64_t launched_ = 0;
  std::uint64_t boundaries_ = 0;
  int boundary_waiters_ = 0;  // collectives waiting for the next boundary
  // The host thread: when it is done with what it has launched or run so far.
  double launch_host_s_ = 0;
  double host_ready_s_ = 0;
};

}  // namespace luwu::sim
