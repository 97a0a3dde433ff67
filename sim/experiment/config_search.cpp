#include "sim/experiment/config_search.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "common/input_error.hpp"
#include "common/units.hpp"
#include "sim/engine/op_timing.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/experiment/sweep_results.hpp"
#include "sim/experiment/sweep_runner.hpp"

namespace luwu::sim {
namespace {

using Outcome = SearchCandidate::Outcome;

// The scenario's system entries the search covers, as JSON (each becomes a one-system point).
std::vector<luwu::Json> system_entries(const SweepDefinition& scenario, const std::vector<std::string>& only) {
  const Scenario base = scenario_from_json(JsonNode(scenario.base, scenario.base_file));
  const auto& entries = scenario.base.at("systems");
  std::vector<luwu::Json> out;
  for (std::size_t i = 0; i < base.systems.size(); ++i) {
    const auto& s = *base.systems[i];
    if (only.empty() || std::find_if(only.begin(), only.end(), [&](const std::string& o) {
                          return o == s.label() || o == s.name();
                        }) != only.end())
      out.push_back(entries.at(i));
  }
  if (out.empty()) throw InputError(scenario.base_file, "$.systems", "no system of the scenario matches the --system filter");
  return out;
}

void check_space(const SearchSpace& space, const std::string& file) {
  if (space.micro_batches.empty()) throw InputError(file, "", "the search needs at least one micro-batch size");
  if (space.tensor.empty() || space.pipeline.empty())
    throw InputError(file, "", "the search needs at least one tensor and one pipeline degree");
  for (int d : space.tensor)
    if (d < 1 || d > workloads::kMaxTensorParallel)
      throw InputError(file, "", fmt::format("tensor degree {} is outside [1, {}]", d, workloads::kMaxTensorParallel));
  for (int d : space.pipeline)
    if (d < 1 || d > workloads::kMaxPipelineParallel)
      throw InputError(file, "", fmt::format("pipeline degree {} is outside [1, {}]", d, workloads::kMaxPipelineParallel));
  if (space.recompute.empty()) throw InputError(file, "", "the search needs recompute on, off or both");
  for (int b : space.micro_batches)
    if (b < 1 || b > workloads::kMaxMicroBatch)
      throw InputError(file, "", fmt::format("micro-batch {} is outside [1, {}]", b, workloads::kMaxMicroBatch));
}

// Judges a point without simulating it: memory, luwusim's budgets, the compute bound.
void judge(SearchCandidate& c, const SweepPoint& point, const std::string& file) {
  try {
    const Scenario scenario = scenario_from_json(JsonNode(point.scenario, file));
    const auto& system = *scenario.systems.front();
    c.system = system.label();
    try {
      check_simulation_budget(scenario);
      check_fold_exactness(scenario);
      check_expert_parallel(scenario);
    } catch (const InputError& e) {
      c.outcome = Outcome::Refused;
      c.reason = e.what();
      return;
    }
    const auto stages = scenario_stage_traces(scenario);
    const double peak = scenario.hardware.gpu.peak_flops(precision_of(stages.front().training.dtype));
    double busiest_flops = 0;
    for (const auto& stage : stages) busiest_flops = std::max(busiest_flops, stage.flops_per_iteration());
    c.bound_tokens_per_s = stages.front().tokens_per_iteration() * scenario.layout.data / (busiest_flops / peak);
    Hardware group_hardware = scenario.hardware;  // a stage's footprint is over its data-parallel group
    group_hardware.workers = scenario.layout.data;
    ParallelWorkload workload{scenario.layout, {}};
    for (const auto& stage : stages) workload.stages.push_back(&stage);
    const auto stage_hw = stage_hardware(workload, group_hardware, scenario.topology.optimizer_nodes().size());
    for (std::size_t p = 0; p < stages.size(); ++p) {
      const Fit fit = system.fit(stages[p], stage_hw[p]);
      if (fit.runs()) continue;
      c.outcome = Outcome::DoesNotFit;
      c.reason = stages.size() > 1 ? fmt::format("pipeline stage {}: {}", p, fit.problem) : fit.problem;
      return;
    }
    c.outcome = Outcome::PrunedByBound;  // until a round simulates it
  } catch (const std::exception& e) {
    c.outcome = Outcome::DoesNotFit;
    c.reason = e.what();
  }
}

}  // namespace

double SearchCandidate::tokens_per_s() const {
  return outcome == Outcome::Simulated ? result.value("tokens_per_s", 0.0) : 0.0;
}

std::string to_string(SearchCandidate::Outcome o) {
  switch (o) {
    case Outcome::DoesNotFit: return "does not fit";
    case Outcome::PrunedByBound: return "pruned by bound";
    case Outcome::Simulated: return "simulated";
    case Outcome::Failed: return "failed";
    case Outcome::Refused: return "refused";
  }
  return "?";
}

SearchOutcome search_configurations(const SweepDefinition& scenario, const SearchSpace& space,
                                    const SearchOptions& options) {
  auto say = [&](const std::string& line) {
    if (options.say) options.say(line);
  };
  check_space(space, scenario.base_file);
  if (options.output.empty()) throw std::invalid_argument("the search needs an output file for its simulated points");

  SweepDefinition sweep = scenario;
  sweep.origin = scenario.base_file + " (search)";
  sweep.axes.clear();
  set_axis(sweep, {"systems", system_entries(scenario, space.only_systems)});
  // Without other degrees than 1 the scenario keeps its own "parallelism" (or none).
  const bool layouts = space.tensor != std::vector<int>{1} || space.pipeline != std::vector<int>{1};
  if (layouts) {
    set_axis(sweep, {"parallelism.tensor", std::vector<luwu::Json>(space.tensor.begin(), space.tensor.end())});
    set_axis(sweep, {"parallelism.pipeline", std::vector<luwu::Json>(space.pipeline.begin(), space.pipeline.end())});
  }
  std::vector<luwu::Json> batches(space.micro_batches.begin(), space.micro_batches.end());
  set_axis(sweep, {"training.micro_batch", batches});
  std::vector<luwu::Json> recompute;
  for (bool r : space.recompute) recompute.emplace_back(r);
  set_axis(sweep, {"training.recompute", recompute});
  const auto points = expand_sweep(sweep);

  SearchOutcome out;
  for (const auto& p : points) {
    SearchCandidate c;
    c.index = p.index;
    for (const auto& [key, value] : p.settings) {
      if (key == "parallelism.tensor") c.tensor = value.get<int>();
      if (key == "parallelism.pipeline") c.pipeline = value.get<int>();
      if (key == "training.micro_batch") c.micro_batch = value.get<int>();
      if (key == "training.recompute") c.recompute = value.get<bool>();
    }
    judge(c, p, scenario.base_file);
    out.candidates.push_back(std::move(c));
  }
  const auto fits = std::count_if(out.candidates.begin(), out.candidates.end(),
                                  [](const auto& c) { return c.outcome != Outcome::DoesNotFit && c.outcome != Outcome::Refused; });
  say(fmt::format("search: {} candidates, {} fit in memory", points.size(), fits));

  // Best bound first; each round simulates up to `jobs` candidates that can still beat the best.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < out.candidates.size(); ++i)
    if (out.candidates[i].outcome == Outcome::PrunedByBound) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return out.candidates[a].bound_tokens_per_s > out.candidates[b].bound_tokens_per_s;
  });
  const int jobs = options.jobs > 0 ? options.jobs : default_jobs();
  double best = 0;
  std::size_t next = 0;
  while (next < order.size() && out.candidates[order[next]].bound_tokens_per_s > best) {
    std::vector<SweepPoint> round;
    std::map<int, std::size_t> candidate_of_point;
    for (; next < order.size() && static_cast<int>(round.size()) < jobs; ++next) {
      if (out.candidates[order[next]].bound_tokens_per_s <= best) break;
      round.push_back(points[static_cast<std::size_t>(out.candidates[order[next]].index)]);
      candidate_of_point[round.back().index] = order[next];
    }
    if (round.empty()) break;
    ++out.rounds;
    say(fmt::format("search: round {}: simulating {} candidates", out.rounds, round.size()));
    SweepRunOptions run;
    run.output = options.output;
    run.jobs = jobs;
    run.overwrite = out.rounds == 1;
    run.resume = out.rounds > 1;
    run.allow_mixed = true;  // the earlier rounds' points, of the same sweep
    const auto summary = run_sweep(sweep, round, run);
    if (summary.interrupted_by != 0) throw std::runtime_error(fmt::format("the search was stopped by signal {}", summary.interrupted_by));
    for (const auto& line : merge_sweep_results({options.output})) {
      auto at = candidate_of_point.find(line.index);
      if (at == candidate_of_point.end()) continue;
      SearchCandidate& c = out.candidates[at->second];
      const auto& results = line.json.value("results", luwu::Json::array());
      if (line.json.contains("error") || results.empty() || results.front().contains("error")) {
        c.outcome = Outcome::Failed;
        c.reason = line.json.contains("error") ? line.json["error"].get<std::string>()
                   : results.empty()           ? "no result"
                                               : results.front()["error"].get<std::string>();
        continue;
      }
      c.result = results.front();
      if (!c.result.value("feasible", false)) {
        c.outcome = Outcome::DoesNotFit;
        c.reason = c.result.value("reason", "");
        continue;
      }
      c.outcome = Outcome::Simulated;
      best = std::max(best, c.tokens_per_s());
    }
  }

  for (std::size_t i = 0; i < out.candidates.size(); ++i)
    if (out.candidates[i].outcome == Outcome::Simulated) out.ranking.push_back(i);
  std::stable_sort(out.ranking.begin(), out.ranking.end(), [&](std::size_t a, std::size_t b) {
    return out.candidates[a].tokens_per_s() > out.candidates[b].tokens_per_s();
  });
  return out;
}

