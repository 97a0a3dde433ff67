#pragma once
// Running a sweep: each point in its own forked process (SimGrid keeps one engine per process,
// and a point that crashes takes only itself down), up to `jobs` at once, each finished point
// appended to the results file as one line.  SIGINT and SIGTERM stop the sweep cleanly: running
// points are killed with their process groups, finished lines stay, none is half-written.
#include <functional>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/sweep.hpp"

namespace luwu::sim {

// "i/n": the points whose index mod n == i.  The n shards of a sweep cover it exactly once.
struct Shard {
  int index = 0;
  int count = 1;
  bool contains(int point_index) const { return point_index % count == index; }
};
Shard parse_shard(const std::string& text);  // std::invalid_argument unless 0 <= i < n

struct SweepProgress {
  int total = 0;         // points this run has to simulate (shard minus already done)
  int done = 0;          // of those, finished (results or error)
  int failed = 0;        // of those, finished with an error
  int running = 0;
  double elapsed_s = 0;  // wall time since the run started (progress display only)
};

struct SweepRunOptions {
  std::string output;     // the JSON Lines results file
  int jobs = 0;           // processes at once; 0 = the number of online CPUs
  bool resume = false;    // keep the file's results and skip their points
  bool overwrite = false; // start the file again
  Shard shard;
  std::function<void(const SweepProgress&)> progress;  // after each point, and about once a second
  std::function<void(const std::string&)> warn;        // one line, for stderr
  // Keep the results of other sweeps found in the file on --resume (refused otherwise).
  bool allow_mixed = false;
  // Simulates a scenario of one system, in the point's process; empty: run_scenario.  For tests
  // (a simulation that crashes).
  std::function<ScenarioRun(const Scenario&)> run_system;
};

struct SweepRunSummary {
  int points = 0;        // in the sweep
  int in_shard = 0;
  int already_done = 0;  // skipped by --resume
  int ran = 0;           // finished in this run
  int failed = 0;
  int interrupted_by = 0;  // the signal that stopped the run, 0 if it ran to the end
};

// The "scenario" and "results" of one point, as `luwusim run --json` prints them, except that
// each system runs on its own: a system luwusim cannot simulate yet is {"system", "error"}
// beside the others' results instead of failing the point.  A system whose simulation process
// crashed (ProcessCrashed) is such an entry too, and it fails the point: the JSON then also has
// an "error" naming the crash.  Runs in the calling process; `run_system` as in SweepRunOptions.
luwu::Json simulate_point(const SweepDefinition& sweep, const SweepPoint& point,
                          const std::function<ScenarioRun(const Scenario&)>& run_system = nullptr);

// Validates nothing (see validate_sweep); runs the shard's points not yet in the file.  A point
// whose process or one of whose simulations crashed counts as failed.  On --resume, results of
// points that are not this sweep's are an std::invalid_argument unless allow_mixed.
SweepRunSummary run_sweep(const SweepDefinition& sweep, const std::vector<SweepPoint>& points,
                          const SweepRunOptions& options);

int default_jobs();

}  // namespace luwu::sim
