#pragma once
// Running a scenario: its trace, its hardware, every system it names; and the report of it as a
// table with units, JSON or CSV.
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/timeline.hpp"
#include "sim/experiment/result.hpp"
#include "sim/experiment/scenario.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

struct ScenarioRun {
  luwu::Json summary;  // what was simulated: model, params, tokens, cluster, mode
  std::vector<SystemResult> results;
};

struct RunOptions {
  std::vector<std::string> only_systems;  // labels or kinds; empty = all of the scenario's
  bool record_timeline = false;
  std::size_t timeline_counter_points = kDefaultTimelineCounterPoints;  // SimulationOptions'
  std::function<void(const std::string&)> progress;  // one line per step, for stderr
  bool force = false;  // simulate detailed collectives past max_detailed_flows
  long double max_detailed_flows = 0;  // the budget of check_detailed_budget; 0: kMaxDetailedFlows
  // Systems simulated at once, each in its own process (results do not depend on it; memory adds
  // up).  1 by default: a sweep already runs its points side by side.
  int jobs = 1;
};

// What one simulation is expected to cost, from the work it replays: every simulated rank replays
// its trace's kernels (each a SimGrid execution, with the tensor collectives and pipeline
// transfers between them), and the process holds every stage's trace and every rank's actors.
// The rates are the simulator's own, measured (docs/performance.md, "The simulation budget"):
// a model-parallel run replays a kernel, with its share of the rest, in 7.6 to 9 us of one core
// (the larger taken), and holds about 150 kB per simulated GPU and 70 B per trace op.
struct SimulationCostEstimate {
  long double gpus = 0;       // simulated (after folding)
  long double kernels = 0;    // replayed by all of them
  long double trace_ops = 0;  // held in the traces (one per stage, or the one trace)
  long double seconds = 0;    // kernels x kSecondsPerReplayedKernel
  long double bytes = 0;      // gpus x kBytesPerSimulatedGpu + trace_ops x kBytesPerTraceOp
};
inline constexpr long double kSecondsPerReplayedKernel = 9e-6;
inline constexpr long double kBytesPerSimulatedGpu = 150e3;
inline constexpr long double kBytesPerTraceOp = 100;
SimulationCostEstimate estimate_simulation_cost(const Scenario& scenario);

// The budget a simulation is refused past, before anything is simulated (InputError at the path
// to change): half an hour of one core and 16 GB, estimated as above, and kMaxSimulatedGpus.  The
// paper scenario is estimated at well under a second; Megatron-LM's GPT 1T at tensor 8 x
// pipeline 64 x data 6 (micro-batch 1, batch 3072), folded to 1,024 GPUs, at about 6 minutes
// and 0.2 GB (measured: 6 min 10 s of CPU, 245 MB).
inline constexpr long double kMaxEstimatedSimulationSeconds = 1800;
inline constexpr long double kMaxEstimatedSimulationBytes = 16e9;
void check_simulation_budget(const Scenario& scenario);

// Why folding (simulation.fold_data_parallel) is not exact on this scenario's network, or "":
// it is exact where a simulated rank's flows meet only links that the ranks it stands for do not
// use (one switch, or a full-bisection fat-tree whose flows are sprayed over every route,
// docs/performance.md "Folding").  Elsewhere the ranks left out would load links the simulated
// ones share (spines under ECMP, oversubscribed leaf uplinks, rack trunks, wide-area links); for
// systems that send only ring collectives between servers the fold puts that load back
// (sim/engine/fold_share.hpp), close but not exact; for the others the folded time is optimistic.
std::string fold_inexactness(const Scenario& scenario);
// Whether the network makes a fold put the left-out ranks' ring load back, in the systems that can
// (SimulationOptions::fold_shares_links, System::fold_loads_rings).
bool fold_needs_shared_link_load(const Scenario& scenario);

// Refuses a fold that is not exact (InputError at $.simulation.fold_data_parallel naming why and
// the ways out: unfolded, an exact network, or "allow_inexact_fold": true, whose results then carry
// folding.exact false and the reason).  Before anything is simulated.
void check_fold_exactness(const Scenario& scenario);

// Refuses expert parallelism (layout.expert > 1) where it is not simulated: with a folded
// data-parallel group (an all-to-all needs every rank of its group) or under a system that
// reduces every gradient over the whole data-parallel group (System::supports_expert_parallel).
// InputError at the field to change; `systems` empty: the scenario's.
void check_expert_parallel(const Scenario& scenario, const std::vector<SystemPtr>& systems = {});

// What detailed collectives would cost (Scenario::collective_mode, collectives.hpp): the flows of
// the data-parallel collectives one system's simulation makes, counted as it will run them
// (sim/systems/collective_calls.hpp): the system's own calls per iteration (System::collective_calls:
// ZeRO-3's gathers per its parameter plan, DDP's buckets, none for systems that reduce in the
// switch or on servers, ZeRO-3's per-op pattern for the rest), each under the algorithm its
// collectives run, over its data-parallel group (all GPUs, or `data` of them in `tensor` x
// `pipeline` groups, each with its stage's calls), folded when the system folds.
struct DetailedFlowEstimate {
  long double collectives = 0;     // calls per iteration, over every data-parallel group
  long double detailed_flows = 0;  // their flows in detailed mode
  long double coarse_flows = 0;    // in coarse mode
};
DetailedFlowEstimate estimate_detailed_flows(const Scenario& scenario, const System& system);
// The same over stage traces already made (scenario_stage_traces).
DetailedFlowEstimate estimate_detailed_flows(const Scenario& scenario, const System& system,
                                             const std::vector<workloads::Trace>& stages);
// The most flows a detailed simulation may plan before it is refused, by default (RunOptions::
// max_detailed_flows, `run --max-detailed-flows`), unless forced (RunOptions::force, `run --force`).  The paper scenario's estimate is about 22,000; 20 million take minutes
// (docs/performance.md measures the simulator's flows per second).
inline constexpr long double kMaxDetailedFlows = 2e7;
// When the scenario asks for detailed collectives (simulation.mode or `--mode detailed`; auto picks
// them only up to Scenario::kDetailedMaxGpus) and a system's estimate is past max_flows: InputError
// at $.simulation.mode, naming the system and giving its estimate and coarse mode's.
// `systems`: those to be simulated (all of the scenario's when empty).
void check_detailed_budget(const Scenario& scenario, long double max_flows = kMaxDetailedFlows,
                           const std::vector<SystemPtr>& systems = {});

ScenarioRun run_scenario(const Scenario& scenario, const RunOptions& options);

// {"scenario": summary, "results": [...]}
luwu::Json run_to_json(const ScenarioRun& run);
// One row per system, flat columns with units in their names.
std::string run_to_csv(const ScenarioRun& run);
// The columns both the run and the sweep CSV take from the summary ("model", "micro_batch", ...),
// and those from its "cluster" ("topology", "network").
const std::vector<std::string>& scenario_csv_columns();
const std::vector<std::string>& cluster_csv_columns();
// A table with units, the breakdown, and speedups against the slowest feasible system.
std::string run_to_table(const ScenarioRun& run);
// All systems' timelines in one Chrome trace (components prefixed by the system).
luwu::Json merged_timeline(const ScenarioRun& run);

}  // namespace luwu::sim
