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
};

// Kernels one simulation may replay (the trace's kernels per rank x ranks): the paper scenario
// replays about 24,000 (8 x 2,980), 1,024 GPUs of GPT-3 1.3B about 770,000; 10 million take
// minutes and gigabytes.  Past it, and past kMaxSimulatedGpus, a scenario is refused before
// anything is simulated (InputError at its path).
inline constexpr long double kMaxSimulatedKernels = 1e7;
void check_simulation_budget(const Scenario& scenario);

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
