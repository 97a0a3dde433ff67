#pragma once
// Simulating one system on one cluster: the trace is replayed by one actor per rank under the
// system's schedule, on the SimGrid platform lowered from the topology.  Each call runs in its own
// process (SimGrid allows one engine per process).
#include <optional>
#include <string>

#include "sim/engine/collectives.hpp"
#include "sim/experiment/isolated_run.hpp"
#include "topologies/lowering.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/experiment/result.hpp"
#include "sim/systems/system.hpp"
#include "topologies/topology.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// Every rank is a few SimGrid actors, each with its own stack and guard page (two memory mappings);
// past this many GPUs one process would exceed Linux's default limit of 65,530 mappings
// (vm.max_map_count), which SimGrid reports as "Failed to protect stack".
constexpr int kMaxSimulatedGpus = 8192;

struct SimulationOptions {
  CollectiveMode mode = CollectiveMode::Detailed;
  bool record_timeline = false;
  // With a timeline: at most this many points per link counter track (0: no counter tracks).
  std::size_t timeline_counter_points = kDefaultTimelineCounterPoints;
  // Off only for benchmarks of the simulator itself, which time configurations that would not fit.
  bool check_memory = true;
  // How switches pick among equal-cost routes: ECMP, a fixed hash of the flow's endpoints (what
  // fabric switches do), or always the lowest-numbered route (single-path).  One route only in a
  // star or a single server: the same there.
  topologies::RouteChoice routing = topologies::RouteChoice::EcmpHash;
  // Under ECMP: each flow between NICs issued as this many sub-flows, each hashed onto its own
  // route (application-level flow splitting; 1: none).  Spraying splits over every route itself.
  int flow_splitting = 1;
  // Folding: simulate only the first `fold_data_parallel` ranks of every data-parallel group (0:
  // all), standing for the whole group, in systems that fold (System::folds_data_parallel); the
  // others simulate every rank.  The simulated ranks must fill two or more servers of the group
  // (DataParallelCollectives::represent); detailed or coarse collectives (collectives.hpp).  Exact where a rank's traffic meets only its own and its ring neighbours'
  // links, and its server's resources are its server's ranks' alone (docs/performance.md).
  int fold_data_parallel = 0;
  // Folded on a network whose links the left-out ranks share: give the folded rings of a system
  // that sends only ring collectives between servers (System::fold_loads_rings) the load of every
  // represented ring, every stage's and tensor slice's at once (fold_share.hpp); set by
  // run_scenario where the network needs it.
  bool fold_shares_links = false;
};

// A configuration that cannot run (it does not fit in GPU memory, the cluster lacks a part the
// system needs) is a result with feasible == false and the reason (System::fit).
SystemResult simulate_system(const workloads::Trace& trace, const topologies::Topology& topology,
                             const Hardware& hardware, const System& system,
                             const SimulationOptions& options);

// Tensor x pipeline x data parallelism: each pipeline stage's trace (workloads/stage_trace.hpp),
// run by the GPUs of that stage; the training system runs in every data-parallel group (the GPUs of
// one stage and one tensor-parallel index), the tensor collectives and pipeline transfers between
// them (sim/engine/model_parallel_comm.hpp, which also gives the rank order).
struct ParallelWorkload {
  workloads::ParallelLayout layout;               // layout.gpus() == the cluster's GPUs
  std::vector<const workloads::Trace*> stages;    // by stage, layout.pipeline of them
};
SystemResult simulate_parallel_system(const ParallelWorkload& workload, const topologies::Topology& topology,
                                      const Hardware& hardware, const System& system,
                                      const SimulationOptions& options);

// A system's simulation under way in a process of its own (start_parallel_system), or decided
// without one (it does not fit, or has more GPUs than one process simulates).  Being processes
// apart, several may run side by side and each still computes what it would alone.
class SystemSimulation {
 public:
  explicit SystemSimulation(SystemResult decided) : known_(std::move(decided)) {}
  SystemSimulation(SystemResult from_fit, IsolatedChild child, std::string what)
      : known_(std::move(from_fit)), child_(std::move(child)), what_(std::move(what)) {}
  // The result: waits for the simulation process, if any.  Once.  Throws as simulate_parallel_system.
  SystemResult finish();

 private:
  SystemResult known_;  // the whole result, or the parts it takes from the fit
  std::optional<IsolatedChild> child_;
  std::string what_;  // "simulating <label>", for a failure's message
};
// Starts what simulate_parallel_system does and returns at once; workload, topology, hardware and
// system are read only until it returns (the process is forked by then).
SystemSimulation start_parallel_system(const ParallelWorkload& workload, const topologies::Topology& topology,
                                       const Hardware& hardware, const System& system,
                                       const SimulationOptions& options);

// Each stage's hardware: `hardware` with Hardware::optimizer_node_share set for the stage's
// groups.  With `optimizer_nodes` nodes (the topology's), stage p's groups use node p mod their
// number, which holds the model state of every group it serves (each stage's `tensor` groups).
std::vector<Hardware> stage_hardware(const ParallelWorkload& workload, const Hardware& hardware,
                                     std::size_t optimizer_nodes);

}  // namespace luwu::sim
