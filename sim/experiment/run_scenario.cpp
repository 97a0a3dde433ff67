#include "sim/experiment/run_scenario.hpp"

#include <algorithm>
#include <deque>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "common/csv.hpp"
#include "common/input_error.hpp"
#include "common/units.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/experiment/cluster_cost.hpp"
#include "sim/experiment/simulate.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/stage_trace.hpp"

namespace luwu::sim {
namespace {

// "$1,234,567" (whole dollars).
std::string dollars(double usd) {
  std::string digits = fmt::format("{:.0f}", usd), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return "$" + out;
}

}  // namespace

namespace {

// Folded, a system simulates fold_data_parallel of every data-parallel group's ranks.
long double simulated_gpus(const Scenario& scenario) {
  const long double fold =
      scenario.fold_data_parallel > 0 ? static_cast<long double>(scenario.layout.data) / scenario.fold_data_parallel : 1;
  return static_cast<long double>(scenario.topology.gpus().size()) / fold;
}

}  // namespace

namespace {

// Whether the fold puts back the left-out ranks' load on the links they share (fold_share.hpp) for
// every system of the scenario that folds.
bool fold_loads_shared_links(const Scenario& scenario) {
  for (const auto& system : scenario.systems)
    if (system->folds_data_parallel() && !system->fold_loads_rings()) return false;
  return true;
}

// Where the fold leaves out load the network would share (empty: nowhere).
std::string fold_network_inexactness(const Scenario& scenario) {
  const luwu::Json& c = scenario.cluster;
  const std::string topology = c.is_object() && c.contains("topology") && c.at("topology").is_string()
                                   ? c.at("topology").get<std::string>()
                                   : "";
  auto number = [&](const char* key, double otherwise) {
    return c.is_object() && c.contains(key) && c.at(key).is_number() ? c.at(key).get<double>() : otherwise;
  };
  if (topology == "fat-tree") {
    if (number("oversubscription", 1) > 1)
      return "the leaves' uplinks are oversubscribed: the ranks left out would share them";
    if (scenario.routing != topologies::RouteChoice::Spray)
      return "ECMP (or single-path) routing puts the whole group's flows on shared spine links, which the ranks left "
             "out would load (folds without that load measured 15-59% fast); \"routing\": \"spray\" makes the fold exact";
    return "";
  }
  if (topology == "luwu-star" && number("racks", 1) > 1)
    return "the racks' trunks carry flows of the ranks left out (ring steps between racks, pipeline transfers)";
  if (topology == "wan") return "the wide-area links carry flows of the ranks left out";
  if (topology != "luwu-star" && topology != "dgx") return "a network whose shared links luwusim cannot judge";
  return "";
}

// PAT's and the tree's partners are not ring neighbours: a folded group runs them as coarse
// stand-ins (collectives.hpp), on any network.
std::string fold_algorithm_inexactness(const Scenario& scenario) {
  for (const auto& system : scenario.systems) {
    const CollectiveAlgorithm a = system->collectives().algorithm;
    if (system->folds_data_parallel() && (a == CollectiveAlgorithm::Pat || a == CollectiveAlgorithm::Tree ||
                                          a == CollectiveAlgorithm::Auto))
      return system->label() + "'s " + (a == CollectiveAlgorithm::Pat ? "PAT" : a == CollectiveAlgorithm::Tree ? "tree" : "auto") +
             " collectives, whose partners are not ring neighbours, run folded as one flow to the first partner "
             "(ZeRO-Infinity's PAT measured 28% fast on a sprayed fat-tree at data parallelism 8)";
  }
  return "";
}

}  // namespace

bool fold_needs_shared_link_load(const Scenario& scenario) {
  return scenario.fold_data_parallel > 0 && scenario.fold_data_parallel < scenario.layout.data &&
         !fold_network_inexactness(scenario).empty();
}

std::string fold_inexactness(const Scenario& scenario) {
  if (scenario.fold_data_parallel <= 0 || scenario.fold_data_parallel >= scenario.layout.data) return "";
  std::string network = fold_network_inexactness(scenario);
  if (!network.empty())
    network += fold_loads_shared_links(scenario)
                   ? " (the fold puts the left-out ranks' ring flows back on those links as a static share, "
                     "sim/engine/fold_share.hpp: measured within 0.4% of the unfolded run with 13B-175B models "
                     "on 256-1,024 GPUs, pipeline stages included, but -3.7% to +4.3% elsewhere: ranks drift apart, "
                     "and pipeline transfers on shared rack trunks are not put back)"
                   : " (a fold puts that load back only for systems that send nothing but ring collectives "
                     "between servers)";
  const std::string algorithms = fold_algorithm_inexactness(scenario);
  return network.empty() ? algorithms : algorithms.empty() ? network : network + "; and " + algorithms;
}

void check_fold_exactness(const Scenario& scenario) {
  const std::string inexact = fold_inexactness(scenario);
  if (inexact.empty() || scenario.allow_inexact_fold) return;
  throw InputError(scenario.file, "$.simulation.fold_data_parallel",
                   "this fold would not be exact, and a folded result here is not the whole group's: " + inexact +
                       ". Simulate every rank (remove fold_data_parallel), or take the folded result knowingly "
                       "with \"simulation\": {\"allow_inexact_fold\": true} (it is then marked not exact)");
}

void check_expert_parallel(const Scenario& scenario, const std::vector<SystemPtr>& systems) {
  if (scenario.layout.expert < 2) return;
  if (scenario.fold_data_parallel > 0)
    throw InputError(scenario.file, "$.simulation.fold_data_parallel",
                     "expert parallelism's all-to-alls run over every rank of an expert-parallel group; a folded "
                     "data-parallel group simulates only some of them: simulate every rank (remove fold_data_parallel)");
  for (const auto& system : systems.empty() ? scenario.systems : systems)
    if (!system->supports_expert_parallel())
      throw InputError(scenario.file, "$.parallelism.expert",
                       "expert parallelism is simulated under ddp only: " + system->label() + " (" + system->name() +
                           ") would reduce the experts' gradients over the whole data-parallel group, not over the " +
                           "ranks holding the same experts; run it without \"expert\", or leave it out (--system)");
}

SimulationCostEstimate estimate_simulation_cost(const Scenario& scenario) {
  SimulationCostEstimate e;
  e.gpus = simulated_gpus(scenario);
  // Every rank replays every kernel of its trace: one micro-batch's, grad_accum times, per GPU.
  workloads::TrainingConfig one_micro_batch = scenario.training;
  one_micro_batch.grad_accum = 1;
  long double kernels_per_micro_batch = 0, ops_per_micro_batch = 0;
  if (scenario.trace) {
    kernels_per_micro_batch = static_cast<long double>(scenario.trace->kernel_count()) / scenario.training.grad_accum;
    ops_per_micro_batch = static_cast<long double>(scenario.trace->ops.size()) / scenario.training.grad_accum;
  } else if (scenario.layout.whole_model_per_gpu()) {
    const auto trace = workloads::generate_trace(scenario.model, one_micro_batch);
    kernels_per_micro_batch = static_cast<long double>(trace.kernel_count());
    ops_per_micro_batch = static_cast<long double>(trace.ops.size());
  } else {
    // The stages' GPUs: a stage's kernels on each of its tensor x data GPUs, averaged over stages;
    // every stage's trace held.  (An interleaved layout needs its micro-batches in groups of the
    // stages: one group stands for grad_accum / pipeline of them.)
    workloads::TrainingConfig group = one_micro_batch;
    if (scenario.layout.interleaved()) group.grad_accum = scenario.layout.pipeline;
    for (int p = 0; p < scenario.layout.pipeline; ++p) {
      const auto stage = workloads::generate_stage_trace(scenario.model, group, scenario.layout, p);
      kernels_per_micro_batch += static_cast<long double>(stage.kernel_count()) / group.grad_accum;
      ops_per_micro_batch += static_cast<long double>(stage.ops.size()) / group.grad_accum;
    }
    kernels_per_micro_batch /= scenario.layout.pipeline;
  }
  e.kernels = kernels_per_micro_batch * scenario.training.grad_accum * e.gpus;
  e.trace_ops = ops_per_micro_batch * scenario.training.grad_accum;
  e.seconds = e.kernels * kSecondsPerReplayedKernel;
  e.bytes = e.gpus * kBytesPerSimulatedGpu + e.trace_ops * kBytesPerTraceOp;
  return e;
}

void check_simulation_budget(const Scenario& scenario) {
  const long double gpus = simulated_gpus(scenario);  // checked before any trace is generated
  if (gpus > kMaxSimulatedGpus)
    throw InputError(scenario.file, scenario.fold_data_parallel > 0 ? "$.simulation.fold_data_parallel" : "$.cluster",
                     fmt::format("{} GPUs to simulate: luwusim simulates at most {} GPUs in one process{}",
                                 static_cast<double>(gpus), kMaxSimulatedGpus,
                                 scenario.fold_data_parallel > 0 ? "" : " (simulation.fold_data_parallel folds them)"));
  const SimulationCostEstimate e = estimate_simulation_cost(scenario);
  const std::string estimate = fmt::format(
      "{:.3g} kernels to replay on {} simulated GPUs ({:.3g} per micro-batch x grad_accum {}) and {:.3g} trace ops to "
      "hold: an estimated {} and {} of memory",
      static_cast<double>(e.kernels), static_cast<double>(e.gpus),
      static_cast<double>(e.kernels / (e.gpus * scenario.training.grad_accum)), scenario.training.grad_accum,
      static_cast<double>(e.trace_ops), units::seconds(static_cast<double>(e.seconds)), units::bytes(static_cast<double>(e.bytes)));
  if (e.seconds > kMaxEstimatedSimulationSeconds || e.bytes > kMaxEstimatedSimulationBytes)
    throw InputError(scenario.file, "$.training.grad_accum",
                     estimate + fmt::format(", over the budget of {} and {} (docs/performance.md, \"The simulation "
                                            "budget\"); fold the data-parallel groups (simulation.fold_data_parallel) "
                                            "or simulate fewer micro-batches",
                                            units::seconds(static_cast<double>(kMaxEstimatedSimulationSeconds)),
                                            units::bytes(static_cast<double>(kMaxEstimatedSimulationBytes))));
}

namespace {

// How many of a data-parallel group's ranks share a server: Megatron's order puts a group's
// members `tensor` ranks apart.
int data_parallel_per_server(const Scenario& scenario) {
  const int g = std::max(1, scenario.hardware.gpus_per_server), t = scenario.layout.tensor;
  if (t >= g) return 1;
  return std::max(1, std::min(scenario.layout.data, g / t));
}

}  // namespace

DetailedFlowEstimate estimate_detailed_flows(const Scenario& scenario, const System& system) {
  return estimate_detailed_flows(scenario, system, scenario_stage_traces(scenario));
}

DetailedFlowEstimate estimate_detailed_flows(const Scenario& scenario, const System& system,
                                             const std::vector<workloads::Trace>& stages) {
  const bool model_parallel = !scenario.layout.whole_model_per_gpu();
  DataParallelGroupShape shape;
  shape.ranks = model_parallel ? scenario.layout.data : static_cast<int>(scenario.topology.gpus().size());
  shape.per_server = model_parallel ? data_parallel_per_server(scenario) : std::max(1, scenario.hardware.gpus_per_server);
  if (shape.ranks % shape.per_server != 0) shape.per_server = 0;  // uneven servers
  const int fold = scenario.fold_data_parallel;
  shape.simulated = system.folds_data_parallel() && fold > 0 && fold < shape.ranks ? fold : shape.ranks;
  const CollectiveAlgorithm algorithm = system.collectives().algorithm;
  DetailedFlowEstimate e;
  // Each stage's calls in each of its `tensor` groups (one trace, one group, without model parallelism).
  const long double groups = model_parallel ? scenario.layout.tensor : 1;
  for (const auto& trace : stages)
    for (const CollectiveCall& call : system.collective_calls(trace)) {
      e.collectives += groups * call.count;
      e.detailed_flows += groups * flows_of_call(call, algorithm, CollectiveMode::Detailed, shape);
      e.coarse_flows += groups * flows_of_call(call, algorithm, CollectiveMode::Coarse, shape);
    }
  return e;
}

void check_detailed_budget(const Scenario& scenario, long double max_flows, const std::vector<SystemPtr>& systems) {
  if (scenario.mode != ModeChoice::Detailed) return;
  const std::vector<workloads::Trace> stages = scenario_stage_traces(scenario);  // once, for every system
  for (const auto& system : systems.empty() ? scenario.systems : systems) {
    const DetailedFlowEstimate e = estimate_detailed_flows(scenario, *system, stages);
    if (e.detailed_flows <= max_flows) continue;
    throw InputError(scenario.file, "$.simulation.mode",
                     fmt::format("detailed collectives would simulate about {:.3g} flows for {} ({:.0f} data-parallel "
                                 "collectives as it runs them), over the budget of {:.3g}; coarse mode simulates about "
                                 "{:.3g} (--mode coarse, or simulation.mode \"coarse\"), or --force runs it detailed anyway",
                                 static_cast<double>(e.detailed_flows), system->label(),
                                 static_cast<double>(e.collectives), static_cast<double>(max_flows),
                                 static_cast<double>(e.coarse_flows)));
  }
}

ScenarioRun run_scenario(const Scenario& scenario, const RunOptions& options) {
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  std::vector<SystemPtr> systems;
  for (const auto& s : scenario.systems) {
    bool wanted = options.only_systems.empty() ||
                  std::find_if(options.only_systems.begin(), options.only_systems.end(), [&](const std::string& o) {
                    return o == s->label() || o == s->name();
                  }) != options.only_systems.end();
    if (wanted) systems.push_back(s);
  }
  if (systems.empty()) {
    std::string asked, have;
    for (const auto& o : options.only_systems) asked += (asked.empty() ? "" : ", ") + o;
    for (const auto& s : scenario.systems)
      have += (have.empty() ? "" : ", ") + s->label() + (s->label() == s->name() ? "" : " (" + s->name() + ")");
    throw std::invalid_argument("--system " + asked + ": no system of the scenario is called so; its systems are " + have +
                                " (a label, or a kind in parentheses, selects)");
  }

  check_simulation_budget(scenario);
  check_fold_exactness(scenario);
  check_expert_parallel(scenario, systems);
  if (!options.force)
    check_detailed_budget(scenario, options.max_detailed_flows > 0 ? options.max_detailed_flows : kMaxDetailedFlows,
                          systems);
  const workloads::ParallelLayout& layout = scenario.layout;
  say(scenario.trace ? "replaying the trace " + scenario.trace_file + " (" + scenario.model.name + ")"
      : layout.whole_model_per_gpu()
          ? "generating the trace of " + scenario.model.name
          : fmt::format("generating the traces of {}'s {} pipeline stages", scenario.model.name, layout.pipeline));
  std::optional<workloads::KernelTimesReport> kernel_times;
  const std::vector<workloads::Trace> stages = scenario_stage_traces(scenario, &kernel_times);
  const workloads::Trace& trace = stages.front();
  ParallelWorkload workload{layout, {}};
  double flops_per_gpu = 0;
  for (const auto& stage : stages) {
    workload.stages.push_back(&stage);
    flops_per_gpu += stage.flops_per_iteration() / layout.pipeline;
  }
  std::uint64_t model_params = 0;  // the whole model's, not one stage's
  for (const auto& layer : workloads::layer_infos(scenario.model, scenario.training)) model_params += layer.params;
  if (kernel_times) say(workloads::kernel_times_summary(*kernel_times));
  const Hardware& hardware = scenario.hardware;
  const int workers = static_cast<int>(scenario.topology.gpus().size());
  SimulationOptions sim_options{scenario.collective_mode(), options.record_timeline};
  sim_options.routing = scenario.routing;
  sim_options.flow_splitting = scenario.flow_splitting;
  sim_options.fold_data_parallel = scenario.fold_data_parallel;
  sim_options.fold_shares_links = fold_needs_shared_link_load(scenario);
  sim_options.timeline_counter_points = options.timeline_counter_points;

  ScenarioRun run;
  run.summary = {{"name", scenario.name},
                 {"description", scenario.description},
                 {"model", scenario.model.name},
                 {"params", layout.whole_model_per_gpu() ? trace.total_params() : model_params},
                 {"workers", workers},
                 {"gpu", hardware.gpu.name},
                 {"micro_batch", scenario.training.micro_batch},
                 {"seq_len", scenario.training.seq_len},
                 {"grad_accum", scenario.training.grad_accum},
                 {"recompute", scenario.training.recompute},
                 {"dtype", workloads::to_string(scenario.training.dtype)},
                 {"tokens_per_iteration", trace.tokens_per_iteration() * layout.data},
                 {"flops_per_iteration_per_gpu", flops_per_gpu},
                 {"cluster", scenario.cluster},
                 {"collective_mode", sim_options.mode == CollectiveMode::Detailed ? "detailed" : "coarse"},
                 {"routing", scenario.routing == topologies::RouteChoice::EcmpHash ? "ecmp"
                             : scenario.routing == topologies::RouteChoice::Spray  ? "spray"
                                                                                   : "single-path"}};
  if (scenario.flow_splitting > 1) run.summary["flow_splitting"] = scenario.flow_splitting;
  if (scenario.prices_by_default) run.summary["prices_by_default"] = true;  // no "prices" in the scenario
  if (scenario.fold_data_parallel > 0) {
    run.summary["folding"] = {{"data_parallel", layout.data}, {"simulated_data_parallel", scenario.fold_data_parallel}};
    const std::string inexact = fold_inexactness(scenario);
    run.summary["folding"]["exact"] = inexact.empty();
    if (!inexact.empty()) run.summary["folding"]["not_exact_because"] = inexact;
  }
  if (scenario.trace) run.summary["trace"] = scenario.trace_file;
  if (!layout.whole_model_per_gpu()) run.summary["parallelism"] = workloads::layout_to_json(layout);
  if (kernel_times) run.summary["kernel_times"] = workloads::kernel_times_to_json(*kernel_times);
  // Up to options.jobs systems' processes run at once; results are taken in the systems' order.
  const std::size_t jobs = static_cast<std::size_t>(std::max(1, options.jobs));
  std::deque<SystemSimulation> in_flight;
  auto finish_oldest = [&] {
    const auto& s = systems[run.results.size()];
    SystemResult r = in_flight.front().finish();
    in_flight.pop_front();
    if (scenario.prices)
      r.cost = cost_to_json(cluster_cost(scenario.topology, *scenario.prices, {s->uses_worker_ssds(), s->uses_optimizer_node(), s->uses_parameter_servers()}),
                            r.feasible ? r.tokens_per_s : 0);
    run.results.push_back(std::move(r));
  };
  for (std::size_t i = 0; i < systems.size(); ++i) {
    if (in_flight.size() == jobs) finish_oldest();
    say(fmt::format("[{}/{}] simulating {}", i + 1, systems.size(), systems[i]->label()));
    in_flight.push_back(start_parallel_system(workload, scenario.topology, hardware, *systems[i], sim_options));
  }
  while (!in_flight.empty()) finish_oldest();
  return run;
}

luwu::Json run_to_json(const ScenarioRun& run) {
  luwu::Json results = luwu::Json::array();
  for (const auto& r : run.results) results.push_back(result_to_json(r));
  return {{"scenario", run.summary}, {"results", results}};
}

const std::vector<std::string>& scenario_csv_columns() {
  static const std::vector<std::string> columns = {"name",      "model", "params",     "workers",
                                                   "gpu",       "micro_batch", "seq_len", "grad_accum",
                                                   "recompute", "dtype", "tokens_per_iteration", "collective_mode"};
  return columns;
}

const std::vector<std::string>& cluster_csv_columns() {
  static const std::vector<std::string> columns = {"topology", "network"};
  return columns;
}

std::string run_to_csv(const ScenarioRun& run) {
  // The scenario's model, training and cluster on every row, as in the sweep CSV ("name" is
  // "scenario" here, "workers" comes with the results).
  std::string out = "scenario";
  for (const auto& c : scenario_csv_columns())
    if (c != "name" && c != "workers") out += "," + c;
  for (const auto& c : cluster_csv_columns()) out += "," + c;
  out +=
      ",system,workers,feasible,reason,iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,"
      "compute_s,exposed_communication_s,exposed_optimizer_s,io_stall_s,host_launch_s,idle_s,"
      "sent_bytes_per_worker,received_bytes_per_worker,gpu_peak_memory_bytes,compute_stretch_s,"
      "collective_launch_wait_s";
  for (const auto& k : spine_summary_keys()) out += ",spine_" + k;
  out += ",cluster_cost_usd,tokens_per_s_per_1000_usd\n";
  for (const auto& r : run.results) {
    CsvRow row;
    row.add(run.summary.at("name"));
    for (const auto& c : scenario_csv_columns())
      if (c != "name" && c != "workers") row.add(run.summary.contains(c) ? run.summary.at(c) : luwu::Json());
    const luwu::Json& cluster = run.summary.at("cluster");
    for (const auto& c : cluster_csv_columns()) row.add(cluster.contains(c) ? cluster.at(c) : luwu::Json());
    row.add(r.system);
    row.add(luwu::Json(r.workers));
    row.add(luwu::Json(r.feasible));
    row.add(r.reason);
    auto add_cost = [&] {
      for (const char* key : {"usd", "tokens_per_s_per_1000_usd"}) {
        if (r.cost.is_object() && !r.cost.at(key).is_null()) row.add(r.cost.at(key));
        else row.add_blanks(1);
      }
    };
    if (!r.feasible) {
      row.add_blanks(15 + spine_summary_keys().size());
      add_cost();
      out += row.line();
      continue;
    }
    const double peak = r.gpu_peak_memory_bytes.empty()
                            ? 0
                            : *std::max_element(r.gpu_peak_memory_bytes.begin(), r.gpu_peak_memory_bytes.end());
    for (double v : {r.iteration_time_s, r.tokens_per_s, r.tflops_per_gpu, r.mfu, r.breakdown.compute_s,
                     r.breakdown.exposed_communication_s, r.breakdown.exposed_optimizer_s, r.breakdown.io_stall_s,
                     r.breakdown.host_launch_s, r.breakdown.idle_s, r.sent_bytes_per_worker, r.received_bytes_per_worker, peak,
                     r.contention.compute_stretch_s, r.contention.collective_launch_wait_s})
      row.add(luwu::Json(v));
    // Blank where the fabric has no tier above its leaves (a star, one switch).
    const luwu::Json spines = r.spines.empty() ? luwu::Json::object() : spines_to_json(r.spines);
    for (const auto& k : spine_summary_keys()) row.add(spines.contains(k) ? spines.at(k) : luwu::Json());
    add_cost();
    out += row.line();
  }
  return out;
}

std::string run_to_table(const ScenarioRun& run) {
  const auto& s = run.summary;
  std::ostringstream out;
  out << fmt::format("{}: {} ({} params), {} workers x {}, micro-batch {}, sequence {}, grad-accum {}, recompute {}\n",
                     s.at("name").get<std::string>(), s.at("model").get<std::string>(),
                     units::count(s.at("params").get<double>()), s.at("workers").get<int>(),
                     s.at("gpu").get<std::string>(), s.at("micro_batch").get<int>(), s.at("seq_len").get<int>(),
                     s.at("grad_accum").get<int>(), s.at("recompute").get<bool>() ? "on" : "off");
  if (s.contains("parallelism")) {
    const auto& l = s.at("parallelism");
    const int chunk_blocks = l.value("num_layers_per_virtual_pipeline_stage", 0);
    out << fmt::format("layout: tensor {} x pipeline {} ({}{}) x data {}{}\n", l.at("tensor").get<int>(),
                       l.at("pipeline").get<int>(), l.at("pipeline_schedule").get<std::string>(),
                       chunk_blocks > 0 ? fmt::format(" interleaved, chunks of {} blocks", chunk_blocks) : "",
                       l.at("data").get<int>(),
                       (l.at("sequence_parallel").get<bool>() ? std::string(", sequence parallel") : std::string()) +
                           (l.value("expert", 1) > 1 ? fmt::format(", experts over {} ranks", l.at("expert").get<int>()) : ""));
  }
  out << fmt::format("collectives simulated in {} mode", s.at("collective_mode").get<std::string>());
  if (s.contains("folding")) {
    out << fmt::format("; {} ranks of each data-parallel group of {} simulated for all of it, in the systems that fold",
                       s.at("folding").at("simulated_data_parallel").get<int>(), s.at("folding").at("data_parallel").get<int>());
    if (s.at("folding").contains("not_exact_because"))
      out << fmt::format("\nfolding is not exact here, the folded times are optimistic: {}; remove "
                         "simulation.fold_data_parallel to simulate every rank",
                         s.at("folding").at("not_exact_because").get<std::string>());
  }
  out << "\n\n";
  std::size_t w = 20;  // the system column fits the longest label
  for (const auto& r : run.results) w = std::max(w, r.system.size());
  out << fmt::format("{:<{}} {:>11} {:>12} {:>10} {:>6} | {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} | {:>10}\n",
                     "system", w, "iteration", "tokens/s", "TFLOP/s/GPU", "MFU", "compute", "exp. comm", "exp. optim",
                     "I/O stall", "host", "idle", "sent/GPU");
  double slowest = 0;
  for (const auto& r : run.results)
    if (r.feasible) slowest = std::max(slowest, r.iteration_time_s);
  for (const auto& r : run.results) {
    if (!r.feasible) {
      // The reason says it: "does not fit: ..." or "does not run: ...".
      out << fmt::format("{:<{}} {}\n", r.system, w, r.reason);
      continue;
    }
    const auto& b = r.breakdown;
    out << fmt::format("{:<{}} {:>11} {:>12.0f} {:>10.1f} {:>5.1f}% | {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} | {:>10}\n",
                       r.system, w, units::seconds(r.iteration_time_s), r.tokens_per_s, r.tflops_per_gpu, 100 * r.mfu,
                       units::seconds(b.compute_s), units::seconds(b.exposed_communication_s),
                       units::seconds(b.exposed_optimizer_s), units::seconds(b.io_stall_s),
                       units::seconds(b.host_launch_s), units::seconds(b.idle_s),
                       units::bytes(r.sent_bytes_per_worker));
  }
  // What a system gave up to fit the GPU (MemoryFootprint::fitted_by), beside the times it explains.
  bool fitted_header = false;
  for (const auto& r : run.results) {
    const std::string fitted = r.memory.is_object() ? r.memory.value("fitted_by", std::string()) : std::string();
    if (!r.feasible || fitted.empty()) continue;
    if (!fitted_header) out << "\nFitted to GPU memory:\n";
    fitted_header = true;
    out << fmt::format("  {:<{}} {}\n", r.system, w, fitted);
  }
  // What GPU-executed collectives cost the compute stream (models/gpu.hpp, sim/engine/gpu_device.hpp).
  bool contended = false;
  for (const auto& r : run.results) {
    if (!r.feasible || (r.contention.compute_stretch_s <= 0 && r.contention.collective_launch_wait_s <= 0)) continue;
    if (!contended) out << "\nGPU shared with collective kernels (per GPU):\n";
    contended = true;
    out << fmt::format("  {:<{}} compute stretched by {} ({:.1f}%); collectives waited {} for SMs to launch\n", r.system, w,
                       units::seconds(r.contention.compute_stretch_s),
                       100 * r.contention.compute_stretch_s / std::max(1e-300, r.breakdown.compute_s - r.contention.compute_stretch_s),
                       units::seconds(r.contention.collective_launch_wait_s));
  }
  // What of the exposed communication is tensor and pipeline parallelism's.
  bool model_parallel_header = false;
  for (const auto& r : run.results) {
    if (!r.feasible || !r.model_parallel) continue;
    if (!model_parallel_header)
      out << "\nTensor and pipeline parallelism (per GPU, inside exposed communication):\n";
    model_parallel_header = true;
    out << fmt::format("  {:<{}} tensor collectives {}; pipeline receives {} (bubble and transfers){}\n", r.system, w,
                       units::seconds(r.model_parallel->tensor_collectives_s),
                       units::seconds(r.model_parallel->pipeline_waits_s),
                       r.model_parallel->expert_all_to_all_s > 0
                           ? "; expert all-to-alls " + units::seconds(r.model_parallel->expert_all_to_all_s)
                           : "");
  }
  // How routing spread the traffic between leaves over the spines (fat-trees only).
  bool spines_header = false;
  for (const auto& r : run.results) {
    if (!r.feasible || r.spines.empty()) continue;
    if (!spines_header) out << "\nSpines (bytes through each; utilization of its busiest link over the iteration):\n";
    spines_header = true;
    const SpineSummary sp = summarize_spines(r.spines);
    out << fmt::format("  {:<{}} {} spines: utilization max {:.1f}%, mean {:.1f}%, min {:.1f}%; bytes max {}, mean {}, min {}; "
                       "imbalance (max/mean) {}\n",
                       r.system, w, sp.count, 100 * sp.utilization_max, 100 * sp.utilization_mean, 100 * sp.utilization_min,
                       units::bytes(sp.bytes_max), units::bytes(sp.bytes_mean), units::bytes(sp.bytes_min),
                       sp.imbalance ? fmt::format("{:.2f}", *sp.imbalance) : std::string("-"));
    if (r.spines.size() > 8) continue;  // a list that long is what --json is for
    std::string each;
    for (const auto& u : r.spines)
      each += fmt::format("{}{} {} {:.1f}%", each.empty() ? "" : ", ", u.name, units::bytes(u.bytes),
                          100 * u.busiest_link_utilization);
    out << fmt::format("  {:<{}} {}\n", "", w, each);
  }
  // What each system's cluster costs, and its throughput per dollar (cluster_cost.hpp).  A scenario
  // that names no price list gets the default one; where it prices none of the clusters, one line
  // says so instead of a line of missing prices per system.
  bool any_known = false;
  std::vector<std::string> missing_everywhere;
  for (const auto& r : run.results) {
    if (!r.cost.is_object()) continue;
    any_known = any_known || !r.cost.at("usd").is_null();
    for (const auto& u : r.cost.at("unpriced"))
      if (std::find(missing_everywhere.begin(), missing_everywhere.end(), u.get<std::string>()) == missing_everywhere.end())
        missing_everywhere.push_back(u.get<std::string>());
  }
  if (!any_known && !missing_everywhere.empty() && run.summary.value("prices_by_default", false)) {
    std::string missing;
    for (const auto& m : missing_everywhere) missing += (missing.empty() ? "" : ", ") + m;
    out << "\nCluster cost: off (the default price list has no price for " << missing
        << "; give the scenario \"prices\", a list or a file, to price it)\n";
  }
  bool priced = !any_known && run.summary.value("prices_by_default", false);  // said above
  for (const auto& r : run.results) {
    if (!any_known && run.summary.value("prices_by_default", false)) break;
    if (!r.cost.is_object()) continue;
    if (!priced) out << "\nCluster cost (price list " << r.cost.at("price_list").get<std::string>() << "):\n";
    priced = true;
    if (r.cost.at("usd").is_null()) {
      std::string missing;
      for (const auto& u : r.cost.at("unpriced")) missing += (missing.empty() ? "" : ", ") + u.get<std::string>();
      out << fmt::format("  {:<{}} unknown: no price for {}\n", r.system, w, missing);
      continue;
    }
    const auto& per = r.cost.at("tokens_per_s_per_1000_usd");
    out << fmt::format("  {:<{}} {:>12}  {}\n", r.system, w, dollars(r.cost.at("usd").get<double>()),
                       per.is_null() ? std::string("(does not run)")
                                     : fmt::format("{:.3g} tokens/s per $1,000", per.get<double>()));
  }
  // The scenario's first system's speedup over every other system that runs, as a paper reports
  // its system against the baselines; when the first does not run, every system's speedup over
  // the slowest.
  // A ratio needs two systems that run.
  const SystemResult* first = !run.results.empty() && run.results.front().feasible ? &run.results.front() : nullptr;
  const auto running = std::count_if(run.results.begin(), run.results.end(), [](const SystemResult& r) { return r.feasible; });
  bool header = false;
  for (const auto& r : run.results) {
    if (running < 2 || !r.feasible || slowest <= 0 || &r == first) continue;
    if (!header)
      out << (first ? "\n" + first->system + "'s speedup over:\n" : "\nspeedup over the slowest system that runs:\n");
    header = true;
    double x = first ? r.iteration_time_s / first->iteration_time_s : slowest / r.iteration_time_s;
    out << fmt::format("  {:<{}} {:.2f}x\n", r.system, w, x);
  }
  return out.str();
}

luwu::Json merged_timeline(const ScenarioRun& run) {
  luwu::Json events = luwu::Json::array();
  int pid_offset = 0;
  for (const auto& r : run.results) {
    if (!r.timeline.is_object()) continue;
    int max_pid = 0;
    for (auto e : r.timeline.at("traceEvents")) {
      int pid = e.at("pid").get<int>();
      max_pid = std::max(max_pid, pid);
      e["pid"] = pid + pid_offset;
      if (e.at("ph") == "M" && e.at("name") == "process_name")
        e["args"]["name"] = r.system + "/" + e["args"]["name"].get<std::string>();
      events.push_back(e);
    }
    pid_offset += max_pid;
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace luwu::sim
