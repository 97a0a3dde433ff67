#pragma once
// One GPU of the simulation, as its compute stream sees it: kernels execute on the GPU's SimGrid
// host, so anything else executing there at the same time (a collective kernel, a NIC's DMA into
// HBM) slows them, by the interference model of models/gpu.hpp.  Every moment of the compute
// stream is accounted: computing, or waiting and for what.
#include <cstdint>
#include <string>

#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>

#include "models/gpu.hpp"
#include "sim/engine/completion.hpp"
#include "sim/engine/timeline.hpp"

namespace luwu::sim {

enum class WaitCause { Communication, Optimizer, Io };

// Where one rank's iteration time went (the compute stream's view).
struct RankTimes {
  double compute_s = 0;         // kernels running (stretched by interference)
  double optimizer_s = 0;       // the optimizer step on the GPU, or waiting for it elsewhere
  double communication_wait_s = 0;
  double io_wait_s = 0;
  double finish_s = 0;
  bool finished = false;        // the rank's actor reached the end of its iteration
  std::uint64_t kernels = 0;    // kernels executed, for the simulator's own statistics
};

class GpuDevice {
 public:
  GpuDevice(int rank, simgrid::s4u::Host* host, const models::GpuSpec& spec, Timeline* timeline);

  int rank() const { return rank_; }
  simgrid::s4u::Host* host() const { return host_; }
  const models::GpuSpec& spec() const { return spec_; }
  const std::string& name() const { return name_; }
  RankTimes& times() { return times_; }

  // Runs a kernel whose undisturbed duration is `seconds` (called from the rank's actor).
  void compute(const std::string& label, double seconds);
  // The optimizer step as a kernel on this GPU.
  void optimizer_step(const std::string& label, double seconds);
  // Blocks the compute stream until `done`; the wait is charged to `cause`.
  void wait(const CompletionPtr& done, WaitCause cause, const std::string& label);

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
  void execute_for(double seconds);
  struct Load {
    int depth = 0;
    simgrid::s4u::ExecPtr exec;
  };
  Load& load(LoadKind kind) { return kind == LoadKind::CollectiveKernel ? collective_ : dma_; }

  int rank_;
  simgrid::s4u::Host* host_;
  models::GpuSpec spec_;
  Timeline* timeline_;
  std::string name_;
  RankTimes times_;
  Load collective_, dma_;
};

}  // namespace luwu::sim
