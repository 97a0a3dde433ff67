// How the simulator's cost grows with the cluster: for each system, the wall time of one simulated
// iteration at several worker counts, and the exponent k of wall = c * N^k fitted by least squares
// on the logarithms.  A system whose wall grows as N^1 costs the same per GPU at any size; the
// ring collectives of detailed mode alone would make it N^2 (coarse mode, the default here and
// `run`'s auto mode past 64 GPUs, keeps one flow per rank and collective).
//
//   scaling_bench [--quick] [--workers 64,128,...] [--systems ddp,zero3,...] [--model gpt3-125m]
//                 [--mode coarse|detailed] [--max-wall-s 120] [--fold K] [--fat-tree] [--settings JSON]
//                 [--layers 2500,5000,...]
//
// --layers sweeps the model's depth instead of the cluster: the model (its width, heads, vocabulary)
// with that many blocks, on the first --workers value (default 8); k is then the exponent in the
// layers (a schedule whose actors keep per-layer state alive grows past 1 here).
//
// --fold K simulates K ranks of the N in the systems that fold (SimulationOptions::
// fold_data_parallel; K a multiple of 48 past 48 workers, so whole racks are simulated); the others
// run every rank.  --fat-tree runs on a fat-tree (2 tiers, 3 past 2,048) of single-GPU servers (Tofinos, 100 Gb/s
// NICs, an NVMe SSD each) instead: no optimizer node or aggregating switch, so for the systems
// that need neither.  --settings gives every system those of its settings it has (sim::system_named),
// e.g. '{"ps_placement": "dedicated"}' for ATP's servers.
//
// Every system runs on the same luwu-star cluster (one GPU per worker host; past 48 workers, racks of
// at most 48 under top-of-rack Tofinos trunked to the cluster Tofino, which a Tofino's 64 ports
// need; an optimizer node, an NVMe SSD per worker, and one parameter-server machine per 8 workers,
// at most 16, for the systems that use them; past 2,048 workers the racks no longer fit the cluster
// switch's ports and go into pods of at most 43 racks, each pod switch trunked up by its other 21
// ports), GPT-3 125M at micro-batch 1 and sequence 512, memory feasibility not
// checked: these time the engine, not the configuration.  A system stops growing once one run
// takes longer than --max-wall-s, so the whole bench stays within minutes.  Prints a table, then
// one JSON line per run and per system (its exponent).  Wall times are of simulate_system alone
// (the forked simulation process: lowering, the run, the result), not of the trace or topology.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;

namespace {

struct Options {
  std::vector<int> workers = {64, 128, 256, 512, 1024};
  std::vector<std::string> systems = {"ddp",      "onebit-adam", "zero3",           "zero++",
                                      "zero-offload", "zero-infinity", "switchml", "atp",
                                      "parameter-server", "luwu"};
  std::string model = "gpt3-125m";
  sim::CollectiveMode mode = sim::CollectiveMode::Coarse;
  double max_wall_s = 120;
  int fold = 0;
  bool fat_tree = false;
  Json settings = Json::object();
  std::vector<int> layers;  // non-empty: sweep the depth, not the workers
  bool workers_given = false;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--quick") {
      o.workers = {16, 32, 64, 128};
      o.max_wall_s = 20;
    } else if (arg == "--workers") {
      o.workers.clear();
      o.workers_given = true;
      for (const auto& w : split(value())) o.workers.push_back(std::stoi(w));
    } else if (arg == "--systems") {
      o.systems = split(value());
    } else if (arg == "--model") {
      o.model = value();
    } else if (arg == "--mode") {
      const std::string mode = value();
      if (mode != "coarse" && mode != "detailed") throw std::invalid_argument("--mode is coarse or detailed");
      o.mode = mode == "coarse" ? sim::CollectiveMode::Coarse : sim::CollectiveMode::Detailed;
    } else if (arg == "--max-wall-s") {
      o.max_wall_s = std::stod(value());
    } else if (arg == "--fold") {
      o.fold = std::stoi(value());
    } else if (arg == "--fat-tree") {
      o.fat_tree = true;
    } else if (arg == "--settings") {
      o.settings = Json::parse(value());
    } else if (arg == "--layers") {
      for (const auto& l : split(value())) o.layers.push_back(std::stoi(l));
    } else {
      throw std::invalid_argument("unknown argument " + arg +
                                  " (scaling_bench [--quick] [--workers N,N,...] [--systems a,b,...] [--model M] "
                                  "[--mode coarse|detailed] [--max-wall-s S] [--fold K] [--fat-tree] [--settings JSON] "
                                  "[--layers L,L,...])");
    }
  }
  return o;
}

