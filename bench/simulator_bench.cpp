// How fast the simulator is: wall time and simulated activities (flows + kernels) per second for
//   GPT-3 175B, ZeRO-3, 8 single-GPU workers (luwu-star, detailed collectives)   target < 1 s
//   GPT-3 1.3B, ZeRO-3, 1,024 GPUs on a fat-tree (coarse collectives)           target < 60 s
//   the paper scenario (scenarios/luwu-paper-175b-8w.json), each system, every
//   rank simulated (the engine's speed, without the scenario's folding)          target < 2 s
//   the paper scenario as `luwusim run` runs it (systems side by side, 2 of the
//   8 ranks simulated for all: its simulation.fold_data_parallel)                target < 0.5 s
// Memory feasibility is not checked: these time the engine, not the configuration.
#include <chrono>
#include <cstdio>

#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/sweep_runner.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;

namespace {

void report(const std::string& name, double wall, double target_s, const sim::SystemResult& r) {
  double activities = static_cast<double>(r.simulated_flows + r.simulated_kernels);
  std::printf("%-48s wall %8.3f s (target < %g s)  simulated iteration %9.3f s  flows %10llu  kernels %8llu  %10.0f activities/s\n",
              name.c_str(), wall, target_s, r.iteration_time_s, static_cast<unsigned long long>(r.simulated_flows),
              static_cast<unsigned long long>(r.simulated_kernels), activities / wall);
  std::printf("{\"bench\": \"%s\", \"wall_s\": %.6f, \"iteration_time_s\": %.9g, \"flows\": %llu, \"kernels\": %llu, \"activities_per_s\": %.1f}\n",
              name.c_str(), wall, r.iteration_time_s, static_cast<unsigned long long>(r.simulated_flows),
              static_cast<unsigned long long>(r.simulated_kernels), activities / wall);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void bench(const char* name, const std::string& model, int micro_batch, const topologies::Topology& topo,
           sim::CollectiveMode mode, double target_s) {
  workloads::TrainingConfig training;
  training.micro_batch = micro_batch;
  training.seq_len = 2048;
  training.recompute = true;
  auto trace = workloads::generate_trace(*workloads::find_catalog_model(model), training);
  auto zero3 = sim::system_named("zero3");
  sim::SimulationOptions options;
  options.mode = mode;
  options.check_memory = false;
  auto start = std::chrono::steady_clock::now();
  auto r = sim::simulate_system(trace, topo, sim::hardware_of(topo), *zero3, options);
  report(name, seconds_since(start), target_s, r);
}

// Each system of a scenario that runs there (the others would only be judged, not simulated).
void bench_scenario(const std::string& file, double target_s) {
  const auto scenario = sim::load_scenario(file);
  const auto trace = workloads::generate_trace(scenario.model, scenario.training);
  for (const auto& system : scenario.systems) {
    if (!system->fit(trace, scenario.hardware).runs()) continue;
    sim::SimulationOptions options;
    options.mode = scenario.collective_mode();
    auto start = std::chrono::steady_clock::now();
    auto r = sim::simulate_system(trace, scenario.topology, scenario.hardware, *system, options);
    report(scenario.name + " " + system->label() + " (all ranks)", seconds_since(start), target_s, r);
  }
}

// The whole scenario as `luwusim run` runs it: every system judged, those that run simulated side
// by side (RunOptions::jobs, one per CPU).
void bench_whole_scenario(const std::string& file, double target_s) {
  const auto scenario = sim::load_scenario(file);
  sim::RunOptions options;
  options.jobs = sim::default_jobs();
  auto start = std::chrono::steady_clock::now();
  const auto run = sim::run_scenario(scenario, options);
  const double wall = seconds_since(start);
  std::printf("%-48s wall %8.3f s (target < %g s)  %d jobs\n", (scenario.name + " (run)").c_str(), wall, target_s,
              options.jobs);
  std::printf("{\"bench\": \"%s (run)\", \"wall_s\": %.6f, \"jobs\": %d}\n", scenario.name.c_str(), wall,
              options.jobs);
  for (const auto& r : run.results)
    if (r.feasible) std::printf("  %-20s simulated iteration %9.3f s\n", r.system.c_str(), r.iteration_time_s);
}

}  // namespace

int main() {
  topologies::LuwuStarParams star;
  star.workers = 8;
  bench("gpt3-175b zero3 8 workers (detailed)", "gpt3-175b", 1, topologies::build_luwu_star(star),
        sim::CollectiveMode::Detailed, 1.0);

  topologies::FatTreeParams tree;
  tree.servers = 128;
  tree.gpus_per_server = 8;
  tree.tiers = 2;
  tree.leaf_down_ports = 32;
  bench("gpt3-1.3b zero3 1024 GPUs fat-tree (coarse)", "gpt3-1.3b", 1, topologies::build_fat_tree(tree),
        sim::CollectiveMode::Coarse, 60.0);

  bench_scenario(LUWUSIM_SOURCE_DIR "/scenarios/luwu-paper-175b-8w.json", 2.0);
  bench_whole_scenario(LUWUSIM_SOURCE_DIR "/scenarios/luwu-paper-175b-8w.json", 0.5);
  return 0;
}
