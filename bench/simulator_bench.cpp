// How fast the simulator is: wall time and simulated activities (flows + kernels) per second for
//   GPT-3 175B, ZeRO-3, 8 single-GPU workers (luwu-star, detailed collectives)   target < 1 s
//   GPT-3 1.3B, ZeRO-3, 1,024 GPUs on a fat-tree (coarse collectives)           target < 60 s
// Memory feasibility is not checked: these time the engine, not the configuration.
#include <chrono>
#include <cstdio>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;

namespace {

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
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double activities = static_cast<double>(r.simulated_flows + r.simulated_kernels);
  std::printf("%-48s wall %8.3f s (target < %g s)  simulated iteration %9.3f s  flows %10llu  kernels %8llu  %10.0f activities/s\n",
              name, wall, target_s, r.iteration_time_s, static_cast<unsigned long long>(r.simulated_flows),
              static_cast<unsigned long long>(r.simulated_kernels), activities / wall);
  std::printf("{\"bench\": \"%s\", \"wall_s\": %.6f, \"iteration_time_s\": %.9g, \"flows\": %llu, \"kernels\": %llu, \"activities_per_s\": %.1f}\n",
              name, wall, r.iteration_time_s, static_cast<unsigned long long>(r.simulated_flows),
              static_cast<unsigned long long>(r.simulated_kernels), activities / wall);
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
  return 0;
}