struct Fit {
  double exponent = NAN;  // k
  double coefficient_s = NAN;  // c, the wall at N = 1 by the fit
};

// Least squares of log(wall) = log(c) + k log(N).
Fit fit_power_law(const std::vector<int>& n, const std::vector<double>& wall) {
  Fit f;
  const std::size_t m = n.size();
  if (m < 2) return f;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double x = std::log(static_cast<double>(n[i])), y = std::log(wall[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double denominator = static_cast<double>(m) * sxx - sx * sx;
  if (denominator == 0) return f;
  f.exponent = (static_cast<double>(m) * sxy - sx * sy) / denominator;
  f.coefficient_s = std::exp((sy - f.exponent * sx) / static_cast<double>(m));
  return f;
}

struct SystemRuns {
  std::string system;
  std::vector<int> workers;  // the x of each run done: workers, or layers with --layers
  std::vector<double> wall_s;
  std::vector<unsigned long long> activities;  // flows + kernels
  std::string stopped;                         // why it did not reach the largest N, if it did not
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  workloads::TrainingConfig training;
  training.micro_batch = 1;
  training.seq_len = 512;
  training.recompute = true;
  const auto* model = workloads::find_catalog_model(o.model);
  if (model == nullptr) {
    std::fprintf(stderr, "unknown model %s\n", o.model.c_str());
    return 2;
  }
  const bool by_depth = !o.layers.empty();
  const std::vector<int> points = by_depth ? o.layers : o.workers;  // the x of each run
  const int depth_workers = o.workers_given ? o.workers.front() : 8;
  // The trace of each run's model, generated once before anything is timed: the model itself, or
  // (--layers) the model with each depth.
  std::vector<workloads::Trace> traces;
  for (int x : by_depth ? points : std::vector<int>{model->layers}) {
    workloads::ModelConfig deeper = *model;
    deeper.layers = x;
    traces.push_back(workloads::generate_trace(deeper, training));
  }

  // Racks and parameter servers that fit a 64-port Tofino's ports up to 2,048 workers (43 racks, the
  // optimizer node and 16 servers on the cluster switch).
  constexpr int kWorkersPerRack = 48, kMaxParameterServers = 16, kRacksPerPod = 43, kTrunksPerPod = 64 - kRacksPerPod;
  std::vector<SystemRuns> all;
  for (const auto& name : o.systems) {
    SystemRuns runs{name, {}, {}, {}, {}};
    const auto system = sim::system_named(name, o.settings);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const int x = points[i];
      const int n = by_depth ? depth_workers : x;
      topologies::LuwuStarParams star;
      star.workers = n;
      star.racks = (n + kWorkersPerRack - 1) / kWorkersPerRack;
      star.parameter_servers = std::clamp(n / 8, 1, kMaxParameterServers);
      if (n > 2048) {
        star.pods = (star.racks + kRacksPerPod - 1) / kRacksPerPod;
        star.trunks_per_pod = kTrunksPerPod;
      }
      topologies::FatTreeParams tree;
      tree.servers = n;
      tree.gpus_per_server = 1;
      tree.gpus_per_pcie_switch = 1;
      tree.nvme_per_server = 1;
      tree.tiers = n > 2048 ? 3 : 2;  // 64-port Tofinos: 2 tiers reach 2,048 NICs
      topologies::Topology topo;
      try {
        topo = o.fat_tree ? topologies::build_fat_tree(tree) : topologies::build_luwu_star(star);
      } catch (const std::invalid_argument& e) {
        runs.stopped = "no cluster of " + std::to_string(n) + " workers: " + e.what();
        break;
      }
      sim::SimulationOptions options;
      options.mode = o.mode;
      options.check_memory = false;
      options.fold_data_parallel = o.fold > 0 && o.fold < n ? o.fold : 0;
      const auto start = std::chrono::steady_clock::now();
      sim::SystemResult r;
      try {
        const auto& trace = traces[by_depth ? i : 0];
        r = sim::simulate_system(trace, topo, sim::hardware_of(topo), *system, options);
      } catch (const std::exception& e) {
        runs.stopped = "failed at " + std::to_string(n) + " workers: " + e.what();
        break;
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!r.feasible) {
        runs.stopped = "does not run at " + std::to_string(n) + " workers: " + r.reason;
        break;
      }
      const unsigned long long activities = r.simulated_flows + r.simulated_kernels;
      runs.workers.push_back(x);
      runs.wall_s.push_back(wall);
      runs.activities.push_back(activities);
      std::printf("{\"bench\": \"scaling\", \"system\": \"%s\", \"workers\": %d, \"layers\": %d, \"wall_s\": %.4f, \"mode\": \"%s\", "
                  "\"iteration_time_s\": %.9g, \"flows\": %llu, \"kernels\": %llu, \"simulated_ranks\": %d}\n",
                  name.c_str(), n, by_depth ? x : model->layers, wall, options.mode == sim::CollectiveMode::Detailed ? "detailed" : "coarse",
                  r.iteration_time_s, static_cast<unsigned long long>(r.simulated_flows),
                  static_cast<unsigned long long>(r.simulated_kernels), r.folding ? r.folding->simulated : n);
      std::fflush(stdout);
      if (wall > o.max_wall_s) {
        if (x != points.back())
          runs.stopped = "stopped after " + std::to_string(x) + (by_depth ? " layers" : " workers") + " (over --max-wall-s)";
        break;
      }
    }
    all.push_back(std::move(runs));
  }

  if (by_depth)
    std::printf("\nwall time of one simulated iteration (s), %s with L layers, %d workers, micro-batch 1, sequence 512; "
                "k: wall ~ L^k\n",
                o.model.c_str(), depth_workers);
  else
    std::printf("\nwall time of one simulated iteration (s), %s, micro-batch 1, sequence 512; k: wall ~ N^k\n",
                o.model.c_str());
  std::printf("%-18s", "system");
  for (int x : points) std::printf(" %9d", x);
  std::printf(" %7s\n", "k");
  for (const auto& runs : all) {
    std::printf("%-18s", runs.system.c_str());
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (i < runs.wall_s.size())
        std::printf(" %9.3f", runs.wall_s[i]);
      else
        std::printf(" %9s", "-");
    }
    const Fit f = fit_power_law(runs.workers, runs.wall_s);
    std::printf(" %7.2f%s%s\n", f.exponent, runs.stopped.empty() ? "" : "  ", runs.stopped.c_str());
  }
  std::printf("(collectives in %s mode)\n\n", o.mode == sim::CollectiveMode::Detailed ? "detailed" : "coarse");
  for (const auto& runs : all) {
    const Fit f = fit_power_law(runs.workers, runs.wall_s);
    std::printf("{\"bench\": \"scaling-fit\", \"system\": \"%s\", \"axis\": \"%s\", \"exponent\": %.4f, "
                "\"coefficient_s\": %.6g, \"points\": %zu, \"largest_%s\": %d, \"largest_wall_s\": %.4f}\n",
                runs.system.c_str(), by_depth ? "layers" : "workers", f.exponent, f.coefficient_s, runs.workers.size(),
                by_depth ? "layers" : "workers", runs.workers.empty() ? 0 : runs.workers.back(), runs.wall_s.empty() ? 0.0 : runs.wall_s.back());
  }
  return 0;
}
