#pragma once
// A training system as the simulator sees it: its settings (parsed from its scenario entry, see
// system_entry.hpp), where it keeps model state (its memory footprint), whether the cluster's hosts
// hold what it keeps off the GPUs, and the schedule of one iteration.  Each system lives in its own
// folder under sim/systems/ and is listed once in registry.cpp; docs/adding-a-system.md shows how.
#include <memory>
#include <optional>
#include <string>

#include "sim/engine/data_parallel_collectives.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/systems/collective_calls.hpp"
#include "sim/systems/deepspeed_estimate.hpp"
#include "sim/systems/schedule.hpp"
#include "sim/systems/memory_footprint.hpp"
#include "sim/systems/system_entry.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// Whether a configuration can run: the GPU footprint, then the hosts' capacity.
struct Fit {
  MemoryFootprint footprint;
  std::string problem;  // "" when it runs, else one sentence saying why not
  bool runs() const { return problem.empty(); }
};

class System {
 public:
  virtual ~System() = default;

  // The registry's name ("zero-infinity") and how results name this entry ("zero-infinity-nvme").
  const std::string& name() const { return name_; }
  const std::string& label() const { return label_; }

  // Bytes per GPU, per worker host and on network-side nodes, and whether they fit the GPU.
  // std::invalid_argument for workers < 1 or a non-positive GPU memory.
  virtual MemoryFootprint memory_footprint(const workloads::Trace& trace, int workers,
                                           double gpu_memory_bytes) const = 0;
  // "" when the cluster holds what the system keeps off the GPUs (host DRAM, NVMe, an optimizer
  // node) and has the parts it needs (a programmable switch); else one sentence.
  virtual std::string capacity_problem(const workloads::Trace&, const Hardware&) const { return ""; }
  // The cluster parts it uses beyond workers, GPUs, NICs and switches (what its cost counts:
  // sim/experiment/cluster_cost.hpp).
  virtual bool uses_worker_ssds() const { return false; }
  virtual bool uses_optimizer_node() const { return false; }
  virtual bool uses_parameter_servers() const { return false; }  // dedicated ps<k> machines
  // Whether its data-parallel ranks may be folded (sim/experiment/simulate.cpp): its schedule sizes
  // what it partitions by ClusterEnv::data_parallel_size(), runs its collectives through
  // ClusterEnv::collectives, and nothing it does on one rank depends on another rank's host or
  // disk, so the first ranks of a group, simulated alone, stand for the rest.
  virtual bool folds_data_parallel() const { return false; }
  // Whether all it sends between servers is its data-parallel collectives (no parameter server,
  // switch or optimizer node on the way): a fold can then put back the left-out ranks' load on
  // shared links from their rings alone (sim/engine/fold_share.hpp).
  virtual bool sends_only_collectives_across_servers() const { return false; }
  // Whether it reduces a mixture's expert gradients over the expert-data-parallel group (a layout
  // with expert > 1, workloads/parallel_layout.hpp); a system that does not is refused such a layout.
  virtual bool supports_expert_parallel() const { return false; }
  // The fewest data-parallel ranks a fold must simulate for its result to stand for the whole
  // group on this hardware (0: any); a smaller fold asked for is raised to it, up to the group.
  virtual int min_folded_data_parallel(const Hardware&) const { return 0; }
  // DeepSpeed's own estimate of this configuration's model-state memory, for the systems that are
  // DeepSpeed configurations (deepspeed_estimate.hpp); none for the others.
  virtual std::optional<DeepSpeedEstimate> deepspeed_estimate(const workloads::Trace&, const Hardware&) const {
    return std::nullopt;
  }
  // Its GPU-executed collectives (systems without any keep the defaults, which then do nothing).
  virtual CollectiveSettings collectives() const { return {}; }
  // Whether a fold of it can put the left-out ranks' load back on shared links: all it sends
  // between servers is its data-parallel collectives, run as rings (flat or hierarchical).
  bool fold_loads_rings() const {
    const CollectiveAlgorithm a = collectives().algorithm;
    return folds_data_parallel() && sends_only_collectives_across_servers() &&
           (a == CollectiveAlgorithm::Ring || a == CollectiveAlgorithm::Hierarchical);
  }
  // The data-parallel collectives one rank issues in an iteration of `trace`, for detailed mode's
  // budget (collective_calls.hpp): ZeRO-3's per-op pattern, the most a data-parallel system does,
  // unless the system counts its own; none for systems without GPU collectives.
  virtual std::vector<CollectiveCall> collective_calls(const workloads::Trace& trace) const {
    return per_op_collective_calls(trace);
  }
  // One iteration: what each rank's actor does; systems with network-side parts start their
  // actors here.  std::invalid_argument when the cluster lacks what the system needs.
  virtual std::unique_ptr<Schedule> make_schedule(ClusterEnv& env) const = 0;

  // The footprint on this cluster's GPU, then the capacity check: what `run` and `memory` both use.
  Fit fit(const workloads::Trace& trace, const Hardware& hardware) const {
    Fit f;
    f.footprint = memory_footprint(trace, hardware.workers, hardware.gpu.hbm_bytes);
    f.problem = f.footprint.fits ? capacity_problem(trace, hardware) : f.footprint.reason;
    if (f.problem.empty() && collectives().algorithm == CollectiveAlgorithm::InNetwork && !hardware.network_switch)
      f.problem = "does not run: collective_algorithm \"in-network\" needs a switch that reduces between the "
                  "workers (SHARP-capable or programmable); this cluster has none";
    return f;
  }

 protected:
  explicit System(const SystemEntry& entry) : name_(entry.name()), label_(entry.label()) {}

 private:
  std::string name_, label_;
};

using SystemPtr = std::shared_ptr<const System>;

// "does not fit: <what> needs <need> but has <have>", for capacity problems.
std::string does_not_fit(const std::string& what, double need_bytes, double have_bytes);
// Parameters of the model whose state one server keeps (its GPUs' shares of P).
double params_per_server(const workloads::Trace& trace, const Hardware& hardware);

}  // namespace luwu::sim