luwu::Json search_to_json(const SearchOutcome& outcome, int top) {
  auto candidate_json = [](const SearchCandidate& c) {
    luwu::Json j = {{"point", c.index},
                    {"system", c.system},
                    {"tensor", c.tensor},
                    {"pipeline", c.pipeline},
                    {"micro_batch", c.micro_batch},
                    {"recompute", c.recompute},
                    {"outcome", to_string(c.outcome)},
                    {"bound_tokens_per_s", c.bound_tokens_per_s}};
    if (!c.reason.empty()) j["reason"] = c.reason;
    if (c.outcome == Outcome::Simulated) j["result"] = c.result;
    return j;
  };
  luwu::Json best = luwu::Json::array(), all = luwu::Json::array();
  for (std::size_t k = 0; k < outcome.ranking.size() && static_cast<int>(k) < top; ++k)
    best.push_back(candidate_json(outcome.candidates[outcome.ranking[k]]));
  for (const auto& c : outcome.candidates) all.push_back(candidate_json(c));
  return {{"best", best}, {"candidates", all}, {"rounds", outcome.rounds}};
}

std::string search_report(const SearchOutcome& outcome, int top) {
  std::string out = fmt::format("{:<4} {:<22} {:>3} {:>3} {:>5} {:>9} | {:>11} {:>11} {:>7} | {:>10} {:>10} {:>10} {:>10}\n",
                                "rank", "system", "tp", "pp", "mb", "recompute", "iteration", "tokens/s", "MFU", "compute", "exp. comm",
                                "exp. optim", "I/O stall");
  for (std::size_t k = 0; k < outcome.ranking.size() && static_cast<int>(k) < top; ++k) {
    const auto& c = outcome.candidates[outcome.ranking[k]];
    const auto& r = c.result;
    const auto& b = r.at("breakdown_s");
    out += fmt::format("{:<4} {:<22} {:>3} {:>3} {:>5} {:>9} | {:>11} {:>11.0f} {:>6.1f}% | {:>10} {:>10} {:>10} {:>10}\n",
                       k + 1, c.system, c.tensor, c.pipeline, c.micro_batch, c.recompute ? "on" : "off", units::seconds(r.at("iteration_time_s").get<double>()),
                       c.tokens_per_s(), 100 * r.at("mfu").get<double>(), units::seconds(b.at("compute").get<double>()),
                       units::seconds(b.at("exposed_communication").get<double>()),
                       units::seconds(b.at("exposed_optimizer").get<double>()), units::seconds(b.at("io_stall").get<double>()));
  }
  if (outcome.ranking.empty()) out += "no candidate runs on this cluster\n";
  std::map<Outcome, int> counts;
  for (const auto& c : outcome.candidates) ++counts[c.outcome];
  out += fmt::format("\n{} candidates: {} simulated in {} rounds, {} pruned (their compute bound is below the best "
                     "simulated throughput), {} do not fit, {} failed",
                     outcome.candidates.size(), counts[Outcome::Simulated], outcome.rounds, counts[Outcome::PrunedByBound],
                     counts[Outcome::DoesNotFit], counts[Outcome::Failed]);
  if (counts[Outcome::Refused] > 0)
    out += fmt::format(", {} refused (past luwusim's budget or folded inexactly; --json gives each reason)",
                       counts[Outcome::Refused]);
  out += "\n";
  return out;
}

}  // namespace luwu::sim
