#pragma once
// luwusim search: what is the fastest way to train the scenario's model on its cluster?  The
// candidates are the scenario's systems x tensor-parallel x pipeline-parallel degrees (the rest of
// the GPUs data-parallel; docs/parallelism.md) x micro-batch sizes x activation recomputation.
// Each is judged before anything is simulated:
//   - the layout: degrees that do not divide the model's heads or blocks, or the GPUs, are reported
//     as not fitting, with the reason;
//   - memory: System::fit of every stage (a candidate that does not fit is reported with its reason);
//   - a bound: no iteration is faster than its busiest stage's FLOPs at the GPUs' peak, so its
//     throughput is at most tokens per iteration x data-parallel replicas / (the most FLOPs of a
//     GPU of any stage per iteration / peak FLOP/s).
// The candidates that fit are simulated in parallel processes (sweep_runner.hpp), best bound
// first, `jobs` per round; a round starts only with candidates whose bound beats the best
// throughput simulated so far, so the others are pruned without changing the answer.
#include <functional>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "sim/experiment/sweep.hpp"

namespace luwu::sim {

struct SearchSpace {
  std::vector<int> tensor = {1};    // degrees; {1} and {1}: data parallelism only (no "parallelism" set)
  std::vector<int> pipeline = {1};
  std::vector<int> micro_batches = {1, 2, 4, 8, 16, 32, 64};
  std::vector<bool> recompute = {true, false};
  std::vector<std::string> only_systems;  // labels or kinds; empty: every system of the scenario
};

struct SearchCandidate {
  // Refused: luwusim will not simulate it as asked (past its budget, or a fold that is not exact).
  enum class Outcome { DoesNotFit, PrunedByBound, Simulated, Failed, Refused };
  int index = 0;               // the point's index in the search's sweep
  std::string system;          // its label
  int tensor = 1;
  int pipeline = 1;
  int micro_batch = 0;
  bool recompute = false;
  double bound_tokens_per_s = 0;
  Outcome outcome = Outcome::DoesNotFit;
  std::string reason;          // DoesNotFit / Failed / Refused: why
  luwu::Json result;           // Simulated: the system's result, as `luwusim run --json` gives it
  double tokens_per_s() const;  // Simulated: the result's; 0 otherwise
};
std::string to_string(SearchCandidate::Outcome);

struct SearchOptions {
  std::string output;  // JSON Lines of the simulated points (sweep_runner.hpp's format)
  int jobs = 0;        // processes at once; 0: the CPUs
  std::function<void(const std::string&)> say;  // progress, one line each (stderr)
};

struct SearchOutcome {
  std::vector<SearchCandidate> candidates;  // in point order
  std::vector<std::size_t> ranking;         // simulated candidates, fastest first (ties: point order)
  int rounds = 0;
};

// InputError for a bad scenario or space (an empty list, a micro-batch out of range, a system
// filter that matches nothing).
SearchOutcome search_configurations(const SweepDefinition& scenario, const SearchSpace& space,
                                    const SearchOptions& options);

luwu::Json search_to_json(const SearchOutcome& outcome, int top);
// The `top` best with their breakdowns, then how many candidates did not fit, were pruned or failed.
std::string search_report(const SearchOutcome& outcome, int top);

}  // namespace luwu::sim
